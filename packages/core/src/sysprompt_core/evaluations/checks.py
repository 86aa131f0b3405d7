"""Evaluation checks: parsed from their JSON form, run on an answer, each with a reason.

A case's ``checks`` is a list of objects, each ``{"type": …, …}``:

=================  ==========================================================
``contains``        ``value`` (text), ``ignore_case`` (default false)
``not_contains``    the same, passing when the text is absent
``equals``          ``value``: the answer, without leading and trailing
                    whitespace, is exactly it
``starts_with``     ``value``: the answer, without leading whitespace, starts with it
``regex``           ``pattern``: found anywhere in the answer (the ``regex``
                    module's syntax, a superset of Python's ``re``), within
                    ``EVAL_PATTERN_TIMEOUT`` seconds
``json``            the answer (without surrounding whitespace) is one JSON value
``json_schema``     ``schema``: the answer is JSON valid under the schema (JSON
                    Schema 2020-12; ``$ref`` only inside the schema; ``pattern`` and
                    the whole check time-limited)
``max_chars``       ``value``: the answer has at most that many characters
``tool_called``     ``name``, optional ``arguments``: some tool call has that name
                    and its arguments contain the given ones (objects compared as
                    subsets, recursively; other values by equality)
``judge``           ``rubric``, optional ``model``: a judge model decides (see
                    :mod:`sysprompt_core.evaluations.judge`)
=================  ==========================================================

:func:`parse_checks` turns the JSON into :data:`Check` values or raises
:class:`~sysprompt_core.errors.InvalidCheck` naming the part that is wrong
(``checks[2].pattern``); :func:`run_check` gives a :class:`CheckResult` — ``passed``
and a ``reason`` a person reads — for every check but ``judge``, which needs a model
call and is run by the caller with :mod:`~sysprompt_core.evaluations.judge`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from sysprompt_core._json import json_type
from sysprompt_core.errors import InvalidCheck
from sysprompt_core.evaluations.answers import Answer
from sysprompt_core.evaluations.keys import canonical_json
from sysprompt_core.extras import extra_missing
from sysprompt_core.limits import (
    EVAL_CHECK_TEXT_MAX_CHARS,
    EVAL_CHECKS_MAX_COUNT,
    EVAL_PATTERN_MAX_CHARS,
    EVAL_PATTERN_TIMEOUT,
    EVAL_SCHEMA_MAX_BYTES,
    EVAL_SCHEMA_TIMEOUT,
)

try:
    import jsonschema
    import jsonschema.exceptions
    import jsonschema.validators
    import referencing.exceptions
    import regex
except ModuleNotFoundError as missing:  # an agent host's install: no [evaluations]
    raise extra_missing("evaluations", missing) from missing

__all__ = [
    "CHECK_TYPES",
    "Check",
    "CheckResult",
    "JudgeCheck",
    "parse_check",
    "parse_checks",
    "run_check",
]

CheckType: TypeAlias = Literal[
    "contains",
    "not_contains",
    "equals",
    "starts_with",
    "regex",
    "json",
    "json_schema",
    "max_chars",
    "tool_called",
    "judge",
]
_SHOWN = 80
"""How many characters of an answer or a value a reason quotes."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome. ``error`` marks a check that could not be decided (a judge
    that could not be asked or answered out of form): the repetition is an error."""

    type: str
    passed: bool
    reason: str
    error: bool = False

    def as_json(self) -> dict[str, object]:
        return {"type": self.type, "passed": self.passed, "reason": self.reason}


TextKind: TypeAlias = Literal["contains", "not_contains", "equals", "starts_with"]
_TEXT_KINDS: tuple[TextKind, ...] = ("contains", "not_contains", "equals", "starts_with")


@dataclass(frozen=True, slots=True)
class TextCheck:
    type: TextKind
    value: str
    ignore_case: bool = False


@dataclass(frozen=True, slots=True)
class RegexCheck:
    pattern: str
    compiled: Any  # regex.Pattern[str]; the regex module ships no type information
    type: Literal["regex"] = "regex"


@dataclass(frozen=True, slots=True)
class JsonCheck:
    type: Literal["json"] = "json"


@dataclass(frozen=True, slots=True)
class JsonSchemaCheck:
    schema: Mapping[str, object] | bool
    type: Literal["json_schema"] = "json_schema"


@dataclass(frozen=True, slots=True)
class MaxCharsCheck:
    value: int
    type: Literal["max_chars"] = "max_chars"


@dataclass(frozen=True, slots=True)
class ToolCalledCheck:
    name: str
    arguments: Mapping[str, object] | None = None
    type: Literal["tool_called"] = "tool_called"


@dataclass(frozen=True, slots=True)
class JudgeCheck:
    rubric: str
    model: str | None = None
    type: Literal["judge"] = "judge"


Check: TypeAlias = (
    TextCheck
    | RegexCheck
    | JsonCheck
    | JsonSchemaCheck
    | MaxCharsCheck
    | ToolCalledCheck
    | JudgeCheck
)

_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # each check type: (its required fields, its optional fields)
    "contains": (("value",), ("ignore_case",)),
    "not_contains": (("value",), ("ignore_case",)),
    "equals": (("value",), ()),
    "starts_with": (("value",), ()),
    "regex": (("pattern",), ()),
    "json": ((), ()),
    "json_schema": (("schema",), ()),
    "max_chars": (("value",), ()),
    "tool_called": (("name",), ("arguments",)),
    "judge": (("rubric",), ("model",)),
}
CHECK_TYPES: tuple[str, ...] = tuple(_FIELDS)


def parse_checks(value: object, field: str = "checks") -> tuple[Check, ...]:
    """The checks of a case from their JSON form (a list), or :class:`InvalidCheck`."""
    if not isinstance(value, list):
        raise InvalidCheck(field, f"must be a list of checks, got {json_type(value)}")
    if len(value) > EVAL_CHECKS_MAX_COUNT:
        raise InvalidCheck(field, f"may hold at most {EVAL_CHECKS_MAX_COUNT} checks")
    return tuple(parse_check(item, f"{field}[{index}]") for index, item in enumerate(value))


def parse_check(value: object, field: str) -> Check:
    """One check from its JSON form, or :class:`InvalidCheck` naming ``field``'s part."""
    if not isinstance(value, dict):
        raise InvalidCheck(
            field, f'must be an object like {{"type": "contains", …}}, got {json_type(value)}'
        )
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise InvalidCheck(f"{field}.type", f"must be one of {', '.join(CHECK_TYPES)}")
    required, optional = _FIELDS[kind]
    for name in value:
        if name != "type" and name not in required and name not in optional:
            takes = ", ".join((*required, *optional)) or "nothing but its type"
            raise InvalidCheck(f"{field}.{name}", f"unknown field; a {kind} check takes {takes}")
    for name in required:
        if name not in value:
            raise InvalidCheck(f"{field}.{name}", f"a {kind} check needs it")
    return _PARSERS[kind](value, field)


