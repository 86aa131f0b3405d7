"""What a finished run means to a CI job: the exit code under thresholds, the summary's
last line, and the JUnit XML."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

import pytest

from sysprompt_core.evaluations.report import Thresholds, junit_xml, outcome, summary_text


def run(status: str = "finished", **summary: Any) -> dict[str, Any]:
    counts = {"cases": 2, "regressions": 0, "fixes": 0, "errors": 0, "same_pass": 2}
    rates = {"baseline": {"pass_rate": 1.0}, "candidate": {"pass_rate": 1.0}}
    return {"id": 1, "suite": "s", "candidate": "latest", "baseline": {"label": "production"},
            "status": status, "summary": {**counts, **rates, **summary}}  # fmt: skip


@pytest.mark.parametrize(
    ("given", "thresholds", "code"),
    [
        (run(), Thresholds(), 0),
        (run(regressions=1), Thresholds(), 1),
        (run(regressions=1), Thresholds(max_regressions=1), 0),
        (run(errors=1), Thresholds(max_regressions=5), 1),
        (run(candidate={"pass_rate": 0.5}), Thresholds(min_pass_rate=0.9), 1),
        (run("failed"), Thresholds(), 2),
        (run("cancelled"), Thresholds(), 2),
        (run("running"), Thresholds(), 2),
        ({**run(), "summary": None}, Thresholds(), 2),
    ],
)
def test_outcome_is_the_exit_code_under_the_thresholds(
    given: dict[str, Any], thresholds: Thresholds, code: int
) -> None:
    assert outcome(given, thresholds) == code


def test_summary_text_ends_with_why_it_failed() -> None:
    text = summary_text(run(regressions=2, errors=1))

    assert text.splitlines()[-1] == (
        "FAILED: 1 case(s) ended in an error; 2 regression(s), at most 0"
    )


def test_junit_has_a_failure_per_regression_and_an_error_per_error() -> None:
    side = {"pass_rate": 1.0, "checks": [], "error": None}
    failed = {
        "pass_rate": 0.0,
        "checks": [{"type": "contains", "passed": False, "reason": "no <x>"}],
    }
    results = [
        {"case": "a", "verdict": "regression", "baseline": side, "candidate": failed},
        {"case": "b", "verdict": "error", "error": "cwd gone", "baseline": side, "candidate": side},
        {"case": "c", "verdict": "same_pass", "baseline": side, "candidate": side},
    ]

    root = ElementTree.fromstring(junit_xml(run(), results))

    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    a, b, c = root.iter("testcase")
    assert a.find("failure").text == "contains: no <x>"  # type: ignore[union-attr]
    assert b.find("error").get("message") == "cwd gone"  # type: ignore[union-attr]
    assert c.find("failure") is None and c.find("error") is None
