"""Issue 31, points 1, 4 and 5: a ``json_schema`` check fetches nothing, runs every
pattern its schema holds under the pattern's time limit, and is bounded in size and
depth before it is checked.

The attacks that used to work: an ``$id`` under an unknown keyword made jsonschema
``urlopen`` it (http, file) and show the document in the reason, or hang on a listener
that never answers; ``unevaluatedProperties`` and ``additionalProperties`` ran
``patternProperties`` with Python's ``re`` (``^(a+)+$`` on 30 a's: 114 s, the GIL
held); ``{"allOf": [{}×20000]}`` took 9 s to check, ``not`` nested 400 deep a
RecursionError. The ones that could hang run in a child process with a deadline.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sysprompt_core.evaluations import Answer, InvalidCheck, parse_check, parse_checks, run_check
from sysprompt_core.evaluations.schemas import BoundedSchema, schema_outcome
from tests.core.evaluations.listening import OPENED, SECRET, Listener, id_trick, secret_file


@pytest.fixture
def listener() -> Iterator[Listener]:
    served = Listener()
    yield served
    served.close()


@pytest.fixture
def silent() -> Iterator[Listener]:
    served = Listener(silent=True)
    yield served
    served.close()


@pytest.fixture
def secret(tmp_path: Path) -> str:
    return secret_file(tmp_path)


def test_schema_id_trick_is_refused_and_nothing_is_fetched(listener: Listener, secret: str) -> None:
    for uri in (listener.url, secret):
        with pytest.raises(InvalidCheck) as caught:
            check = parse_check({"type": "json_schema", "schema": id_trick(uri)}, "checks[0]")
            run_check(check, Answer('{"a": "x"}'))  # what used to fetch

        assert caught.value.field == "checks[0].schema"
        assert "at x-hidden/properties/a/$id: only the root may have an $id" in str(caught.value)
    assert listener.connections == []
    assert OPENED == []


@pytest.mark.parametrize("where", ["http", "file", "silent"])
def test_schema_outcome_resolves_nothing_outside_the_schema(
    listener: Listener, silent: Listener, secret: str, where: str
) -> None:
    # What a case stored before the $id rule may hold: the validator itself must not fetch.
    uri = {"http": listener.url, "file": secret, "silent": silent.url}[where]
    started = time.monotonic()

    outcome = schema_outcome(BoundedSchema(id_trick(uri)), {"a": "x"})

    assert listener.connections == [] and silent.connections == []
    assert OPENED == []
    assert outcome.error is True and outcome.passed is False
    assert "could not be resolved" in outcome.reason and "nothing is fetched" in outcome.reason
    assert SECRET not in outcome.reason
    assert time.monotonic() - started < 5  # a silent listener used to hang it for ever


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (
            {"properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}},
            "at properties/a/$schema: a check's schema is JSON Schema 2020-12",
        ),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, "at $schema:"),
        ({"$defs": {"a": {"$id": "https://example.com/a"}}}, "at $defs/a/$id: only the root"),
        ({"$dynamicRef": "https://example.com/s#meta"}, "$dynamicRef"),
        ({"items": {"$ref": "file:///etc/passwd"}}, "points outside the schema"),
    ],
)
def test_schema_references_only_inside_the_schema(value: dict[str, object], words: str) -> None:
    with pytest.raises(InvalidCheck) as caught:
        parse_check({"type": "json_schema", "schema": value}, "checks[0]")

    assert caught.value.field == "checks[0].schema"
    assert words in caught.value.message


def test_schema_root_dialect_and_id_are_accepted() -> None:
    value = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/answer.json",
        "$defs": {"name": {"type": "string"}},
        "properties": {"name": {"$ref": "#/$defs/name"}},
    }
    check = parse_check({"type": "json_schema", "schema": value}, "checks[0]")

    assert run_check(check, Answer('{"name": "x"}')).passed is True
    assert run_check(check, Answer('{"name": 1}')).passed is False


RUN_IN_A_CHILD = """
import json, sys, time
from sysprompt_core.evaluations import Answer, parse_check, run_check
schema, answer = json.loads(sys.argv[1]), sys.argv[2]
started = time.monotonic()
result = run_check(parse_check({"type": "json_schema", "schema": schema}, "c"), Answer(answer))
print(json.dumps([result.passed, result.reason, time.monotonic() - started]))
"""


def run_in_a_child(schema: object, answer: object) -> tuple[bool, str, float]:
    """The check's outcome, from a child given 60 s (the attacks ran for minutes to
    hours, holding the GIL: a thread could not stop them)."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_IN_A_CHILD, json.dumps(schema), json.dumps(answer)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    passed, reason, seconds = json.loads(done.stdout)
    return passed, reason, seconds


