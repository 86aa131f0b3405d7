"""The ``json_schema`` check's schema: bounded before it is checked; an answer checked
against it with nothing fetched, every pattern bounded, within a deadline.

When a case is saved, :func:`schema_bounded` takes its schema through::

    walked once, without recursion: ≤ EVAL_SCHEMA_MAX_DEPTH deep, ≤ EVAL_SCHEMA_MAX_NODES
      values (the case's schemas together ≤ EVAL_CASE_SCHEMA_MAX_NODES)
    ──≤ EVAL_SCHEMA_MAX_BYTES of canonical JSON──▶ references: ``$ref`` and
      ``$dynamicRef`` only ``#…``; ``$id`` only at the root (below it, it would move
      the base of the ``#…`` references under it outside the schema); ``$schema`` only
      at the root and only 2020-12's (anywhere else it would switch jsonschema to its
      stock validator, which runs patterns with Python's ``re`` and no time limit)
    ──every pattern (``pattern``, the keys of ``patternProperties``) measured and
      compiled by :mod:`~sysprompt_core.evaluations.patterns`, the case's together
      within EVAL_CASE_PATTERNS_MAX_SIZE
    ──checked against JSON Schema 2020-12's own schema──▶ a :class:`BoundedSchema`

and :func:`schema_outcome` checks an answer against it with a Draft 2020-12 validator
whose references resolve in a registry that retrieves nothing (a reference the schema
does not hold is an error, never a fetch: no socket, no file), whose patterns — of
``pattern``, ``patternProperties``, and ``additionalProperties`` and
``unevaluatedProperties``, which jsonschema runs with ``re`` — run compiled, each
within EVAL_PATTERN_TIMEOUT, and whose every keyword checks the check's deadline
(EVAL_SCHEMA_TIMEOUT).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from sysprompt_core._json import json_type
from sysprompt_core.errors import InvalidCheck
from sysprompt_core.evaluations.keys import canonical_json
from sysprompt_core.evaluations.patterns import BoundedPattern, pattern_compile, pattern_search
from sysprompt_core.extras import extra_missing
from sysprompt_core.limits import (
    EVAL_CASE_PATTERNS_MAX_SIZE,
    EVAL_CASE_SCHEMA_MAX_NODES,
    EVAL_PATTERN_TIMEOUT,
    EVAL_SCHEMA_MAX_BYTES,
    EVAL_SCHEMA_MAX_DEPTH,
    EVAL_SCHEMA_MAX_NODES,
    EVAL_SCHEMA_TIMEOUT,
)

try:
    import jsonschema
    import jsonschema.exceptions
    import jsonschema.validators
    import referencing
    import referencing.exceptions
except ModuleNotFoundError as missing:  # an agent host's install: no [evaluations]
    raise extra_missing("evaluations", missing) from missing

__all__ = ["BoundedSchema", "CaseBudget", "Outcome", "schema_bounded", "schema_outcome"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_SHOWN = 80
_REASON_MAX = 1_000
"""The longest reason a schema check gives (jsonschema's messages quote subschemas)."""


@dataclass
class CaseBudget:
    """What the checks of one case may still ask for, spent as they are parsed."""

    pattern_parts: int = EVAL_CASE_PATTERNS_MAX_SIZE
    schema_nodes: int = EVAL_CASE_SCHEMA_MAX_NODES

    def compiled(self, pattern: str, where: str) -> BoundedPattern:
        bounded = pattern_compile(pattern, where, self.pattern_parts)
        self.pattern_parts -= bounded.size
        return bounded


@dataclass(frozen=True, eq=False)
class BoundedSchema:
    """A schema that passed the bounds (without its root ``$schema``) and its patterns,
    compiled."""

    schema: Mapping[str, object] | bool
    patterns: Mapping[str, BoundedPattern] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """An answer against a schema: passed, the reason, and whether it could not be
    decided (a reference the schema does not hold)."""

    passed: bool
    reason: str
    error: bool = False


# --- When a case is saved.


def schema_bounded(schema: object, where: str, budget: CaseBudget) -> BoundedSchema:
    """``schema`` (a check's ``schema`` field, named ``where``) bounded and checked, or
    :class:`InvalidCheck` naming ``where``."""
    if not isinstance(schema, dict | bool):
        raise InvalidCheck(where, f"must be a JSON Schema (an object), got {json_type(schema)}")
    nodes = _nodes(schema, where, min(budget.schema_nodes, EVAL_SCHEMA_MAX_NODES))
    budget.schema_nodes -= nodes
    if len(canonical_json(schema).encode()) > EVAL_SCHEMA_MAX_BYTES:
        raise InvalidCheck(where, f"may have at most {EVAL_SCHEMA_MAX_BYTES:,} bytes")
    _references_check(schema, where)
    if isinstance(schema, dict) and "$schema" in schema:
        schema = {key: value for key, value in schema.items() if key != "$schema"}
    patterns: dict[str, BoundedPattern] = {}
    for path, pattern in _patterns(schema):
        if pattern not in patterns:
            try:
                patterns[pattern] = budget.compiled(pattern, where)
            except InvalidCheck as error:
                raise InvalidCheck(
                    where, f"at {_at(path)}: {_quote(pattern)} {error.message}"
                ) from None
    _meta_check(schema, where)
    return BoundedSchema(schema, patterns)


def _at(path: tuple[object, ...]) -> str:
    return "/".join(str(part) for part in path) or "the root"


def _nodes(schema: object, where: str, limit: int) -> int:
    """How many JSON values ``schema`` holds; :class:`InvalidCheck` past ``limit`` values
    or ``EVAL_SCHEMA_MAX_DEPTH`` levels (walked without recursion)."""
    count = 0
    stack: list[tuple[object, int]] = [(schema, 1)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if count > limit:
            raise InvalidCheck(where, _too_many(limit))
        if depth > EVAL_SCHEMA_MAX_DEPTH:
            raise InvalidCheck(
                where, f"nests objects and arrays more than {EVAL_SCHEMA_MAX_DEPTH} deep"
            )
        if isinstance(value, dict | list):
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return count


def _too_many(limit: int) -> str:
    if limit < EVAL_SCHEMA_MAX_NODES:
        return (
            f"is too large: the schemas of this case's checks may hold at most "
            f"{EVAL_CASE_SCHEMA_MAX_NODES:,} values together"
        )
    return f"is too large: a schema may hold at most {EVAL_SCHEMA_MAX_NODES:,} values"


def _walk(value: object, path: tuple[object, ...] = ()) -> Iterator[tuple[tuple[object, ...], Any]]:
    """Every object in ``value`` with its path (depth bounded by :func:`_nodes`)."""
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))


