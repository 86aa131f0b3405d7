"""A run's plan, read before it starts: the model calls it may make, what they may cost,
and the limits that refuse a run as it starts (docs/evaluations.md, "Limits").

a run's fields → :func:`run_request_valid` (each checked, a 400 naming the field: the
suite, both sides — a release or a label that does not exist is refused here, not
found out by the worker — the models, or the default's, ``repeat``, ``fresh``) →
:func:`run_plan` (the suite's cases read once) → :func:`plan_refusal` against
:func:`limits_now` (what :func:`plan_check` raises):

* **calls**, at most: per case and repetition, each side's answer and one call per
  judge check of that answer, ``2 × repeat × (1 + judges)``. A run makes fewer where
  both sides' prompts are the same (one call serves both) or the response cache
  answers (without ``fresh``); neither is known before the cases are rendered, so the
  plan counts the most. Over ``EVAL_MAX_CALLS_PER_RUN``: 400 on ``calls``.
* **cost**, at most, in the models' price units: each answer at its model's
  ``max_tokens``, each input estimated (the side's template as written — fragments and
  values not expanded — with the case's turns and tools; a judge's instructions, the
  turns, an answer of ``max_tokens`` and the rubric), counted with ``o200k_base``.
  ``None`` when a model the run calls has no prices (``echo`` costs nothing).
* **runs at once**: the user's runs queued or running (runs started without a user —
  ``manage.py evaluate`` — count as one user's); at ``EVAL_MAX_RUNS_PER_USER``: 429.
* **budget** (``EVAL_DAILY_BUDGET``): what the runs started today spent, plus what
  the runs still going may yet spend (their plan's cost less what they spent), plus
  this plan's cost, within the budget, else 429 until the day ends (the server's
  ``TIME_ZONE``). A run on a model without prices is refused (400 on the model): its
  cost could not be counted. The workers keep to it as well: once today's runs have
  spent the budget, a run stops (``failed``, saying why).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Sum
from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput, LabelNotFound, ReleaseNotFound, RunRefused
from sysprompt.evaluations.models import Case, Run, Suite
from sysprompt.evaluations.selectors import suite_get
from sysprompt.evaluations.validation import (
    RunSide,
    model_valid,
    repeat_valid,
    run_side_valid,
    suite_name_valid,
)
from sysprompt.events.services import Actor
from sysprompt.model_endpoints import ModelEndpoint
from sysprompt.prompts.catalog import prompt_get, prompt_or_default
from sysprompt.prompts.models import Prompt
from sysprompt.releases.selectors import label_get, pointer_build
from sysprompt_core.evaluations import JUDGE_SYSTEM_PROMPT
from sysprompt_core.prompt_names import DEFAULT_PROMPT
from sysprompt_core.releases import PRODUCTION, Pointer
from sysprompt_core.tokens import count

__all__ = [
    "Limits",
    "RunPlan",
    "RunRequest",
    "limits_now",
    "plan_check",
    "plan_refusal",
    "run_plan",
    "run_request_valid",
    "spent_today",
]

GOING = ("queued", "running")
CASES_CHUNK = 500
JUDGE_FRAME = "<conversation>\n\n</conversation>\n<answer>\n\n</answer>\n<rubric>\n\n</rubric>"
"""What a judge's user turn adds around the turns, the answer and the rubric."""


@dataclass(frozen=True)
class RunRequest:
    """A run's fields, each checked: what ``services.run_create`` stores."""

    prompt: Prompt
    """The prompt whose suite runs, and whose releases and labels the sides are."""
    suite: Suite
    candidate: RunSide
    baseline: RunSide
    baseline_model: str
    candidate_model: str
    default_model: bool
    """A side named no model and got ``EVAL_DEFAULT_MODEL``'s."""
    repeat: int
    fresh: bool
    prompts: Mapping[str, tuple[str, ...]]
    """Per side (``baseline``, ``candidate``): the templates it renders from, as written."""


@dataclass(frozen=True)
class RunPlan:
    request: RunRequest
    cases: int
    calls: int
    """The most model calls the run may make, judges included."""
    judge_calls: int
    cost: float | None
    """What the calls may cost at most (None: ``unpriced`` names a model without prices)."""
    unpriced: tuple[str, ...]


@dataclass(frozen=True)
class Limits:
    """The limits a run is held to as it starts, and where its user and today stand."""

    max_calls: int
    max_runs: int
    runs_going: tuple[int, ...]
    """The ids of the user's runs queued or running."""
    budget: float | None
    spent_today: float
    reserved: float
    """What the runs still going may yet spend, by their plans."""
    day_ends: datetime


