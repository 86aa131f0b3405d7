"""A finished run's verdicts and summary, from its saved calls.

Each case's sides become :class:`~sysprompt_core.evaluations.Repetition` lists (a
``both`` call counts for each side), compared by
:func:`~sysprompt_core.evaluations.verdict`; a case that could not be rendered is an
``error``. The summary: cases, each side's pass rate (the share of its case
repetitions that passed every check, over the cases that rendered), regressions,
fixes, errors, calls made, served from the cache and failed, cases whose prompt did
not change, tokens and cost per side (at the models' prices, cached answers included),
what the run spent (the calls it made, judges included), and the seconds it took.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.evaluations.models import Run, RunCall, RunCase
from sysprompt_core.evaluations import Repetition, pass_rate, verdict

SIDES = ("baseline", "candidate")
CHUNK = 1000
"""Rows read (and verdicts written) at a time: the summary of a run of any size holds
a few small objects per case, never the rows themselves."""


def _repetition(call: RunCall) -> Repetition:
    passed = tuple(bool(check.get("passed")) for check in call.checks)
    return Repetition(passed, error=call.error or None)


def run_summary(run: Run) -> dict[str, Any]:
    """Set each case's verdict and answer the run's summary."""
    endpoints = app_settings().models
    repetitions: dict[int, dict[str, list[Repetition]]] = defaultdict(
        lambda: {s: [] for s in SIDES}
    )
    tokens = {side: {"input": 0, "output": 0} for side in SIDES}
    made = cached = failed = 0
    calls = RunCall.objects.filter(run=run).only(
        "run_case_id", "side", "checks", "error", "cached", "input_tokens", "output_tokens"
    )
    for call in calls.iterator(chunk_size=CHUNK):
        for side in SIDES if call.side == "both" else (call.side,):
            repetitions[call.run_case_id][side].append(_repetition(call))
            tokens[side]["input"] += call.input_tokens or 0
            tokens[side]["output"] += call.output_tokens or 0
        if call.cached:
            cached += 1
        else:
            made += 1
        failed += 1 if call.error else 0
    counts = {"regression": 0, "fix": 0, "same_pass": 0, "same_fail": 0, "error": 0}
    rates: dict[str, list[Repetition]] = {side: [] for side in SIDES}
    unchanged = total = 0
    by_verdict: dict[str, list[int]] = defaultdict(list)
    cases = RunCase.objects.filter(run=run).only("id", "error", "prompt_changed")
    for case in cases.iterator(chunk_size=CHUNK):
        total += 1
        sides = repetitions.pop(case.id, None)
        said = (
            "error"
            if case.error or sides is None
            else verdict(sides["baseline"], sides["candidate"])
        )
        by_verdict[said].append(case.id)
        counts[said] += 1
        unchanged += 0 if case.prompt_changed or case.error else 1
        if sides is not None and not case.error:
            for side in SIDES:
                rates[side].extend(sides[side])
    for name, ids in by_verdict.items():
        for start in range(0, len(ids), CHUNK):
            RunCase.objects.filter(id__in=ids[start : start + CHUNK]).update(verdict=name)
    seconds = None
    if run.started_at is not None:
        seconds = round((timezone.now() - run.started_at).total_seconds(), 3)
    model_of = {"baseline": run.baseline_model, "candidate": run.candidate_model}
    return {
        "cases": total,
        "baseline": {
            "pass_rate": pass_rate(rates["baseline"]),
            "input_tokens": tokens["baseline"]["input"],
            "output_tokens": tokens["baseline"]["output"],
            "cost": _cost(endpoints.get(model_of["baseline"]), tokens["baseline"]),
        },
        "candidate": {
            "pass_rate": pass_rate(rates["candidate"]),
            "input_tokens": tokens["candidate"]["input"],
            "output_tokens": tokens["candidate"]["output"],
            "cost": _cost(endpoints.get(model_of["candidate"]), tokens["candidate"]),
        },
        "regressions": counts["regression"],
        "fixes": counts["fix"],
        "same_pass": counts["same_pass"],
        "same_fail": counts["same_fail"],
        "errors": counts["error"],
        "calls_made": made,
        "calls_cached": cached,
        "calls_failed": failed,
        "spent": round(run.spent, 6),
        "unchanged_prompts": unchanged,
        "seconds": seconds,
    }


def _cost(endpoint: Any, tokens: dict[str, int]) -> float | None:
    if endpoint is None:
        return None
    cost = endpoint.cost(tokens["input"], tokens["output"])
    return None if cost is None else round(cost, 6)
