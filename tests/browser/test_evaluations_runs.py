"""Browser tests: a run on the Evaluations pages — the start form shows the run's plan
(its calls, its cost, the limits) before it starts and shows a refusal where it belongs
(a limit at the top, a release that does not exist under its field); a run whose calls
failed says so first in the runs list and on its page (status, count, colour), never the
green of a pass; the run page gives tokens and cost per run and per case, "error" for a
failed call, and tool calls as JSON. No console error or CSP violation on any of them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect
from pytest_django import Settings

from sysprompt.evaluations import services
from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import Run
from sysprompt.releases import services as releases
from tests.browser.conftest import LoginAs, PageErrors
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import models_setting, production_on_release

ERROR_COLOUR = "rgb(138, 28, 28)"  # --error-fg
OK_COLOUR = "rgb(29, 107, 54)"  # --ok-fg


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    with FakeModel() as model:
        yield model


def _suite(name: str, *cases: dict[str, Any]) -> None:
    services.suite_create(name=name, author=None)
    for fields in cases:
        services.case_create(suite=name, fields=fields, author=None)


def _case(name: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "messages": [{"role": "user", "content": f"{name}?"}], **more}


def test_start_form_shows_the_plan_and_where_a_start_is_refused(
    login_as: LoginAs, author: User, settings: Settings, page_errors: PageErrors
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "EVAL_MAX_CALLS_PER_RUN": 4}
    releases.production_ensure()
    _suite("style", _case("indent", checks=[{"type": "judge", "rubric": "tabs"}]))
    page = login_as(author)
    page.goto("/evaluations/suites/style/")

    plan = page.locator("#run-plan")
    expect(plan.locator("#run-plan-calls")).to_contain_text(
        "At most 4 model calls (1 case × 2 sides × 1 repetition, 2 of them judges') to echo"
    )
    expect(plan.locator("#run-plan-cost")).to_contain_text("Cost at most 0")
    expect(plan.locator("#run-plan-limits")).to_contain_text("4 calls a run")
    expect(plan.locator("#run-plan-refused")).to_have_count(0)

    page.get_by_label("Repeat").fill("2")
    page.get_by_label("Repeat").blur()  # the form changed: htmx asks for the plan again
    expect(plan.locator("#run-plan-calls")).to_contain_text("At most 8 model calls")
    expect(plan.locator("#run-plan-refused")).to_contain_text(
        "This run would make up to 8 model calls"
    )
    page.get_by_role("button", name="Start the run").click()
    expect(page.locator("#run-form-error")).to_contain_text(
        "This run would make up to 8 model calls (1 case × 2 sides × 2 repetitions"
    )

    page.get_by_label("Repeat").fill("1")
    page.get_by_label("Candidate", exact=True).fill("99")
    page.get_by_role("button", name="Start the run").click()
    expect(page.locator("#run-candidate-error")).to_contain_text("There is no release 99")
    page_errors.take("status of 400 (Bad Request)", 2)
    assert not Run.objects.exists()


def test_run_whose_calls_failed_says_so_first_in_the_list_and_on_its_page(
    login_as: LoginAs, author: User, settings: Settings, fake: FakeModel, page: Page
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "MODELS": models_setting(fake)}
    releases.production_ensure()
    production_on_release("Use tabs.", then="Use spaces.")
    _suite("style", _case("indent"))
    passed = services.run_create(suite="style", candidate="latest", model="echo", author=None)
    assert run_execute(passed.pk) == "finished"
    fake.control(script=[{"status": 500}, {"status": 500}])  # the model fails both calls
    failed = services.run_create(suite="style", candidate="latest", model="fake", author=None)
    assert run_execute(failed.pk) == "finished"
    page = login_as(author)

    page.goto("/evaluations/")
    bad = page.locator(f'tr[data-run="{failed.pk}"] .eval-run-status')
    expect(bad.locator(".eval-status")).to_have_text("finished with errors")
    expect(bad.locator(".eval-status")).to_have_css("color", ERROR_COLOUR)
    expect(bad).to_contain_text("finished with errors 1 error, 0 regressions")
    good = page.locator(f'tr[data-run="{passed.pk}"] .eval-run-status .eval-status')
    expect(good).to_have_text("finished")
    expect(good).to_have_css("color", OK_COLOUR)

    page.goto(f"/evaluations/runs/{failed.pk}/")
    expect(page.locator("#run-status")).to_have_text("finished with errors")
    expect(page.locator("#run-status")).to_have_css("color", ERROR_COLOUR)
    expect(page.locator("#run-errors-count")).to_have_text("1 of 1 case in error")
    expect(page.locator("#run-errors")).to_contain_text(
        "1 of 1 case ended in an error (2 calls failed), the first: indent: model fake: "
        "HTTP 500: scripted 500"
    )
    expect(page.locator("#summary-counts li").first).to_have_text("1 error")
    result = page.locator('details[data-case="indent"]')
    result.locator("summary").click()
    expect(result.locator(".eval-answer-failed")).to_have_text(["error", "error"])
    expect(result.locator('[data-usage="candidate"]')).to_have_text("error")
    expect(result).not_to_contain_text("0 tokens")


def test_run_page_gives_tokens_and_cost_per_run_and_per_case_and_tool_calls_as_json(
    login_as: LoginAs, author: User, settings: Settings, fake: FakeModel
) -> None:
    priced = models_setting(fake, price_input=2.0, price_output=8.0)
    settings.SYSPROMPT = {**settings.SYSPROMPT, "MODELS": priced}
    releases.production_ensure()
    production_on_release(
        'ANSWER: Use tabs.\nTOOL: lookup {"path": "a.py", "lines": [1, 2]}',
        then="ANSWER: Use spaces.",
    )
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    _suite("style", _case("indent", tools=tools))
    run = services.run_create(suite="style", candidate="latest", model="fake", author=None)
    assert run_execute(run.pk) == "finished"
    run.refresh_from_db()
    assert run.summary is not None
    page = login_as(author)

    page.goto(f"/evaluations/runs/{run.pk}/")

    for side in ("baseline", "candidate"):
        row = page.locator(f'#summary-usage tr[data-side="{side}"] td')
        summary = run.summary[side]
        expect(row).to_have_text(
            ["fake", str(summary["input_tokens"]), str(summary["output_tokens"]), _cost(summary)]
        )
    expect(page.locator("#run-spend")).to_contain_text(
        f"Planned: at most 2 model calls, costing at most {_cost({'cost': run.planned_cost})}"
    )
    expect(page.locator("#run-spend")).to_contain_text(f"spent {_cost({'cost': run.spent})}")
    result = page.locator('details[data-case="indent"]')
    result.locator("summary").click()
    usage = result.locator('[data-usage="baseline"]')
    expect(usage).to_have_text(
        f"{run.summary['baseline']['input_tokens']} in / "
        f"{run.summary['baseline']['output_tokens']} out tokens · cost "
        f"{_cost(run.summary['baseline'])}"
    )
    expect(result.locator(".eval-tool-calls code")).to_have_text(
        'lookup({"path": "a.py", "lines": [1, 2]})'
    )


def _cost(side: dict[str, Any]) -> str:
    value = float(side["cost"])
    return f"{value:,.2f}" if value >= 1 else f"{value:.4g}"