REGEX_ONLY_SLOW = "^(a+)+$"
"""Catastrophic for Python's ``re``; the ``regex`` module answers it at once."""
BOTH_SLOW = "(x+x+)+y"
"""Catastrophic for both: the pattern's time limit must stop it."""


@pytest.mark.parametrize("keyword", ["unevaluatedProperties", "additionalProperties"])
def test_schema_keywords_that_rerun_patterns_use_the_bounded_ones(keyword: str) -> None:
    schema = {"patternProperties": {REGEX_ONLY_SLOW: {}}, keyword: False}

    passed, reason, _ = run_in_a_child(schema, {"a" * 40 + "!": 1})

    assert passed is False
    assert "properties are not allowed ('aaaa" in reason


@pytest.mark.parametrize("keyword", ["unevaluatedProperties", "additionalProperties"])
def test_schema_keywords_that_rerun_patterns_stop_at_the_time_limit(keyword: str) -> None:
    schema = {keyword: False, "patternProperties": {BOTH_SLOW: {}}}  # that keyword first

    passed, reason, seconds = run_in_a_child(schema, {"x" * 5_000: 1})

    assert passed is False
    assert f"the schema's pattern '{BOTH_SLOW}' took longer than 0.25 s" in reason
    assert seconds < 10


def test_schema_unevaluated_properties_sees_what_subschemas_evaluate() -> None:
    schema = {
        "allOf": [{"patternProperties": {"^x-": {}}}],
        "$defs": {"id": {"properties": {"id": {"type": "integer"}}}},
        "$ref": "#/$defs/id",
        "if": {"required": ["kind"]},
        "then": {"properties": {"kind": {}}},
        "unevaluatedProperties": False,
    }
    check = parse_check({"type": "json_schema", "schema": schema}, "checks[0]")

    assert run_check(check, Answer('{"id": 1, "x-a": 0, "kind": "k"}')).passed is True
    failed = run_check(check, Answer('{"id": 1, "y": 0}'))
    assert failed.passed is False
    assert failed.reason == "unevaluated properties are not allowed ('y' unexpected)"


def deep(keyword: str, levels: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(levels):
        value = {keyword: value}
    return value


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"allOf": [{}] * 20_000}, "is too large: a schema may hold at most 1,000 values"),
        ({"enum": list(range(1_000))}, "is too large"),
        (deep("not", 400), "nests objects and arrays more than 32 deep"),
        (deep("not", 32), "more than 32 deep"),  # 33 objects
    ],
)
def test_schema_bounded_in_size_and_depth_before_it_is_checked(value: object, words: str) -> None:
    started = time.monotonic()

    with pytest.raises(InvalidCheck) as caught:
        parse_check({"type": "json_schema", "schema": value}, "checks[0]")

    assert caught.value.field == "checks[0].schema"
    assert words in caught.value.message
    assert time.monotonic() - started < 5  # checked, {"allOf": [{}×20000]} took 9 s


def test_schema_depth_and_size_within_the_bounds_are_checked() -> None:
    check = parse_check(
        {"type": "json_schema", "schema": {"allOf": [deep("not", 28)] * 10}}, "checks[0]"
    )

    assert run_check(check, Answer("1")).passed is True


def test_schemas_of_one_case_share_a_budget() -> None:
    big = {"type": "json_schema", "schema": {"enum": list(range(990))}}  # 992 values

    parse_checks([big, big])
    with pytest.raises(InvalidCheck) as caught:
        parse_checks([big, big, {"type": "json_schema", "schema": {"enum": list(range(20))}}])

    assert caught.value.field == "checks[2].schema"
    assert "may hold at most 2,000 values together" in caught.value.message