def run_request_valid(
    *,
    suite: object,
    candidate: object,
    baseline: object = None,
    model: object = None,
    baseline_model: object = None,
    candidate_model: object = None,
    repeat: object = None,
    fresh: object = False,
    prompt: object = None,
) -> RunRequest:
    """The fields of a run, each checked (:class:`InvalidInput` naming the first bad one;
    ``SuiteNotFound`` for an unknown suite, ``PromptNotFound`` for an unknown prompt).
    ``prompt``: a :class:`Prompt` or its name (``None``: ``default``); the suite is that
    prompt's, and a release or label of the sides must exist in that prompt."""
    mine = _prompt_of(prompt)
    if not isinstance(suite, str):
        raise InvalidInput("suite", "the name of a suite")
    row = suite_get(suite_name_valid(suite, "suite"), prompt=mine)
    candidate_side = run_side_valid(candidate, "candidate")
    baseline_side = run_side_valid(
        {"label": PRODUCTION} if baseline is None else baseline, "baseline"
    )
    if model is not None and (baseline_model is not None or candidate_model is not None):
        raise InvalidInput("model", "give model, or baseline_model and candidate_model, not both")
    default = model_valid(model, "model")
    if not isinstance(fresh, bool):
        raise InvalidInput("fresh", "true or false")
    checked_repeat = repeat_valid(repeat)
    read: dict[Pointer, str] = {}
    return RunRequest(
        prompt=mine,
        suite=row,
        candidate=candidate_side,
        baseline=baseline_side,
        baseline_model=(
            default if baseline_model is None else model_valid(baseline_model, "baseline_model")
        ),
        candidate_model=(
            default if candidate_model is None else model_valid(candidate_model, "candidate_model")
        ),
        default_model=model is None and (baseline_model is None or candidate_model is None),
        repeat=checked_repeat,
        fresh=fresh,
        prompts={
            "baseline": _side_prompts(baseline_side, "baseline", read, mine),
            "candidate": _side_prompts(candidate_side, "candidate", read, mine),
        },
    )


def _prompt_of(prompt: object) -> Prompt:
    if prompt is None or isinstance(prompt, Prompt):
        return prompt_or_default(prompt)
    if not isinstance(prompt, str):
        raise InvalidInput("prompt", "the name of a prompt, such as support/triage")
    return prompt_get(prompt, field="prompt")


def _side_prompts(
    side: RunSide, field: str, read: dict[Pointer, str], prompt: Prompt
) -> tuple[str, ...]:
    """The templates ``side`` renders from (a split label's arms: each arm's), read once
    per pointer; a release or label that does not exist in ``prompt`` is a 400 on
    ``field``."""
    if isinstance(side, dict):
        try:
            pointers = label_get(side["label"], prompt=prompt).target.pointers
        except LabelNotFound as error:
            raise InvalidInput(f"{field}.label", str(error)) from None
    else:
        pointers = (side,)
    for pointer in pointers:
        if pointer not in read:
            try:
                read[pointer] = pointer_build(pointer, prompt=prompt)[0].text
            except ReleaseNotFound as error:
                said = str(error) if prompt.name == DEFAULT_PROMPT else _no_release(pointer, prompt)
                raise InvalidInput(field, said) from None
    return tuple(read[pointer] for pointer in pointers)


def _no_release(pointer: Pointer, prompt: Prompt) -> str:
    return (
        f"The prompt {prompt.name!r} has no release {pointer}; GET "
        f"/api/prompts/{prompt.name}/-/releases lists them (release numbers count per prompt)."
    )


def _tokens(text: str) -> int:
    """The text's tokens; a text that could not be counted is priced at one token a
    character, which no tokenizer exceeds."""
    if not text:
        return 0
    tokens = count(text).tokens
    return len(text) if tokens is None else tokens


class _Tally:
    """Input and output tokens per model, and the calls."""

    def __init__(self) -> None:
        self.tokens: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.calls = 0
        self.judge_calls = 0

    def add(self, endpoint: ModelEndpoint, tokens_in: int, tokens_out: int, times: int) -> None:
        tally = self.tokens[endpoint.name]
        tally[0] += tokens_in * times
        tally[1] += tokens_out * times


def _max_tokens(endpoint: ModelEndpoint) -> int:
    return int(endpoint.params.get("max_tokens") or 0)


def run_plan(request: RunRequest) -> RunPlan:
    """The most calls ``request`` may make and what they may cost (the module docstring)."""
    endpoints = app_settings().models
    sides = [
        (
            endpoints[getattr(request, f"{side}_model")],
            max(_tokens(text) for text in request.prompts[side]),
        )
        for side in ("baseline", "candidate")
    ]
    judge_frame = _tokens(JUDGE_SYSTEM_PROMPT) + _tokens(JUDGE_FRAME)
    tally = _Tally()
    cases = 0
    rows = Case.objects.filter(suite=request.suite).order_by("id")
    for messages, tools, checks in rows.values_list("messages", "tools", "checks").iterator(
        chunk_size=CASES_CHUNK
    ):
        cases += 1
        turns = _tokens(_turns_text(messages)) + (_tokens(json.dumps(tools)) if tools else 0)
        judges = [check for check in checks if _is_judge(check)]
        for endpoint, prompt in sides:
            answer = _max_tokens(endpoint)
            tally.add(endpoint, prompt + turns, answer, request.repeat)
            for check in judges:
                judge = endpoints.get(str(check.get("model") or endpoint.name), endpoint)
                asked = judge_frame + turns + answer + _tokens(str(check.get("rubric", "")))
                tally.add(judge, asked, _max_tokens(judge), request.repeat)
        tally.calls += 2 * request.repeat * (1 + len(judges))
        tally.judge_calls += 2 * request.repeat * len(judges)
    cost, unpriced = _cost(tally, endpoints)
    return RunPlan(request, cases, tally.calls, tally.judge_calls, cost, unpriced)


