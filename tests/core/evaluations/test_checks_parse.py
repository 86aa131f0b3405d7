"""Evaluations §2: a check's JSON form is refused with the part that is wrong named."""

from __future__ import annotations

import pytest

from sysprompt_core.evaluations import (
    CHECK_TYPES,
    InvalidCheck,
    JudgeCheck,
    parse_check,
    parse_checks,
)

VALID: list[dict[str, object]] = [
    {"type": "contains", "value": "x"},
    {"type": "not_contains", "value": "x", "ignore_case": True},
    {"type": "equals", "value": ""},
    {"type": "starts_with", "value": "Sure"},
    {"type": "regex", "pattern": r"\d{3}"},
    {"type": "json"},
    {"type": "json_schema", "schema": {"type": "object", "required": ["a"]}},
    {"type": "max_chars", "value": 0},
    {"type": "tool_called", "name": "search", "arguments": {"q": "x"}},
    {"type": "judge", "rubric": "polite", "model": "judge"},
]


@pytest.mark.parametrize("check", VALID, ids=lambda check: str(check["type"]))
def test_parse_check_accepts_each_type(check: dict[str, object]) -> None:
    parsed = parse_check(check, "checks[0]")

    assert parsed.type == check["type"]


def test_parse_check_types_are_the_documented_ten() -> None:
    assert set(CHECK_TYPES) == {str(check["type"]) for check in VALID}


@pytest.mark.parametrize(
    ("check", "field", "words"),
    [
        ("contains", "checks[0]", "must be an object"),
        ({"value": "x"}, "checks[0].type", "must be one of"),
        ({"type": "contain", "value": "x"}, "checks[0].type", "must be one of"),
        ({"type": "contains"}, "checks[0].value", "needs it"),
        ({"type": "contains", "value": ""}, "checks[0].value", "must not be empty"),
        ({"type": "contains", "value": 3}, "checks[0].value", "must be a string, got a number"),
        ({"type": "contains", "value": "x", "valu": 1}, "checks[0].valu", "unknown field"),
        (
            {"type": "contains", "value": "x", "ignore_case": "yes"},
            "checks[0].ignore_case",
            "true or false",
        ),
        ({"type": "contains", "value": "x" * 10_001}, "checks[0].value", "at most 10,000"),
        ({"type": "json", "value": 1}, "checks[0].value", "takes nothing but its type"),
        (
            {"type": "regex", "pattern": "(unclosed"},
            "checks[0].pattern",
            "not a valid regular expression",
        ),
        ({"type": "regex", "pattern": "a" * 1001}, "checks[0].pattern", "at most 1,000"),
        ({"type": "json_schema", "schema": []}, "checks[0].schema", "must be a JSON Schema"),
        (
            {"type": "json_schema", "schema": {"type": "objekt"}},
            "checks[0].schema",
            "not a valid JSON Schema",
        ),
        (
            {"type": "json_schema", "schema": {"$ref": "https://example.com/s.json"}},
            "checks[0].schema",
            "points outside the schema",
        ),
        (
            {"type": "json_schema", "schema": {"pattern": "(x"}},
            "checks[0].schema",
            "at pattern: '(x' is not a valid regular expression",
        ),
        (
            {"type": "json_schema", "schema": {"enum": ["x" * 70_000]}},
            "checks[0].schema",
            "at most 65,536 bytes",
        ),
        ({"type": "max_chars", "value": -1}, "checks[0].value", "whole number"),
        ({"type": "max_chars", "value": True}, "checks[0].value", "whole number"),
        ({"type": "max_chars", "value": 1.5}, "checks[0].value", "whole number"),
        (
            {"type": "tool_called", "name": "f", "arguments": [1]},
            "checks[0].arguments",
            "must be an object",
        ),
        ({"type": "judge", "rubric": ""}, "checks[0].rubric", "must not be empty"),
        ({"type": "judge", "rubric": "x", "model": 7}, "checks[0].model", "must be a string"),
    ],
)
def test_parse_check_refuses_naming_the_field(check: object, field: str, words: str) -> None:
    with pytest.raises(InvalidCheck) as caught:
        parse_check(check, "checks[0]")

    assert caught.value.field == field
    assert words in caught.value.message


def test_parse_checks_names_the_index_of_the_bad_one() -> None:
    with pytest.raises(InvalidCheck) as caught:
        parse_checks([{"type": "json"}, {"type": "json"}, {"type": "regex", "pattern": "["}])

    assert caught.value.field == "checks[2].pattern"


@pytest.mark.parametrize(
    ("value", "words"), [({}, "must be a list"), ([{"type": "json"}] * 51, "at most 50")]
)
def test_parse_checks_refuses_the_list(value: object, words: str) -> None:
    with pytest.raises(InvalidCheck, match=words):
        parse_checks(value)


def test_parse_checks_judge_keeps_rubric_and_model() -> None:
    (check,) = parse_checks([{"type": "judge", "rubric": "cites a file"}])

    assert check == JudgeCheck(rubric="cites a file", model=None)
