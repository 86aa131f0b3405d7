"""A run and its results as the API answers them (and ``manage.py evaluate`` reads them).

run → :func:`run_json` (status, progress, summary); its cases, regressions first, then
errors, fixes, the rest (``selectors.run_results``) → :func:`run_results_json`: per case
and side each repetition's answer and tool calls, every check's result, the pass rate,
tokens the provider reported (null when it reported none: every call failed, or a
provider such as ``echo``) and what they cost at the model's prices, the mean latency
and the first error; a call made once for both sides (``both``, the prompts were the
same) counts for each.

Beside the tokens the provider reported, :func:`side_counts` counts the side's system
prompt and each answer here (``sysprompt.prompts.token_counts.count_tokens`` with the
side's endpoint kind and model: exact for OpenAI's models, a marked estimate otherwise,
calibrated by the kind's ``TOKEN_RATIOS`` ratio when one is set), so a reader
sees how big the prompt is, and an answer's size, even where the provider reported
nothing (a cached answer keeps the first call's usage; ``echo`` reports none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from sysprompt.conf import app_settings
from sysprompt.evaluations.models import Run, RunCall, RunCase
from sysprompt.evaluations.selectors import run_errors, run_results
from sysprompt.model_endpoints import ModelEndpoint
from sysprompt.prompts.token_counts import count_tokens, token_ratios
from sysprompt_core.evaluations import Repetition, pass_rate
from sysprompt_core.tokens import TokenCount, encoding_for

SIDES = ("baseline", "candidate")


def run_json(run: Run) -> dict[str, Any]:
    return {
        "id": run.pk,
        "prompt": run.prompt.name,
        "suite": run.suite_name,
        "candidate": run.candidate,
        "baseline": run.baseline,
        "candidate_model": run.candidate_model,
        "baseline_model": run.baseline_model,
        "default_model": run.default_model,
        "repeat": run.repeat,
        "status": run.status,
        "cases_in_error": run_errors(run),
        "progress": {"done": run.done, "total": run.total},
        "planned_calls": run.planned_calls,
        "planned_cost": run.planned_cost,
        "spent": round(run.spent, 6),
        "summary": run.summary,
        "error": run.error,
        "created_by": run.created_by.get_username() if run.created_by else None,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


def run_results_json(run: Run) -> list[dict[str, Any]]:
    return [case_result(case) for case in run_results(run)]


def case_result(case: RunCase) -> dict[str, Any]:
    calls = sorted(case.calls.all(), key=lambda call: call.repetition)
    sides = {}
    for side in SIDES:
        mine = [c for c in calls if c.side in (side, "both")]
        sides[side] = _side(mine, getattr(case.run, f"{side}_model"))
        counts = side_counts(case, side, mine)
        sides[side]["counted"] = {
            "prompt_tokens": counts.prompt.tokens if counts.prompt else None,
            "output_tokens": [counted.tokens for counted in counts.outputs],
            "exact": counts.exact,
            "error": counts.failure,
        }
    return {
        "case": case.case_name,
        "prompt_changed": case.prompt_changed,
        "verdict": case.verdict,
        "error": case.error,
        **sides,
    }


@dataclass(frozen=True)
class Usage:
    """One side's calls of a case: the tokens the provider reported (None: it reported
    none — every call failed, or a provider such as ``echo``), their cost at the model's
    prices (None: no prices, or no tokens), how many calls are done and how many of
    them failed."""

    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    done: int
    failed: int


def _reported(values: list[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def side_usage(calls: list[RunCall], model: str) -> Usage:
    """The usage of a side's ``calls`` (those done) answered by endpoint ``model``."""
    done = [call for call in calls if call.done]
    input_tokens = _reported([call.input_tokens for call in done])
    output_tokens = _reported([call.output_tokens for call in done])
    endpoint = _endpoint(model)
    cost = None
    if endpoint is not None and (input_tokens is not None or output_tokens is not None):
        cost = endpoint.cost(input_tokens or 0, output_tokens or 0)
    return Usage(
        input_tokens,
        output_tokens,
        None if cost is None else round(cost, 6),
        len(done),
        sum(1 for call in done if call.error),
    )


def _side(calls: list[RunCall], model: str) -> dict[str, Any]:
    done = [call for call in calls if call.done]
    timed = [call.ms for call in done if call.ms is not None]
    errors = [call.error for call in done if call.error]
    repetitions = [
        Repetition(tuple(bool(c.get("passed")) for c in call.checks), call.error or None)
        for call in done
    ]
    usage = side_usage(calls, model)
    return {
        "outputs": [call.output for call in done],
        "tool_calls": [call.tool_calls for call in done],
        "checks": [
            {"repetition": call.repetition, **check} for call in done for check in call.checks
        ],
        "pass_rate": pass_rate(repetitions),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost": usage.cost,
        "ms": round(sum(timed) / len(timed), 3) if timed else None,
        "error": errors[0] if errors else None,
    }


def _endpoint(name: str) -> ModelEndpoint | None:
    """The endpoint a run's model name stands for (None when the settings no longer
    name it)."""
    try:
        return app_settings().models.get(name)
    except ImproperlyConfigured:
        return None


@dataclass(frozen=True)
class SideCounts:
    """A side's system prompt (``None``: not rendered) and each done answer, counted."""

    prompt: TokenCount | None
    outputs: list[TokenCount]
    exact: bool

    @property
    def failure(self) -> str | None:
        """Why the prompt or an answer could not be counted (its count is then None)."""
        counts = [self.prompt, *self.outputs]
        return next((c.failure for c in counts if c is not None and c.failure), None)


def side_counts(case: RunCase, side: str, calls: list[RunCall]) -> SideCounts:
    """Count ``case``'s prompt for ``side`` (``baseline`` or ``candidate``) and the answers
    of its done ``calls`` with the tokenizer of the side's model."""
    provider, model = _identity(getattr(case.run, f"{side}_model"))
    prompt_text = case.baseline_prompt if side == "baseline" else case.candidate_prompt
    ratios = token_ratios()
    prompt = (
        count_tokens(prompt_text, provider=provider, model=model, ratios=ratios)
        if prompt_text
        else None
    )
    outputs = [
        count_tokens(call.output, provider=provider, model=model, ratios=ratios)
        for call in calls
        if call.done
    ]
    return SideCounts(prompt, outputs, encoding_for(provider, model)[1])


def _identity(endpoint: str) -> tuple[str | None, str]:
    """The provider kind and model id an endpoint name stands for (the name itself when
    the settings no longer name it)."""
    found = _endpoint(endpoint)
    if found is None:
        return None, endpoint
    return found.kind, found.model
