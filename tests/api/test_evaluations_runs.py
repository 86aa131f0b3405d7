"""Evaluations §3 and §5: starting a run (202), the list newest first, one run, its
results (regressions first, then errors, fixes, the rest; a call made once for both
sides counts for both) and cancelling. Runs are done in-process (``run_execute``) with
the built-in echo model."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import RunCase
from sysprompt_core.tokens import count
from tests.api.evaluation_support import EVALUATIONS, case_body, make_suite, stored
from tests.evaluations.support import production_on_release


def _contains(text: str) -> dict[str, Any]:
    return {"type": "contains", "value": text}


@pytest.mark.django_db
@pytest.mark.usefixtures("production")
class TestStart:
    def test_run_starts_queued_and_is_shown_when_listed(self, author_client: APIClient) -> None:
        make_suite(author_client, "s", case_body("one"))

        first = author_client.post(
            EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
        )
        second = author_client.post(
            EVALUATIONS,
            {"suite": "s", "candidate": {"label": "production"}, "repeat": 2, "model": "echo"},
            format="json",
        )
        page = author_client.get(EVALUATIONS, {"page_size": 1})
        one = author_client.get(f"{EVALUATIONS}/{first.json()['id']}")

        assert first.status_code == 202
        assert first.json() == {
            "id": first.json()["id"],
            "prompt": "default",
            "status": "queued",
            "baseline_model": "echo",
            "candidate_model": "echo",
            "default_model": True,  # none named, no real model configured: echo, said so
            "planned_calls": 2,
            "planned_cost": 0.0,
        }
        assert [r["id"] for r in page.json()["results"]] == [second.json()["id"]]
        assert page.json()["next"]
        body = one.json()
        assert body["prompt"] == "default"
        assert body["suite"] == "s"
        assert body["candidate"] == "latest"
        assert body["baseline"] == {"label": "production"}
        assert body["status"] == "queued"
        assert body["progress"] == {"done": 0, "total": 0}
        assert body["summary"] is None
        assert body["created_by"] == "author"
        assert body["finished_at"] is None

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"candidate": "tomorrow"}, "candidate"),
            ({"candidate": 2**40}, "candidate"),
            ({"baseline": {"label": "Bad Label"}}, "baseline.label"),
            ({"model": "nowhere"}, "model"),
            ({"model": "echo", "candidate_model": "echo"}, "model"),
            ({"repeat": 11}, "repeat"),
            ({"fresh": "yes"}, "fresh"),
            ({"suite": 3}, "suite"),
        ],
    )
    def test_run_start_names_the_bad_field_and_stores_nothing(
        self, author_client: APIClient, change: dict[str, Any], field: str
    ) -> None:
        make_suite(author_client, "s", case_body("one"))
        before = stored()

        response = author_client.post(
            EVALUATIONS, {"suite": "s", "candidate": "latest", **change}, format="json"
        )

        assert response.status_code == 400
        assert field in response.json(), response.json()
        assert stored() == before

    def test_run_start_answers_404_for_a_missing_suite(self, author_client: APIClient) -> None:
        response = author_client.post(
            EVALUATIONS, {"suite": "missing", "candidate": "latest"}, format="json"
        )

        assert response.status_code == 404

    def test_cancel_stops_a_queued_run_and_leaves_an_ended_one(
        self, author_client: APIClient
    ) -> None:
        make_suite(author_client, "s", case_body("one"))
        run_id = author_client.post(
            EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
        ).json()["id"]

        cancelled = author_client.post(f"{EVALUATIONS}/{run_id}/cancel")
        again = author_client.post(f"{EVALUATIONS}/{run_id}/cancel")

        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        assert cancelled.json()["finished_at"] is not None
        assert again.json()["status"] == "cancelled"

    @pytest.mark.parametrize("suffix", ["", "/results", "/cancel"])
    @pytest.mark.parametrize("run_id", ["999", "0", "99999999999"])
    def test_run_answers_404_when_missing(
        self, author_client: APIClient, suffix: str, run_id: str
    ) -> None:
        path = f"{EVALUATIONS}/{run_id}{suffix}"
        response = author_client.post(path) if suffix == "/cancel" else author_client.get(path)

        assert response.status_code == 404
        assert "There is no evaluation" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_results_order_regressions_errors_fixes_then_the_rest(
    author_client: APIClient, workdir: Path
) -> None:
    production_on_release("Old rules", then="New rules")
    gone = workdir / "gone"
    gone.mkdir()
    make_suite(
        author_client,
        "s",
        case_body("same", _contains("question same")),
        case_body("fix", _contains("first line: New")),
        case_body("err", context={"cwd": str(gone)}),
        case_body("reg", _contains("first line: Old")),
    )
    shutil.rmtree(gone)
    run_id = author_client.post(
        EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
    ).json()["id"]
    assert run_execute(run_id) == "finished"

    run = author_client.get(f"{EVALUATIONS}/{run_id}").json()
    results = author_client.get(f"{EVALUATIONS}/{run_id}/results").json()["results"]

    assert run["status"] == "finished"
    assert run["progress"] == {"done": 6, "total": 6}
    assert run["summary"]["regressions"] == run["summary"]["fixes"] == 1
    assert run["summary"]["errors"] == 1
    assert [(r["case"], r["verdict"]) for r in results] == [
        ("reg", "regression"),
        ("err", "error"),
        ("fix", "fix"),
        ("same", "same_pass"),
    ]
    reg = results[0]
    assert reg["prompt_changed"] is True
    assert reg["baseline"]["outputs"][0].startswith("system sha256: ")
    assert "first line: Old rules" in reg["baseline"]["outputs"][0]
    assert reg["baseline"]["checks"] == [
        {
            "repetition": 0,
            "type": "contains",
            "passed": True,
            "reason": reg["baseline"]["checks"][0]["reason"],
        }
    ]
    assert reg["baseline"]["pass_rate"] == 1.0
    assert reg["candidate"]["pass_rate"] == 0.0
    assert reg["candidate"]["checks"][0]["passed"] is False
    assert set(reg["candidate"]) == {
        "outputs",
        "tool_calls",
        "checks",
        "pass_rate",
        "input_tokens",
        "output_tokens",
        "cost",
        "counted",
        "ms",
        "error",
    }
    # Beside the provider's usage (echo reports none), the prompt and answer counted here:
    # an estimate, as echo is no OpenAI model.
    prompt = RunCase.objects.get(run_id=run_id, case_name="reg").candidate_prompt
    assert prompt is not None
    assert reg["candidate"]["counted"] == {
        "prompt_tokens": count(prompt, provider="echo", model="echo").tokens,
        "output_tokens": [count(reg["candidate"]["outputs"][0]).tokens],
        "exact": False,
        "error": None,
    }
    assert reg["candidate"]["counted"]["prompt_tokens"] > 0
    assert results[1]["error"]
    assert results[1]["baseline"]["outputs"] == []
    assert results[1]["baseline"]["counted"] == {
        "prompt_tokens": None,
        "output_tokens": [],
        "exact": False,
        "error": None,
    }

    # Paged like every list: one case a page, in the same order, back and forth.
    pages = [author_client.get(f"{EVALUATIONS}/{run_id}/results", {"page_size": 1}).json()]
    while pages[-1]["next"] is not None:
        pages.append(author_client.get(pages[-1]["next"]).json())
    assert [sorted(page) for page in pages] == [["next", "previous", "results"]] * 4
    assert [page["results"] for page in pages] == [[result] for result in results]
    assert pages[0]["previous"] is None
    back = author_client.get(pages[-1]["previous"]).json()
    assert back["results"] == [results[2]]


@pytest.mark.parametrize(
    ("query", "status"), [({"page_size": "0"}, 400), ({"cursor": "not-a-cursor"}, 404)]
)
def test_results_refuse_a_bad_page(
    author_client: APIClient, query: dict[str, str], status: int
) -> None:
    make_suite(author_client, "s", case_body("one", _contains("question one")))
    run_id = author_client.post(
        EVALUATIONS, {"suite": "s", "candidate": "latest"}, format="json"
    ).json()["id"]

    response = author_client.get(f"{EVALUATIONS}/{run_id}/results", query)

    assert response.status_code == status, response.json()


@pytest.mark.django_db(transaction=True)
def test_results_count_a_call_made_once_for_both_sides(author_client: APIClient) -> None:
    make_suite(author_client, "s", case_body("one", _contains("question one")))
    run_id = author_client.post(
        EVALUATIONS, {"suite": "s", "candidate": "latest", "repeat": 2}, format="json"
    ).json()["id"]
    assert run_execute(run_id) == "finished"

    [result] = author_client.get(f"{EVALUATIONS}/{run_id}/results").json()["results"]

    assert result["prompt_changed"] is False
    assert result["verdict"] == "same_pass"
    assert result["baseline"] == result["candidate"]
    assert len(result["candidate"]["outputs"]) == 2
    assert [c["repetition"] for c in result["candidate"]["checks"]] == [0, 1]
    assert result["candidate"]["pass_rate"] == 1.0
