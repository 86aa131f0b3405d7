"""Evaluations §2: each check's outcome and reason on an answer."""

from __future__ import annotations

import time
from collections.abc import Mapping

import pytest

from sysprompt_core.evaluations import Answer, ToolCall, parse_check, run_check


def outcome(check: Mapping[str, object], text: str, *calls: ToolCall) -> tuple[bool, str]:
    result = run_check(parse_check(check, "checks[0]"), Answer(text, calls))
    assert result.type == check["type"]
    return result.passed, result.reason


@pytest.mark.parametrize(
    ("check", "text", "passed", "reason"),
    [
        ({"type": "contains", "value": "tabs"}, "Use tabs.", True, "'tabs' found"),
        ({"type": "contains", "value": "Tabs"}, "Use tabs.", False, "not found"),
        (
            {"type": "contains", "value": "TABS", "ignore_case": True},
            "Use tabs.",
            True,
            "ignoring case",
        ),
        ({"type": "not_contains", "value": "sorry"}, "Done.", True, "not found"),
        ({"type": "not_contains", "value": "SORRY", "ignore_case": True}, "sorry!", False, "found"),
        ({"type": "equals", "value": "42"}, "  42\n", True, "exactly"),
        ({"type": "equals", "value": "42"}, "42.", False, "is not '42'"),
        ({"type": "starts_with", "value": "Sure"}, "\nSure, here", True, "starts with"),
        ({"type": "starts_with", "value": "Sure"}, "OK. Sure", False, "does not start"),
        (
            {"type": "regex", "pattern": r"\bv\d+\.\d+"},
            "use v2.13 now",
            True,
            "'v2.13' matches at character 4",
        ),
        ({"type": "regex", "pattern": r"^\d+$"}, "12a", False, "no match"),
        ({"type": "json"}, ' {"a": [1, 2]} ', True, "JSON (an object)"),
        ({"type": "json"}, "{'a': 1}", False, "not JSON: Expecting property name"),
        ({"type": "json"}, "[" * 100_000, False, "not JSON"),
        ({"type": "max_chars", "value": 5}, "hello", True, "5 characters, at most 5"),
        ({"type": "max_chars", "value": 4}, "hello", False, "5 characters, at most 4"),
    ],
)
def test_run_check_text_kinds(
    check: dict[str, object], text: str, passed: bool, reason: str
) -> None:
    got_passed, got_reason = outcome(check, text)

    assert got_passed is passed
    assert reason in got_reason


SCHEMA = {
    "type": "object",
    "properties": {"files": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
    "required": ["files"],
    "$defs": {"name": {"type": "string", "pattern": "^[a-z]+$"}},
    "additionalProperties": {"$ref": "#/$defs/name"},
}


@pytest.mark.parametrize(
    ("text", "passed", "reason"),
    [
        ('{"files": ["a.py", "b.py"]}', True, "valid under the schema"),
        ('{"files": ["a.py", "a.py"]}', False, "non-unique"),
        ('{"files": [1]}', False, "at files/0: 1 is not of type 'string'"),
        ('{"file": []}', False, "'files' is a required property"),
        ('{"files": [], "owner": "Ada"}', False, "does not match '^[a-z]+$'"),
        ('{"files": [], "owner": "ada"}', True, "valid"),
        ("files: a.py", False, "not JSON"),
    ],
)
def test_run_check_json_schema(text: str, passed: bool, reason: str) -> None:
    got_passed, got_reason = outcome({"type": "json_schema", "schema": SCHEMA}, text)

    assert got_passed is passed
    assert reason in got_reason


def test_run_check_json_schema_counts_one_and_one_point_zero_alike() -> None:
    check = {"type": "json_schema", "schema": {"uniqueItems": True}}

    assert outcome(check, "[1, 1.0]")[0] is False
    assert outcome(check, "[1, true]")[0] is True


SLOW = "x" * 5_000


@pytest.mark.parametrize(
    ("check", "text"),
    [
        ({"type": "regex", "pattern": "(x+x+)+y"}, SLOW),
        ({"type": "json_schema", "schema": {"pattern": "(x+x+)+y"}}, f'"{SLOW}"'),
        (
            {"type": "json_schema", "schema": {"patternProperties": {"(x+x+)+y": {}}}},
            f'{{"{SLOW}": 1}}',
        ),
    ],
    ids=["regex", "schema-pattern", "schema-pattern-properties"],
)
def test_run_check_catastrophic_pattern_stops_at_its_time_limit(
    check: dict[str, object], text: str
) -> None:
    started = time.monotonic()

    passed, reason = outcome(check, text)

    assert passed is False
    assert "took longer than 0.25 s" in reason
    assert time.monotonic() - started < 20  # unbounded, this pattern runs for hours


def test_run_check_json_schema_whole_check_has_a_deadline() -> None:
    # 40 catastrophic strings, each stopped at the pattern limit, would take 10 s; the
    # schema check as a whole stops at its own limit (1 s).
    check = {"type": "json_schema", "schema": {"items": {"pattern": "(x+x+)+y|^z"}}}
    text = "[" + ", ".join(['"' + "x" * 3_000 + '"'] * 40) + "]"
    started = time.monotonic()

    passed, reason = outcome(check, text)

    assert passed is False
    assert "took longer than" in reason
    assert time.monotonic() - started < 8  # not the 10 s of 40 patterns one by one


@pytest.mark.parametrize(
    ("check", "calls", "passed", "reason"),
    [
        (
            {"type": "tool_called", "name": "read"},
            [ToolCall("read", "{}")],
            True,
            "read was called",
        ),
        (
            {"type": "tool_called", "name": "read"},
            [ToolCall("write", "{}")],
            False,
            "called: write",
        ),
        ({"type": "tool_called", "name": "read"}, [], False, "called: no tool"),
        (
            {"type": "tool_called", "name": "read", "arguments": {"path": "a.py"}},
            [ToolCall("read", '{"path": "b.py"}'), ToolCall("read", '{"path": "a.py", "n": 1}')],
            True,
            "read was called with",
        ),
        (
            {"type": "tool_called", "name": "read", "arguments": {"opts": {"deep": True}}},
            [ToolCall("read", {"opts": {"deep": True, "x": 1}})],
            True,
            "called with",
        ),
        (
            {"type": "tool_called", "name": "read", "arguments": {"n": 1}},
            [ToolCall("read", '{"n": true}')],
            False,
            "not with arguments containing",
        ),
        (
            {"type": "tool_called", "name": "read", "arguments": {"n": 1}},
            [ToolCall("read", "not json")],
            False,
            "'\"not json\"'",
        ),
    ],
)
def test_run_check_tool_called(
    check: dict[str, object], calls: list[ToolCall], passed: bool, reason: str
) -> None:
    got_passed, got_reason = outcome(check, "", *calls)

    assert got_passed is passed
    assert reason in got_reason


def test_run_check_judge_needs_a_model_call() -> None:
    with pytest.raises(TypeError, match="judge"):
        run_check(parse_check({"type": "judge", "rubric": "x"}, "c"), Answer("x"))