def _references_check(schema: object, where: str) -> None:
    for path, node in _walk(schema):
        for keyword in ("$ref", "$dynamicRef"):
            ref = node.get(keyword)
            if isinstance(ref, str) and not ref.startswith("#"):
                raise InvalidCheck(
                    where,
                    f"$ref {_quote(ref)} points outside the schema; only '#…' is allowed"
                    if keyword == "$ref"
                    else f"{keyword} {_quote(ref)} points outside the schema",
                )
        if "$id" in node and path:
            raise InvalidCheck(
                where,
                f"at {_at((*path, '$id'))}: only the root may have an $id (below it, an $id "
                "would make the '#…' references under it point outside the schema)",
            )
        if "$schema" in node and (path or node["$schema"] != DIALECT):
            raise InvalidCheck(
                where,
                f"at {_at((*path, '$schema'))}: a check's schema is JSON Schema 2020-12; "
                f"only the root may say so, with {DIALECT!r}",
            )


def _patterns(schema: object) -> Iterator[tuple[tuple[object, ...], str]]:
    """Every pattern the schema holds, with where it is: each string ``pattern`` and
    each key of a ``patternProperties`` object, wherever they sit."""
    for path, node in _walk(schema):
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            yield (*path, "pattern"), pattern
        properties = node.get("patternProperties")
        if isinstance(properties, dict):
            for key in properties:
                yield (*path, "patternProperties", key), key


