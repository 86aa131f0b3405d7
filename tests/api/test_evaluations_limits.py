"""Evaluations over the API, as a run starts: its plan without starting it
(``POST /api/evaluations/plan``), the limits' refusals in the documented shapes (400 on
``calls``, 429 with ``detail`` and, for the budget, ``Retry-After``), a side naming a
release or label that does not exist refused with the field named, and the default
model said when a run names none; once finished, a run whose calls failed says so
(``cases_in_error``), and its tokens and cost per side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt.evaluations.execution import run_execute
from tests.api.evaluation_support import EVALUATIONS, case_body, make_suite, stored
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import models_setting, production_on_release

PLAN = f"{EVALUATIONS}/plan"
PRICED = {"price_input": 2.0, "price_output": 8.0}


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def fake(fake_model: FakeModel) -> FakeModel:
    fake_model.reset()
    fake_model.control(latency_ms=0)
    return fake_model


@pytest.fixture
def real_models(settings: Settings, fake: FakeModel, allowed_root: Path) -> FakeModel:
    """A real model configured (openai kind, on the fake model process), with prices."""
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": [str(allowed_root)],
        "MODELS": models_setting(fake, **PRICED),
    }
    return fake


def _judge(rubric: str) -> dict[str, Any]:
    return {"type": "judge", "rubric": rubric}


@pytest.mark.django_db
@pytest.mark.usefixtures("production")
class TestPlan:
    def test_plan_says_the_calls_the_cost_and_the_limits_and_starts_nothing(
        self, author_client: APIClient, real_models: FakeModel
    ) -> None:
        make_suite(author_client, "s", case_body("one", _judge("tabs")), case_body("two"))
        before = stored()

        plan = author_client.post(
            PLAN, {"suite": "s", "candidate": "latest", "repeat": 3}, format="json"
        )

        assert plan.status_code == 200, plan.json()
        body = plan.json()
        assert (body["cases"], body["repeat"], body["calls"], body["judge_calls"]) == (2, 3, 18, 6)
        assert (body["baseline_model"], body["candidate_model"]) == ("fake", "fake")
        assert body["default_model"] is True
        # 12 answers and 6 verdicts, each at max_tokens (1,024) at 8 per million, and more
        # for their inputs at 2 per million.
        assert 18 * 1024 * 8 / 1e6 < body["cost"] < 18 * 1200 * 8 / 1e6
        assert body["unpriced"] == []
        assert body["limits"] == {
            "max_calls_per_run": 1000,
            "max_runs_per_user": 2,
            "runs_going": [],
            "daily_budget": None,
            "spent_today": 0.0,
            "reserved": 0.0,
        }
        assert (body["allowed"], body["refused"], body["refused_status"]) == (True, None, None)
        assert stored() == before
        assert real_models.requests() == []

    def test_plan_says_why_a_start_would_be_refused(
        self, author_client: APIClient, real_models: FakeModel, settings: Settings
    ) -> None:
        settings.SYSPROMPT = {**settings.SYSPROMPT, "EVAL_MAX_CALLS_PER_RUN": 10}
        make_suite(author_client, "s", case_body("one", _judge("a"), _judge("b")))

        body = author_client.post(
            PLAN, {"suite": "s", "candidate": "latest", "repeat": 2}, format="json"
        ).json()

        assert (body["calls"], body["allowed"], body["refused_status"]) == (12, False, 400)
        assert body["refused"].startswith("This run would make up to 12 model calls")

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"candidate": 99}, "candidate"),
            ({"candidate": {"release": 99}}, "candidate"),
            ({"baseline": 99}, "baseline"),
            ({"baseline": {"label": "staging"}}, "baseline.label"),
            ({"candidate": {"label": "staging"}}, "candidate.label"),
        ],
    )
    @pytest.mark.parametrize("path", [EVALUATIONS, PLAN])
    def test_side_that_does_not_exist_is_refused_naming_the_field(
        self, author_client: APIClient, change: dict[str, Any], field: str, path: str
    ) -> None:
        make_suite(author_client, "s", case_body("one"))
        before = stored()

        response = author_client.post(
            path, {"suite": "s", "candidate": "latest", **change}, format="json"
        )

        assert response.status_code == 400, response.json()
        [message] = response.json()[field]
        assert message.startswith(("There is no release 99", "There is no label 'staging'"))
        assert stored() == before


@pytest.mark.django_db
@pytest.mark.usefixtures("production")
class TestRefusals:
    def test_too_many_calls_is_a_400_saying_how_many(
        self, author_client: APIClient, settings: Settings
    ) -> None:
        settings.SYSPROMPT = {**settings.SYSPROMPT, "EVAL_MAX_CALLS_PER_RUN": 3}
        make_suite(author_client, "s", case_body("one"), case_body("two"))
        before = stored()

        response = author_client.post(
            EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
        )

        assert response.status_code == 400
        assert response.json() == {
            "calls": [
                "This run would make up to 4 model calls (2 cases × 2 sides × 1 repetition); "
                "at most 3 are allowed per run (SYSPROMPT_EVAL_MAX_CALLS_PER_RUN). Run fewer "
                "repetitions or a smaller suite."
            ]
        }
        assert stored() == before

    def test_a_third_run_at_once_is_a_429(self, author_client: APIClient) -> None:
        make_suite(author_client, "s", case_body("one"))
        ids = [
            author_client.post(
                EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
            ).json()["id"]
            for _ in range(2)
        ]

        refused = author_client.post(
            EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
        )
        plan = author_client.post(PLAN, {"suite": "s", "candidate": "latest"}, format="json").json()

        assert refused.status_code == 429
        assert refused["Content-Type"] == "application/json"
        assert refused.json() == {"detail": refused.json()["detail"]}
        assert f"You have 2 runs queued or running ({ids[0]}, {ids[1]})" in refused.json()["detail"]
        assert "Retry-After" not in refused
        assert (plan["limits"]["runs_going"], plan["refused_status"]) == (ids, 429)

    def test_the_budget_is_a_429_with_retry_after_the_day_ends(
        self, author_client: APIClient, real_models: FakeModel, settings: Settings
    ) -> None:
        settings.SYSPROMPT = {**settings.SYSPROMPT, "EVAL_DAILY_BUDGET": 0.01}
        make_suite(author_client, "s", case_body("one"))  # two answers: ≥ 0.016

        refused = author_client.post(
            EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
        )

        assert refused.status_code == 429
        assert "the daily budget is 0.0100" in refused.json()["detail"]
        assert 0 < int(refused["Retry-After"]) <= 86_400
        assert real_models.requests() == []


@pytest.mark.django_db(transaction=True)
def test_run_naming_no_model_uses_the_configured_real_model_and_says_so(
    author_client: APIClient, real_models: FakeModel
) -> None:
    from sysprompt.releases.services import production_ensure

    production_ensure()
    make_suite(author_client, "s", case_body("one"))

    started = author_client.post(
        EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
    ).json()
    named = author_client.post(
        EVALUATIONS, {"suite": "s", "candidate": "latest", "model": "echo"}, format="json"
    ).json()
    assert run_execute(started["id"]) == "finished"
    run = author_client.get(f"{EVALUATIONS}/{started['id']}").json()

    assert (started["baseline_model"], started["candidate_model"]) == ("fake", "fake")
    assert started["default_model"] is True
    assert (named["candidate_model"], named["default_model"]) == ("echo", False)
    assert (run["candidate_model"], run["default_model"]) == ("fake", True)
    assert len(real_models.requests()) == 1  # both sides' prompts the same: one call


@pytest.mark.django_db(transaction=True)
def test_run_whose_calls_all_failed_says_so_and_shows_no_tokens(
    author_client: APIClient, real_models: FakeModel
) -> None:
    from sysprompt.releases.services import production_ensure

    production_ensure()
    production_on_release("Old rules", then="New rules")
    make_suite(author_client, "s", case_body("one"), case_body("two"))
    real_models.control(script=[{"status": 400}] * 4)  # the model refuses every call

    run_id = author_client.post(
        EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
    ).json()["id"]
    assert run_execute(run_id) == "finished"
    run = author_client.get(f"{EVALUATIONS}/{run_id}").json()
    listed = author_client.get(EVALUATIONS).json()["results"][0]
    results = author_client.get(f"{EVALUATIONS}/{run_id}/results").json()["results"]

    assert (run["status"], run["cases_in_error"]) == ("finished", 2)
    assert listed["cases_in_error"] == 2
    assert run["summary"]["errors"] == 2
    assert run["summary"]["calls_failed"] == 4
    assert run["spent"] == 0.0
    for result in results:
        for side in ("baseline", "candidate"):
            assert result[side]["error"] == "model fake: HTTP 400: scripted 400"
            assert (result[side]["input_tokens"], result[side]["output_tokens"]) == (None, None)
            assert result[side]["cost"] is None


@pytest.mark.django_db(transaction=True)
def test_run_gives_tokens_and_cost_per_side_per_case_and_what_it_spent(
    author_client: APIClient, real_models: FakeModel
) -> None:
    from sysprompt.releases.services import production_ensure

    production_ensure()
    production_on_release("Old rules", then="New rules")
    make_suite(author_client, "s", case_body("one"))

    run_id = author_client.post(
        EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
    ).json()["id"]
    assert run_execute(run_id) == "finished"
    run = author_client.get(f"{EVALUATIONS}/{run_id}").json()
    [result] = author_client.get(f"{EVALUATIONS}/{run_id}/results").json()["results"]

    assert run["cases_in_error"] == 0
    for side in ("baseline", "candidate"):
        tokens_in, tokens_out = result[side]["input_tokens"], result[side]["output_tokens"]
        assert tokens_in > 0 and tokens_out > 0
        assert result[side]["cost"] == pytest.approx((tokens_in * 2.0 + tokens_out * 8.0) / 1e6)
        assert run["summary"][side]["cost"] == pytest.approx(result[side]["cost"])
    assert run["spent"] == pytest.approx(
        run["summary"]["baseline"]["cost"] + run["summary"]["candidate"]["cost"]
    )
    assert run["planned_calls"] == 2
    assert run["planned_cost"] > run["spent"]
