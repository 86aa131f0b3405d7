"""Evaluation checks: parsed from their JSON form, run on an answer, each with a reason.

A case's ``checks`` is a list of objects, each ``{"type": …, …}``:

=================  ==========================================================
``contains``        ``value`` (text), ``ignore_case`` (default false)
``not_contains``    the same, passing when the text is absent
``equals``          ``value``: the answer, without leading and trailing
                    whitespace, is exactly it
``starts_with``     ``value``: the answer, without leading whitespace, starts with it
``regex``           ``pattern``: found anywhere in the answer (the ``regex``
                    module's syntax, a superset of Python's ``re``), bounded before
                    it is compiled (:mod:`~sysprompt_core.evaluations.patterns`), run
                    within ``EVAL_PATTERN_TIMEOUT`` seconds
``json``            the answer (without surrounding whitespace) is one JSON value
``json_schema``     ``schema``: the answer is JSON valid under the schema (JSON
                    Schema 2020-12, bounded, nothing fetched, patterns and the whole
                    check time-limited: :mod:`~sysprompt_core.evaluations.schemas`)
``max_chars``       ``value``: the answer has at most that many characters
``tool_called``     ``name``, optional ``arguments``: some tool call has that name
                    and its arguments contain the given ones (objects compared as
                    subsets, recursively; other values by equality)
``judge``           ``rubric``, optional ``model``: a judge model decides (see
                    :mod:`sysprompt_core.evaluations.judge`)
=================  ==========================================================

:func:`parse_checks` turns the JSON into :data:`Check` values or raises
:class:`~sysprompt_core.errors.InvalidCheck` naming the part that is wrong
(``checks[2].pattern``) — the patterns and schemas of one case's checks within a
budget together (:class:`~sysprompt_core.evaluations.schemas.CaseBudget`);
:func:`run_check` gives a :class:`CheckResult` — ``passed``
and a ``reason`` a person reads — for every check but ``judge``, which needs a model
call and is run by the caller with :mod:`~sysprompt_core.evaluations.judge`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from sysprompt_core._json import json_type
from sysprompt_core.errors import InvalidCheck
from sysprompt_core.evaluations.answers import Answer
from sysprompt_core.evaluations.keys import canonical_json
from sysprompt_core.evaluations.patterns import BoundedPattern, pattern_search
from sysprompt_core.evaluations.schemas import (
    BoundedSchema,
    CaseBudget,
    schema_bounded,
    schema_outcome,
)
from sysprompt_core.limits import (
    EVAL_CHECK_TEXT_MAX_CHARS,
    EVAL_CHECKS_MAX_COUNT,
    EVAL_PATTERN_TIMEOUT,
)

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
    compiled: BoundedPattern
    type: Literal["regex"] = "regex"


@dataclass(frozen=True, slots=True)
class JsonCheck:
    type: Literal["json"] = "json"


@dataclass(frozen=True, slots=True)
class JsonSchemaCheck:
    schema: Mapping[str, object] | bool
    bounded: BoundedSchema
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
    budget = CaseBudget()
    return tuple(parse_check(item, f"{field}[{index}]", budget) for index, item in enumerate(value))


def parse_check(value: object, field: str, budget: CaseBudget | None = None) -> Check:
    """One check from its JSON form, or :class:`InvalidCheck` naming ``field``'s part;
    what its patterns and schema take is spent from ``budget`` (the case's)."""
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
    return _PARSERS[kind](value, field, budget or CaseBudget())


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


def _parse_text(value: Mapping[str, object], field: str, budget: CaseBudget) -> Check:
    (kind,) = (kind for kind in _TEXT_KINDS if kind == value["type"])
    return TextCheck(
        type=kind,
        value=_text(value["value"], f"{field}.value", empty=kind == "equals"),
        ignore_case=_flag(value.get("ignore_case", False), f"{field}.ignore_case"),
    )


def _parse_regex(value: Mapping[str, object], field: str, budget: CaseBudget) -> Check:
    pattern = _text(value["pattern"], f"{field}.pattern")
    return RegexCheck(pattern=pattern, compiled=budget.compiled(pattern, f"{field}.pattern"))


def _parse_json(value: Mapping[str, object], field: str, budget: CaseBudget) -> Check:
    return JsonCheck()


def _parse_json_schema(value: Mapping[str, object], field: str, budget: CaseBudget) -> Check:
    schema = value["schema"]
    bounded = schema_bounded(schema, f"{field}.schema", budget)
    assert isinstance(schema, dict | bool)
    return JsonSchemaCheck(schema=schema, bounded=bounded)


def _parse_max_chars(value: Mapping[str, object], field: str, budget: CaseBudget) -> Check:
    limit = value["value"]
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise InvalidCheck(f"{field}.value", f"must be a whole number ≥ 0, got {json_type(limit)}")
    return MaxCharsCheck(value=limit)


def _parse_tool_called(value: Mapping[str, object], field: str, budget: CaseBudget) -> Check:
    name = _text(value["name"], f"{field}.name")
    arguments = value.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise InvalidCheck(f"{field}.arguments", f"must be an object, got {json_type(arguments)}")
    return ToolCalledCheck(name=name, arguments=arguments)


def _parse_judge(value: Mapping[str, object], field: str, budget: CaseBudget) -> Check:
    model = value.get("model")
    if model is not None:
        model = _text(model, f"{field}.model")
    return JudgeCheck(rubric=_text(value["rubric"], f"{field}.rubric"), model=model)


_PARSERS: dict[str, Callable[[Mapping[str, object], str, CaseBudget], Check]] = {
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
        match = pattern_search(check.compiled, text, EVAL_PATTERN_TIMEOUT)
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
    outcome = schema_outcome(check.bounded, parsed)
    return CheckResult("json_schema", outcome.passed, outcome.reason, error=outcome.error)


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
