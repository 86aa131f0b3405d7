"""What a finished run means to a CI job: passed or not, the summary as text, the
results as JUnit XML. Shared by ``manage.py evaluate`` and the client's
``sysprompt-eval``, which both read the API's shapes (``GET /api/evaluations/{id}`` and
``…/results``).

started run (``POST /api/evaluations``' answer) → :func:`started_text` (stderr: the
models each side is answered by — saying when one is the default — and the plan) → …
run → :func:`outcome` (the exit code: 0 passed, 1 failed, 2 the run did not finish) →
:func:`summary_text` (stdout: a run with cases in error says so first) →
:func:`junit_xml` (one testcase per case; a regression is a failure, an error an error).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

__all__ = [
    "EXIT_ERROR",
    "EXIT_FAILED",
    "EXIT_PASSED",
    "Thresholds",
    "junit_xml",
    "outcome",
    "started_text",
    "summary_text",
]

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_ERROR = 2


@dataclass(frozen=True)
class Thresholds:
    """When a finished run passes: at most ``max_regressions`` regressions, the
    candidate's pass rate at least ``min_pass_rate``, and no error. The defaults are a
    run without regression; a label's gate (evaluations §4) gives its own."""

    max_regressions: int = 0
    min_pass_rate: float = 0.0


def failures(summary: Mapping[str, Any], thresholds: Thresholds = Thresholds()) -> list[str]:
    """Why a finished run's ``summary`` does not pass ``thresholds`` (empty: it passes);
    cases in error first: a run with errors never passes."""
    reasons = []
    errors = int(summary.get("errors", 0))
    if errors:
        reasons.append(f"{errors} case(s) ended in an error")
    regressions = int(summary.get("regressions", 0))
    if regressions > thresholds.max_regressions:
        reasons.append(f"{regressions} regression(s), at most {thresholds.max_regressions}")
    rate = float(summary.get("candidate", {}).get("pass_rate", 0.0))
    if rate < thresholds.min_pass_rate:
        reasons.append(f"candidate pass rate {rate:.1%}, at least {thresholds.min_pass_rate:.1%}")
    return reasons


def outcome(run: Mapping[str, Any], thresholds: Thresholds = Thresholds()) -> int:
    """The exit code for ``run`` (the API's shape): 0 when it finished and passes, 1
    when it finished and does not, 2 when it did not finish (failed, cancelled, still
    going)."""
    if run.get("status") != "finished" or not isinstance(run.get("summary"), Mapping):
        return EXIT_ERROR
    return EXIT_FAILED if failures(run["summary"], thresholds) else EXIT_PASSED


def _side(value: object) -> str:
    if isinstance(value, Mapping) and "label" in value:
        return f"label {value['label']}"
    return "latest" if value == "latest" else f"release {value}"


def _models(run: Mapping[str, Any]) -> str:
    baseline, candidate = run.get("baseline_model"), run.get("candidate_model")
    named = f"model {candidate}" if baseline == candidate else f"models {baseline} → {candidate}"
    return named + (" (the default: none was named)" if run.get("default_model") else "")


def started_text(started: Mapping[str, Any], suite: str) -> str:
    """The line a command writes as a run starts: its id, the models (saying when one is
    the server's default, so a run never silently gets ``echo``) and its plan."""
    cost = started.get("planned_cost")
    plan = f"at most {started.get('planned_calls')} model call(s)"
    if isinstance(cost, int | float):
        plan += f", costing at most {cost:.4g}"
    return f"evaluation {started.get('id')} started (suite {suite}, {_models(started)}; {plan})\n"


def summary_text(run: Mapping[str, Any], thresholds: Thresholds = Thresholds()) -> str:
    """A few lines a person reads in a CI log; a run with cases in error says so first."""
    summary = run.get("summary")
    status = str(run.get("status"))
    errors = int(summary.get("errors", 0)) if isinstance(summary, Mapping) else 0
    if errors:
        status += f" with {errors} case(s) in error"
    lines = [
        f"evaluation {run.get('id')} of suite {run.get('suite')}: {_side(run.get('candidate'))}"
        f" against {_side(run.get('baseline'))} — {status}"
    ]
    if run.get("baseline_model"):
        lines.append(_models(run))
    if isinstance(summary, Mapping):
        base, cand = summary.get("baseline", {}), summary.get("candidate", {})
        lines += [
            f"cases {summary.get('cases')}: {summary.get('errors')} error(s), "
            f"{summary.get('regressions')} regression(s), {summary.get('fixes')} fix(es), "
            f"{summary.get('same_pass')} same pass, {summary.get('same_fail')} same fail",
            f"pass rate: baseline {float(base.get('pass_rate', 0)):.1%}, "
            f"candidate {float(cand.get('pass_rate', 0)):.1%}",
            f"calls: {summary.get('calls_made')} made, {summary.get('calls_cached')} from cache; "
            f"{summary.get('unchanged_prompts')} case(s) with an unchanged prompt",
        ]
        reasons = failures(summary, thresholds)
        lines.append("FAILED: " + "; ".join(reasons) if reasons else "PASSED")
    elif run.get("error"):
        lines.append(f"error: {run['error']}")
    return "\n".join(lines) + "\n"


def junit_xml(run: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> bytes:
    """JUnit XML: one testsuite (the run's suite), one testcase per case; a regression
    is a ``failure``, an error an ``error``, each with the candidate's failed checks."""
    suite = str(run.get("suite", ""))
    regressions = sum(1 for r in results if r.get("verdict") == "regression")
    errors = sum(1 for r in results if r.get("verdict") == "error")
    summary = run.get("summary") if isinstance(run.get("summary"), Mapping) else {}
    root = ElementTree.Element(
        "testsuite",
        name=suite,
        tests=str(len(results)),
        failures=str(regressions),
        errors=str(errors),
        time=str((summary or {}).get("seconds") or 0),
    )
    for result in results:
        case = ElementTree.SubElement(
            root, "testcase", classname=f"sysprompt.{suite}", name=str(result.get("case", ""))
        )
        verdict = result.get("verdict")
        candidate = result.get("candidate", {})
        if verdict == "regression":
            failed = [c for c in candidate.get("checks", []) if not c.get("passed")]
            node = ElementTree.SubElement(
                case,
                "failure",
                message=(
                    f"regression: pass rate {float(result['baseline']['pass_rate']):.0%} → "
                    f"{float(candidate.get('pass_rate', 0)):.0%}"
                ),
                type="regression",
            )
            node.text = "\n".join(f"{c.get('type')}: {c.get('reason')}" for c in failed)
        elif verdict == "error":
            why = result.get("error") or candidate.get("error") or result["baseline"].get("error")
            ElementTree.SubElement(case, "error", message=str(why or "error"), type="error")
        ElementTree.SubElement(case, "system-out").text = f"verdict: {verdict}"
    written: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return written