def _turns_text(messages: Sequence[Any]) -> str:
    return "\n".join(str(turn.get("content", "")) for turn in messages if isinstance(turn, dict))


def _is_judge(check: object) -> bool:
    return isinstance(check, dict) and check.get("type") == "judge"


def _cost(
    tally: _Tally, endpoints: Mapping[str, ModelEndpoint]
) -> tuple[float | None, tuple[str, ...]]:
    total = 0.0
    unpriced = []
    for name, (tokens_in, tokens_out) in sorted(tally.tokens.items()):
        endpoint = endpoints[name]
        if endpoint.kind == "echo":
            continue
        cost = endpoint.cost(tokens_in, tokens_out)
        if cost is None:
            unpriced.append(name)
        else:
            total += cost
    return (None if unpriced else round(total, 6)), tuple(unpriced)


def spent_today(now: datetime | None = None) -> float:
    """What the runs started today (the server's ``TIME_ZONE``) have spent."""
    start = _day_start(now or timezone.now())
    spent = Run.objects.filter(created_at__gte=start).aggregate(total=Sum("spent"))["total"]
    return float(spent or 0.0)


def _day_start(now: datetime) -> datetime:
    return timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)


def _user(author: Actor) -> Any:
    return author if author is not None and author.is_authenticated else None


def limits_now(author: Actor) -> Limits:
    """The limits, the runs ``author`` has going, and today's spending."""
    conf = app_settings()
    user = _user(author)
    going = Run.objects.filter(status__in=GOING)
    mine = going.filter(created_by=user) if user is not None else going.filter(created_by=None)
    now = timezone.now()
    plans = going.exclude(planned_cost=None).values_list("planned_cost", "spent")
    reserved = sum((max(0.0, (planned or 0.0) - spent) for planned, spent in plans), 0.0)
    return Limits(
        max_calls=conf.eval_max_calls_per_run,
        max_runs=conf.eval_max_runs_per_user,
        runs_going=tuple(mine.order_by("id").values_list("id", flat=True)),
        budget=conf.eval_daily_budget,
        spent_today=spent_today(now),
        reserved=round(reserved, 6),
        day_ends=_day_start(now) + timedelta(days=1),
    )


def plan_refusal(plan: RunPlan, limits: Limits) -> InvalidInput | RunRefused | None:
    """Why ``plan`` may not start now (the error :func:`plan_check` raises), or None."""
    if plan.calls > limits.max_calls:
        return InvalidInput("calls", _too_many_calls(plan, limits))
    if len(limits.runs_going) >= limits.max_runs:
        ids = ", ".join(str(run_id) for run_id in limits.runs_going)
        return RunRefused(
            f"You have {len(limits.runs_going)} runs queued or running ({ids}); at most "
            f"{limits.max_runs} at once (SYSPROMPT_EVAL_MAX_RUNS_PER_USER). Start this one "
            "when one of them has ended, or cancel one."
        )
    if limits.budget is None:
        return None
    if plan.unpriced:
        return InvalidInput(
            "model",
            f"model {plan.unpriced[0]} has no prices (price_input, price_output in "
            "SYSPROMPT_MODELS), and a daily budget is set (SYSPROMPT_EVAL_DAILY_BUDGET): "
            "a run on it could not be counted against the budget",
        )
    committed = limits.spent_today + limits.reserved
    if committed + (plan.cost or 0.0) > limits.budget:
        seconds = math.ceil((limits.day_ends - timezone.now()).total_seconds())
        return RunRefused(
            f"This run may cost up to {plan.cost:,.4f}; today's runs spent "
            f"{limits.spent_today:,.4f} and the runs going may yet spend "
            f"{limits.reserved:,.4f}, and the daily budget is {limits.budget:,.4f} "
            "(SYSPROMPT_EVAL_DAILY_BUDGET). Run fewer cases or repetitions, or wait for "
            "the day to end.",
            retry_after=max(1, seconds),
        )
    return None


def _too_many_calls(plan: RunPlan, limits: Limits) -> str:
    request = plan.request
    judges = f", {plan.judge_calls:,} of them judges' calls" if plan.judge_calls else ""
    return (
        f"This run would make up to {plan.calls:,} model calls ({plan.cases:,} "
        f"case{'s' if plan.cases != 1 else ''} × 2 "
        f"sides × {request.repeat} repetition{'s' if request.repeat != 1 else ''}{judges}); "
        f"at most {limits.max_calls:,} are allowed per run "
        "(SYSPROMPT_EVAL_MAX_CALLS_PER_RUN). Run fewer repetitions or a smaller suite."
    )


def plan_check(plan: RunPlan, author: Actor) -> Limits:
    """Raise what refuses ``plan`` now (:func:`plan_refusal`); else the limits read."""
    limits = limits_now(author)
    refusal = plan_refusal(plan, limits)
    if refusal is not None:
        raise refusal
    return limits
