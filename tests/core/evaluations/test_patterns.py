"""Issue 31, point 2: an author's pattern is measured before it is compiled — its repeat
counts, its nesting and the size the ``regex`` module would build — and nothing keeps
what was compiled. A ``regex`` check's pattern and every pattern a JSON Schema holds
alike. (``a{4294967294}`` asked the module for about 20 GB when a case was saved.)

The patterns that would take gigabytes if compiled are only ever tried in a child
process whose address space is bounded (``RLIMIT_AS``): in this one, without the
bounds, they would take the machine's memory."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest

from sysprompt_core.evaluations import InvalidCheck, parse_check, parse_checks
from sysprompt_core.limits import (
    EVAL_CASE_PATTERNS_MAX_SIZE,
    EVAL_PATTERN_MAX_REPEAT,
    EVAL_PATTERN_MAX_SIZE,
)

HUGE = "a{4294967294}"
LARGE = "a{2000}"
"""Over the bounds, and cheap to compile (0.5 MB) had they not been checked."""


def regex(pattern: str) -> dict[str, object]:
    return {"type": "regex", "pattern": pattern}


def schema(value: object) -> dict[str, object]:
    return {"type": "json_schema", "schema": value}


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        (LARGE, "repeats 2,000 times; a counted repeat may ask for at most 1,000"),
        ("x.{0,5000}", "repeats 5,000 times"),
        ("(?x) a { 5000 }", "repeats 5,000 times"),  # verbose mode: spaces in the braces
        ("(?:a{1000}){10}", "more than 5,000 parts"),
        ("(?:(?:(?:ab){20}){20}){20}", "more than 5,000 parts"),
        ("(?:(?:a{100})?){60}", "more than 5,000 parts"),  # built even when optional
        ("(?:abc){e<=5000}", "a fuzzy match may allow at most 1,000"),
        ("(" * 21 + "a" + ")" * 21, "nests groups, alternatives and repeats more than 20 deep"),
        ("(" * 400 + "a" + ")" * 400, "more than 20 deep"),
        ("a" * 1_001, "at most 1,000 characters"),
        (r"\L<words>", "not a valid regular expression"),
        ("(?1)", "not a valid regular expression: unknown group"),
    ],
)
def test_pattern_refused_before_it_is_compiled(pattern: str, words: str) -> None:
    with pytest.raises(InvalidCheck) as caught:
        parse_check(regex(pattern), "checks[0]")

    assert caught.value.field == "checks[0].pattern"
    assert words in caught.value.message


@pytest.mark.parametrize(
    "pattern",
    [
        r"\d{3}-\d{4}",
        f"a{{{EVAL_PATTERN_MAX_REPEAT}}}",
        "(?:a{100}){49}",  # 4,900 + the groups: just within
        "(?:x{1,1000}){1,1000}",  # open maxima are not built
        r"(?i)^[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}$",
        "(?:abc){e<=2}",
        "(?x) a # b{99999} is a comment\n c",
    ],
)
def test_pattern_within_the_bounds_is_compiled(pattern: str) -> None:
    check = parse_check(regex(pattern), "checks[0]")

    assert check.type == "regex"


@pytest.mark.parametrize(
    "value",
    [
        {"pattern": LARGE},
        {"patternProperties": {LARGE: {}}},
        {"properties": {"a": {"items": {"pattern": LARGE}}}},
        {"propertyNames": {"pattern": LARGE}},
        {"$defs": {"x": {"pattern": LARGE}}},
        {"not": {"pattern": "(?:a{1000}){10}"}},
        {"pattern": "a" * 1_001},
    ],
)
def test_schema_pattern_refused_like_a_regex_check(value: dict[str, object]) -> None:
    with pytest.raises(InvalidCheck) as caught:
        parse_check(schema(value), "checks[0]")

    assert caught.value.field == "checks[0].schema"
    assert any(
        words in caught.value.message
        for words in ("a counted repeat may ask", "more than 5,000 parts", "1,000 characters")
    ), caught.value.message


def test_patterns_of_one_case_share_a_budget() -> None:
    near_limit = "(?:a{100}){48}"  # 4,850 parts: near EVAL_PATTERN_MAX_SIZE
    fits = EVAL_CASE_PATTERNS_MAX_SIZE // EVAL_PATTERN_MAX_SIZE
    # each pattern different (a pattern repeated within one schema is compiled once)
    checks = [regex(f"{n}{near_limit}") for n in range(fits - 1)]
    checks.append(schema({"properties": {"a": {"pattern": near_limit}}}))
    parse_checks(checks)

    with pytest.raises(InvalidCheck) as caught:
        parse_checks([*checks, regex(f"x{near_limit}")])

    assert caught.value.field == f"checks[{fits}].pattern"
    assert "this case's checks together may have at most 20,000 parts" in caught.value.message


MEMORY = 1024 * 1_048_576
"""The address space the child below may take: enough for the project, far from what
``a{4294967294}`` would ask."""
REFUSE_IN_A_BOUNDED_CHILD = """
import json, sys
from sysprompt_core.evaluations import InvalidCheck, parse_check
answers = []
for check in json.loads(sys.argv[1]):
    try:
        parse_check(check, "checks[0]")
        answers.append("accepted")
    except InvalidCheck as error:
        answers.append(error.message)
print(json.dumps(answers))
"""


def _bounded_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def test_pattern_huge_repeat_refused_within_a_bounded_address_space() -> None:
    checks = [
        regex(HUGE),
        regex("a{5000000}"),
        schema({"pattern": HUGE}),
        schema({"patternProperties": {HUGE: {}}}),
        schema({"type": "object", "additionalProperties": {"pattern": "(?:a{1000}){1000}"}}),
    ]

    done = subprocess.run(
        [sys.executable, "-c", REFUSE_IN_A_BOUNDED_CHILD, json.dumps(checks)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_bounded_child,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    answers = json.loads(done.stdout)
    assert len(answers) == len(checks)
    assert all(
        "a counted repeat may ask" in answer or "more than 5,000 parts" in answer
        for answer in answers
    ), answers


NO_CACHE_KEPT = """
import json, sys
from sysprompt_core.evaluations import Answer, parse_check, run_check

def rss_mb():
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    return int(fields["VmRSS"].split()[0]) / 1024

def patterns(n):  # each one different, each near the largest allowed
    return f"(?:{n:04d}a{{95}}){{49}}"

started = rss_mb()
for n in range(150):
    run_check(parse_check({"type": "regex", "pattern": patterns(n)}, "c"), Answer("x"))
    value = {"properties": {"a": {"pattern": patterns(1000 + n)}}}
    check = parse_check({"type": "json_schema", "schema": value}, "c")
    run_check(check, Answer('{"a": "x"}'))
print(json.dumps(rss_mb() - started))
"""


def test_patterns_compiled_are_not_kept_once_used() -> None:
    # 300 patterns of about 1.5 MB compiled each: kept in the regex module's cache, they
    # took 400 MB; compiled and dropped, the process stays near where it started.
    done = subprocess.run(
        [sys.executable, "-c", NO_CACHE_KEPT],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_bounded_child,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) < 60, f"grew {done.stdout.strip()} MB"
