"""The limits on model calls (docs/evaluations.md, "Limits"): calls per run, runs at once
per user, a budget per day in the models' prices — each refusing a run as it starts,
with nothing stored — and what a run spends, counted as its calls are made (the worker
stops a run once today's runs have spent the budget). In-process, against the fake
model process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.errors import InvalidInput, RunRefused
from sysprompt.evaluations import services
from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import Run
from sysprompt.releases import services as releases
from tests.evaluations.fake_model import openai_body
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import case, models_setting, production_on_release, run, suite_with
from tests.releases.support import AUTHOR, user

pytestmark = pytest.mark.django_db(transaction=True)

TABS = {"type": "contains", "value": "tabs"}
PRICED = {"price_input": 1_000_000, "price_output": 1_000_000}
"""A million per million tokens: a call costs its tokens, so a cost reads as tokens."""


@pytest.fixture
def configured(settings: Settings, fake: FakeModel, allowed_root: Path) -> Settings:
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": [str(allowed_root)],
        "MODELS": models_setting(fake, **PRICED),
    }
    releases.production_ensure()
    production_on_release("ANSWER: Use tabs.", then="ANSWER: Use spaces.")
    return settings


def _set(settings: Settings, **more: Any) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, **more}


def _import(suite: str, count: int, *checks: dict[str, Any]) -> None:
    services.suite_create(name=suite, author=None)
    lines = [json.dumps(case(f"c{n}", *checks)) for n in range(count)]
    services.cases_import(suite=suite, text="\n".join(lines), author=None)


def test_run_refused_by_default_when_it_would_make_5000_calls(
    configured: Settings, fake: FakeModel
) -> None:
    # The run: an import of 50 cases with 4 judge checks each, repeat 10, fresh.
    judges = [{"type": "judge", "rubric": f"rubric {n}"} for n in range(4)]
    _import("big", 50, *judges)

    with pytest.raises(InvalidInput) as refused:
        run("big", "latest", model="fake", repeat=10, fresh=True)

    assert refused.value.field == "calls"
    assert "up to 5,000 model calls (50 cases × 2 sides × 10 repetitions" in refused.value.message
    assert "4,000 of them judges' calls" in refused.value.message
    assert "at most 1,000 are allowed per run" in refused.value.message
    assert not Run.objects.exists()
    assert fake.requests() == []


def test_run_within_the_calls_limit_starts_with_its_plan(configured: Settings) -> None:
    _set(configured, EVAL_MAX_CALLS_PER_RUN=12)
    _import("judged", 3, {"type": "judge", "rubric": "tabs"})

    started = run("judged", "latest", model="fake")  # 3 cases × 2 sides × (1 + 1 judge)
    with pytest.raises(InvalidInput, match="up to 24 model calls"):
        run("judged", "latest", model="fake", repeat=2)

    assert started.planned_calls == 12
    assert started.planned_cost is not None and started.planned_cost > 12 * 1024
    assert list(Run.objects.values_list("pk", flat=True)) == [started.pk]


def test_runs_at_once_are_limited_per_user(configured: Settings) -> None:
    suite_with("style", case("indent", TABS))
    ada, bob = user("ada", AUTHOR), user("bob", AUTHOR)

    first = services.run_create(suite="style", candidate="latest", author=ada)
    second = services.run_create(suite="style", candidate="latest", author=ada)
    with pytest.raises(RunRefused) as refused:
        services.run_create(suite="style", candidate="latest", author=ada)
    bobs = services.run_create(suite="style", candidate="latest", author=bob)
    services.run_cancel(run_id=first.pk, author=ada)
    again = services.run_create(suite="style", candidate="latest", author=ada)

    assert f"You have 2 runs queued or running ({first.pk}, {second.pk})" in str(refused.value)
    assert "at most 2 at once (SYSPROMPT_EVAL_MAX_RUNS_PER_USER)" in str(refused.value)
    assert refused.value.retry_after is None
    assert Run.objects.filter(created_by=ada).count() == 3
    assert bobs.created_by == bob and again.created_by == ada


def test_runs_at_once_without_a_user_count_as_one_users(configured: Settings) -> None:
    _set(configured, EVAL_MAX_RUNS_PER_USER=1)
    suite_with("style", case("indent", TABS))
    run("style", "latest")

    with pytest.raises(RunRefused, match="You have 1 runs queued or running"):
        run("style", "latest")


def test_budget_counts_what_runs_going_may_spend_and_what_todays_runs_spent(
    configured: Settings,
) -> None:
    _set(configured, EVAL_MAX_RUNS_PER_USER=10)
    suite_with("style", case("indent", TABS))
    plan = run("style", "latest", model="fake")  # two answers of at most 1,024 tokens
    assert plan.planned_cost is not None and 2 * 1024 < plan.planned_cost < 2 * 1100
    _set(configured, EVAL_DAILY_BUDGET=2.5 * plan.planned_cost)

    second = run("style", "latest", model="fake")
    with pytest.raises(RunRefused) as refused:
        run("style", "latest", model="fake")  # two plans held, a third would pass the budget
    assert run_execute(plan.pk) == "finished"  # spends far less than its plan
    third = run("style", "latest", model="fake")

    message = str(refused.value)
    assert f"This run may cost up to {plan.planned_cost:,.4f}" in message
    assert f"the runs going may yet spend {2 * plan.planned_cost:,.4f}" in message
    assert "(SYSPROMPT_EVAL_DAILY_BUDGET)" in message
    assert refused.value.retry_after is not None and 0 < refused.value.retry_after <= 86_400
    spent = Run.objects.get(pk=plan.pk).spent
    assert 0 < spent < plan.planned_cost / 10
    assert second.pk < third.pk


def test_budget_refuses_a_run_on_a_model_without_prices(
    configured: Settings, fake: FakeModel
) -> None:
    _set(configured, MODELS=models_setting(fake), EVAL_DAILY_BUDGET=100.0)
    suite_with("style", case("indent", TABS))

    with pytest.raises(InvalidInput) as refused:
        run("style", "latest", model="fake")
    free = run("style", "latest", model="echo")  # echo costs nothing

    assert refused.value.field == "model"
    assert "model fake has no prices" in refused.value.message
    assert free.planned_cost == 0.0


def test_run_spends_what_its_calls_cost_judges_included_and_nothing_from_the_cache(
    configured: Settings, fake: FakeModel
) -> None:
    suite_with("judged", case("indent", TABS, {"type": "judge", "rubric": "tabs"}))

    first = run("judged", "latest", model="fake")
    assert run_execute(first.pk) == "finished"
    again = run("judged", "latest", model="fake")
    assert run_execute(again.pk) == "finished"

    usage = [openai_body(request["body"])["usage"] for request in fake.requests()]
    assert len(usage) == 4  # two answers, two judges' verdicts; the second run: the cache
    expected = sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage)
    first.refresh_from_db()
    again.refresh_from_db()
    assert first.spent == pytest.approx(expected)
    assert first.summary is not None and first.summary["spent"] == pytest.approx(expected)
    assert again.spent == 0.0


def test_worker_stops_a_run_once_todays_runs_spent_the_budget(
    configured: Settings, fake: FakeModel
) -> None:
    suite_with("style", case("indent", TABS), case("other", TABS))
    first = run("style", "latest", model="fake")
    assert run_execute(first.pk) == "finished"
    later = run("style", "latest", model="fake", fresh=True)
    first.refresh_from_db()
    _set(configured, EVAL_DAILY_BUDGET=first.spent)  # spent already, by today's first run
    asked = len(fake.requests())

    assert run_execute(later.pk) == "failed"

    later.refresh_from_db()
    assert later.error.startswith(f"the daily budget of {first.spent:,.4f}")
    assert "the run stopped making calls" in later.error
    assert len(fake.requests()) == asked
    assert later.spent == 0.0


@pytest.mark.parametrize(("author_name", "limit"), [("ada", 1), (None, 1)])
def test_refused_run_stores_nothing_and_records_nothing(
    configured: Settings, author_name: str | None, limit: int
) -> None:
    from sysprompt.events.models import AuditRecord

    _set(configured, EVAL_MAX_RUNS_PER_USER=limit)
    suite_with("style", case("indent", TABS))
    author: User | None = user(author_name, AUTHOR) if author_name else None
    services.run_create(suite="style", candidate="latest", author=author)
    before = (Run.objects.count(), AuditRecord.objects.count())

    with pytest.raises(RunRefused):
        services.run_create(suite="style", candidate="latest", author=author)

    assert (Run.objects.count(), AuditRecord.objects.count()) == before