def _meta_check(schema: object, where: str) -> None:
    """``schema`` against 2020-12's own schema (from the bundled copies; no format
    assertions, so no ``re`` on its patterns — they were compiled above)."""
    meta = jsonschema.Draft202012Validator(
        jsonschema.Draft202012Validator.META_SCHEMA, registry=_NOTHING
    )
    try:
        error = jsonschema.exceptions.best_match(meta.iter_errors(schema))
    except RecursionError:
        raise InvalidCheck(where, "nests too deeply to be checked") from None
    if error is not None:
        at = "/".join(str(part) for part in error.absolute_path)
        raise InvalidCheck(
            where, f"is not a valid JSON Schema{f' at {at}' if at else ''}: {error.message}"
        )


# --- When an answer is checked.


def _refuse(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


_NOTHING: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]
"""Resolves what the schema holds (and JSON Schema's own bundled schemas); retrieves
nothing: any other reference is :class:`referencing.exceptions.Unresolvable`."""


class _Stopped(Exception):
    """The check ran out of time; the message says where."""


_OVERALL = f"checking the answer against the schema took longer than {EVAL_SCHEMA_TIMEOUT} s"
_DEADLINE: ContextVar[float] = ContextVar("sysprompt_eval_schema_deadline", default=float("inf"))
"""When the schema check under way must stop (``time.monotonic()``); per thread."""
_COMPILED: ContextVar[Mapping[str, BoundedPattern] | None] = ContextVar(
    "sysprompt_eval_schema_patterns", default=None
)
"""The patterns of the schema being checked, compiled; per thread."""


def schema_outcome(bounded: BoundedSchema, answer: object) -> Outcome:
    """``answer`` (parsed JSON) against the schema."""
    validator = _VALIDATOR(bounded.schema, registry=_NOTHING)
    deadline = _DEADLINE.set(time.monotonic() + EVAL_SCHEMA_TIMEOUT)
    compiled = _COMPILED.set(bounded.patterns)
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(answer))
    except _Stopped as stop:
        return Outcome(False, f"{stop} and was stopped")
    except RecursionError:
        return Outcome(False, "the answer could not be checked: it nests too deeply")
    except referencing.exceptions.Unresolvable as failure:
        ref = _quote(str(getattr(failure, "ref", "")))
        return Outcome(
            False,
            f"the schema's reference {ref} could not be resolved: only what the schema "
            "holds is, nothing is fetched",
            error=True,
        )
    finally:
        _COMPILED.reset(compiled)
        _DEADLINE.reset(deadline)
    if error is None:
        return Outcome(True, "the answer is valid under the schema")
    at = "/".join(str(part) for part in error.absolute_path)
    said = f"{'at ' + at + ': ' if at else ''}{error.message}"
    return Outcome(False, said if len(said) <= _REASON_MAX else said[:_REASON_MAX] + "…")