def _text(value: object, field: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidCheck(field, f"must be a string, got {json_type(value)}")
    if not value and not empty:
        raise InvalidCheck(field, "must not be empty")
    if len(value) > EVAL_CHECK_TEXT_MAX_CHARS:
        raise InvalidCheck(field, f"may have at most {EVAL_CHECK_TEXT_MAX_CHARS:,} characters")
    return value


def _flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidCheck(field, f"must be true or false, got {json_type(value)}")
    return value


def _parse_text(value: Mapping[str, object], field: str) -> Check:
    (kind,) = (kind for kind in _TEXT_KINDS if kind == value["type"])
    return TextCheck(
        type=kind,
        value=_text(value["value"], f"{field}.value", empty=kind == "equals"),
        ignore_case=_flag(value.get("ignore_case", False), f"{field}.ignore_case"),
    )


def _parse_regex(value: Mapping[str, object], field: str) -> Check:
    pattern = _text(value["pattern"], f"{field}.pattern")
    if len(pattern) > EVAL_PATTERN_MAX_CHARS:
        raise InvalidCheck(
            f"{field}.pattern", f"may have at most {EVAL_PATTERN_MAX_CHARS:,} characters"
        )
    return RegexCheck(pattern=pattern, compiled=_compile(pattern, f"{field}.pattern"))


def _compile(pattern: str, field: str) -> Any:
    try:
        return regex.compile(pattern, regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as error:
        raise InvalidCheck(field, f"is not a valid regular expression: {error}") from None


def _parse_json(value: Mapping[str, object], field: str) -> Check:
    return JsonCheck()


def _parse_json_schema(value: Mapping[str, object], field: str) -> Check:
    schema = value["schema"]
    where = f"{field}.schema"
    if not isinstance(schema, dict | bool):
        raise InvalidCheck(where, f"must be a JSON Schema (an object), got {json_type(schema)}")
    if len(canonical_json(schema).encode()) > EVAL_SCHEMA_MAX_BYTES:
        raise InvalidCheck(where, f"may have at most {EVAL_SCHEMA_MAX_BYTES:,} bytes")
    for ref in _refs(schema):
        if not ref.startswith("#"):
            raise InvalidCheck(
                where, f"$ref {ref!r} points outside the schema; only '#…' is allowed"
            )
    try:
        _VALIDATOR.check_schema(schema)
    except jsonschema.exceptions.SchemaError as error:
        at = "/".join(str(part) for part in error.absolute_path)
        raise InvalidCheck(
            where, f"is not a valid JSON Schema{f' at {at}' if at else ''}: {error.message}"
        ) from None
    for pattern in _patterns(schema):
        _compile(pattern, where)
    return JsonSchemaCheck(schema=schema)


def _parse_max_chars(value: Mapping[str, object], field: str) -> Check:
    limit = value["value"]
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise InvalidCheck(f"{field}.value", f"must be a whole number ≥ 0, got {json_type(limit)}")
    return MaxCharsCheck(value=limit)


def _parse_tool_called(value: Mapping[str, object], field: str) -> Check:
    name = _text(value["name"], f"{field}.name")
    arguments = value.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise InvalidCheck(f"{field}.arguments", f"must be an object, got {json_type(arguments)}")
    return ToolCalledCheck(name=name, arguments=arguments)


def _parse_judge(value: Mapping[str, object], field: str) -> Check:
    model = value.get("model")
    if model is not None:
        model = _text(model, f"{field}.model")
    return JudgeCheck(rubric=_text(value["rubric"], f"{field}.rubric"), model=model)


_PARSERS: dict[str, Callable[[Mapping[str, object], str], Check]] = {
    "contains": _parse_text,
    "not_contains": _parse_text,
    "equals": _parse_text,
    "starts_with": _parse_text,
    "regex": _parse_regex,
    "json": _parse_json,
    "json_schema": _parse_json_schema,
    "max_chars": _parse_max_chars,
    "tool_called": _parse_tool_called,
    "judge": _parse_judge,
}


def run_check(check: Check, answer: Answer) -> CheckResult:
    """``check`` on ``answer``; a :class:`JudgeCheck` is refused (it needs a model call)."""
    if isinstance(check, TextCheck):
        return _run_text(check, answer.text)
    if isinstance(check, RegexCheck):
        return _run_regex(check, answer.text)
    if isinstance(check, JsonCheck):
        parsed = _load(answer.text)
        if isinstance(parsed, _NotJson):
            return CheckResult("json", False, f"the answer is not JSON: {parsed.reason}")
        return CheckResult("json", True, f"the answer is JSON ({json_type(parsed)})")
    if isinstance(check, JsonSchemaCheck):
        return _run_schema(check, answer.text)
    if isinstance(check, MaxCharsCheck):
        size = len(answer.text)
        passed = size <= check.value
        return CheckResult(
            "max_chars", passed, f"{size:,} characters, at most {check.value:,} allowed"
        )
    if isinstance(check, ToolCalledCheck):
        return _run_tool_called(check, answer)
    raise TypeError("a judge check needs a model call: use sysprompt_core.evaluations.judge")


def _quote(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


def _run_text(check: TextCheck, text: str) -> CheckResult:
    value = check.value
    if check.type == "equals":
        passed = text.strip() == value
        return CheckResult(
            "equals",
            passed,
            "the answer is exactly the value"
            if passed
            else f"the answer {_quote(text.strip())} is not {_quote(value)}",
        )
    if check.type == "starts_with":
        passed = text.lstrip().startswith(value)
        return CheckResult(
            "starts_with",
            passed,
            f"the answer {'starts' if passed else 'does not start'} with {_quote(value)}",
        )
    haystack, needle = (text.casefold(), value.casefold()) if check.ignore_case else (text, value)
    found = needle in haystack
    case = " (ignoring case)" if check.ignore_case else ""
    said = f"{_quote(value)} {'found' if found else 'not found'} in the answer{case}"
    return CheckResult(check.type, found if check.type == "contains" else not found, said)


def _run_regex(check: RegexCheck, text: str) -> CheckResult:
    try:
        match = check.compiled.search(text, timeout=EVAL_PATTERN_TIMEOUT)
    except TimeoutError:
        return CheckResult(
            "regex",
            False,
            f"the pattern took longer than {EVAL_PATTERN_TIMEOUT} s on this answer and was stopped",
        )
    if match is None:
        return CheckResult("regex", False, f"no match for {_quote(check.pattern)}")
    return CheckResult(
        "regex", True, f"{_quote(match.group(0))} matches at character {match.start()}"
    )


@dataclass(frozen=True, slots=True)
class _NotJson:
    reason: str


def _load(text: str) -> object:
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError as error:
        return _NotJson(f"{error.msg} at line {error.lineno}, column {error.colno}")
    except (RecursionError, ValueError) as error:
        return _NotJson(str(error) or "nested too deeply")


def _run_schema(check: JsonSchemaCheck, text: str) -> CheckResult:
    parsed = _load(text)
    if isinstance(parsed, _NotJson):
        return CheckResult("json_schema", False, f"the answer is not JSON: {parsed.reason}")
    validator = _VALIDATOR(check.schema)
    token = _DEADLINE.set(time.monotonic() + EVAL_SCHEMA_TIMEOUT)
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(parsed))
    except _Timeout as stop:
        return CheckResult("json_schema", False, f"{stop} and was stopped")
    except (RecursionError, referencing.exceptions.Unresolvable) as failure:
        return CheckResult("json_schema", False, f"the answer could not be checked: {failure}")
    finally:
        _DEADLINE.reset(token)
    if error is None:
        return CheckResult("json_schema", True, "the answer is valid under the schema")
    at = "/".join(str(part) for part in error.absolute_path)
    return CheckResult("json_schema", False, f"{'at ' + at + ': ' if at else ''}{error.message}")


def _run_tool_called(check: ToolCalledCheck, answer: Answer) -> CheckResult:
    named = [call for call in answer.tool_calls if call.name == check.name]
    if not named:
        called = ", ".join(sorted({call.name for call in answer.tool_calls})) or "no tool"
        return CheckResult("tool_called", False, f"{check.name} was not called (called: {called})")
    if check.arguments is None:
        return CheckResult("tool_called", True, f"{check.name} was called")
    for call in named:
        parsed = call.parsed()
        if parsed is not None and _subset(check.arguments, parsed):
            return CheckResult(
                "tool_called",
                True,
                f"{check.name} was called with {_quote(canonical_json(parsed))}",
            )
    shown = "; ".join(_quote(canonical_json(call.as_json()["arguments"])) for call in named)
    wanted = _quote(canonical_json(check.arguments))
    return CheckResult(
        "tool_called",
        False,
        f"{check.name} was called, but not with arguments containing {wanted}: {shown}",
    )


def _subset(wanted: object, actual: object) -> bool:
    if isinstance(wanted, dict):
        return isinstance(actual, dict) and all(
            key in actual and _subset(value, actual[key]) for key, value in wanted.items()
        )
    return _same(wanted, actual)


def _same(a: object, b: object) -> bool:
    """JSON equality: true is not 1, 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


# --- JSON Schema: one validator class whose time-consuming keywords are bounded.


class _Timeout(Exception):
    """The schema check ran out of time; the message says where."""


_OVERALL = f"checking the answer against the schema took longer than {EVAL_SCHEMA_TIMEOUT} s"
_DEADLINE: ContextVar[float] = ContextVar("sysprompt_eval_schema_deadline", default=float("inf"))
"""When the schema check under way must stop (``time.monotonic()``); per thread."""


def _refs(schema: object) -> Iterator[str]:
    if isinstance(schema, dict):
        for keyword in ("$ref", "$dynamicRef"):
            ref = schema.get(keyword)
            if isinstance(ref, str):
                yield ref
        for value in schema.values():
            yield from _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _refs(value)


def _patterns(schema: object) -> Iterator[str]:
    if isinstance(schema, dict):
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            yield pattern
        properties = schema.get("patternProperties")
        if isinstance(properties, dict):
            yield from (key for key in properties if isinstance(key, str))
        for value in schema.values():
            yield from _patterns(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _patterns(value)


def _search(validator: Any, pattern: str, text: str) -> bool:
    remaining = _DEADLINE.get() - time.monotonic()
    if remaining <= 0:
        raise _Timeout(_OVERALL)
    try:
        return (
            regex.search(
                pattern, text, regex.VERSION0, timeout=min(remaining, EVAL_PATTERN_TIMEOUT)
            )
            is not None
        )
    except TimeoutError:
        raise _Timeout(
            f"the schema's pattern {_quote(pattern)} took longer than {EVAL_PATTERN_TIMEOUT} s"
        ) from None


def _pattern(
    validator: Any, pattern: str, instance: object, schema: object
) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, str) and not _search(validator, pattern, instance):
        yield jsonschema.ValidationError(f"{_quote(instance)} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, object], instance: object, schema: object
) -> Iterator[jsonschema.ValidationError]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(validator, pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _unique_items(
    validator: Any, unique: object, instance: object, schema: object
) -> Iterator[jsonschema.ValidationError]:
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
        if time.monotonic() > _DEADLINE.get():
            raise _Timeout(_OVERALL)
        return function(validator, value, instance, schema)

    return keyword


def _validator_class() -> Any:
    base = jsonschema.Draft202012Validator
    keywords = {name: _deadlined(function) for name, function in base.VALIDATORS.items()}
    keywords.update(
        pattern=_pattern,
        patternProperties=_pattern_properties,
        uniqueItems=_deadlined(_unique_items),
    )
    return jsonschema.validators.extend(base, keywords)  # type: ignore[no-untyped-call]


_VALIDATOR = _validator_class()