def _quote(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


def _in_time() -> None:
    if time.monotonic() > _DEADLINE.get():
        raise _Stopped(_OVERALL)


def _search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` (one the schema holds, compiled when the case was saved) is
    found in ``text``, within the pattern's time limit and the check's deadline."""
    bounded = (_COMPILED.get() or {}).get(pattern)
    if bounded is None:  # every pattern the schema holds was compiled; fail closed
        raise _Stopped(f"the schema's pattern {_quote(pattern)} was not measured")
    remaining = _DEADLINE.get() - time.monotonic()
    if remaining <= 0:
        raise _Stopped(_OVERALL)
    try:
        return pattern_search(bounded, text, min(remaining, EVAL_PATTERN_TIMEOUT)) is not None
    except TimeoutError:
        raise _Stopped(
            f"the schema's pattern {_quote(pattern)} took longer than {EVAL_PATTERN_TIMEOUT} s"
        ) from None


Errors = Iterator[jsonschema.ValidationError]


def _pattern(validator: Any, pattern: str, instance: object, schema: object) -> Errors:
    if isinstance(instance, str) and not _search(pattern, instance):
        yield jsonschema.ValidationError(f"{_quote(instance)} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, object], instance: object, schema: object
) -> Errors:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: Mapping[str, object], schema: Mapping[str, Any]) -> list[str]:
    """The keys of ``instance`` neither ``properties`` nor ``patternProperties`` take."""
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [
        key
        for key in instance
        if key not in properties and not any(_search(pattern, key) for pattern in patterns)
    ]


def _additional_properties(
    validator: Any, additional: object, instance: object, schema: Mapping[str, Any]
) -> Errors:
    if not isinstance(instance, dict):
        return
    extras = _additional(instance, schema)
    if isinstance(additional, dict):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        shown = ", ".join(repr(extra) for extra in sorted(extras))
        yield jsonschema.ValidationError(
            f"additional properties are not allowed ({shown} unexpected)"
        )


def _evaluated_keys(validator: Any, instance: Mapping[str, object], schema: object) -> set[str]:
    """The keys of ``instance`` that ``schema`` evaluates (for ``unevaluatedProperties``):
    jsonschema's own walk, with the schema's patterns run as :func:`_search` runs them."""
    _in_time()
    if not isinstance(schema, dict):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if isinstance(ref, str):
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys |= _evaluated_keys(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            keys |= {
                key
                for key, value in instance.items()
                if next(validator.descend(value, subschema), None) is None
            }
    for pattern in schema.get("patternProperties", {}):
        keys |= {key for key in instance if _search(pattern, key)}
    for name, subschema in schema.get("dependentSchemas", {}).items():
        if name in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            keys |= _evaluated_keys(validator, instance, schema.get("then"))
        else:
            keys |= _evaluated_keys(validator, instance, schema.get("else"))
    return keys


def _unevaluated_properties(
    validator: Any, unevaluated: object, instance: object, schema: object
) -> Errors:
    if not isinstance(instance, dict):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    left = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], unevaluated, path=key), None) is not None
    ]
    if left:
        shown = ", ".join(repr(key) for key in sorted(left))
        said = "are not allowed" if unevaluated is False else "are not valid under the schema"
        yield jsonschema.ValidationError(f"unevaluated properties {said} ({shown} unexpected)")


def _unique_items(validator: Any, unique: object, instance: object, schema: object) -> Errors:
    if unique and isinstance(instance, list):
        seen: set[str] = set()
        for item in instance:
            key = canonical_json(_normal(item))
            if key in seen:
                yield jsonschema.ValidationError(
                    f"{_quote(canonical_json(instance))} has non-unique elements"
                )
                return
            seen.add(key)


def _normal(value: object) -> object:
    """A JSON value with integral floats as ints, so 1 and 1.0 compare equal."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_normal(item) for item in value]
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items()}
    return value


def _deadlined(function: Callable[..., Any]) -> Callable[..., Any]:
    def keyword(validator: Any, value: object, instance: object, schema: object) -> Any:
        _in_time()
        return function(validator, value, instance, schema)

    return keyword


def _validator_class() -> Any:
    base = jsonschema.Draft202012Validator
    keywords = {name: _deadlined(function) for name, function in base.VALIDATORS.items()}
    keywords.update(
        pattern=_pattern,
        patternProperties=_deadlined(_pattern_properties),
        additionalProperties=_deadlined(_additional_properties),
        unevaluatedProperties=_deadlined(_unevaluated_properties),
        uniqueItems=_deadlined(_unique_items),
    )
    return jsonschema.validators.extend(base, keywords)  # type: ignore[no-untyped-call]


_VALIDATOR = _validator_class()
