"""Browser tests: the Evaluations page — a suite created, a case written with its turns
and a check from the menu, a JSONL import refused at its bad line; a run started with
the echo model whose progress reaches finished (the work done in-process, as a worker
would), a regression opened to both answers and the prompt's diff; no CSP violation or
console error on any of them."""

from __future__ import annotations

import json

from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from sysprompt.evaluations import selectors, services
from sysprompt.evaluations.execution import run_execute
from sysprompt.prompts.services import template_save
from sysprompt.releases import services as releases
from tests.browser.conftest import LoginAs, PageErrors


def test_suite_case_with_check_from_menu_and_bad_import(
    login_as: LoginAs, author: User, page_errors: PageErrors
) -> None:
    page = login_as(author)
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Evaluations").click()
    expect(page.locator("#suites-empty")).to_be_visible()
    page.get_by_label("Name").fill("style")
    page.get_by_label("Description").fill("How we write")
    page.get_by_role("button", name="Create suite").click()
    expect(page.locator(".messages")).to_contain_text("Suite style created.")

    page.get_by_role("link", name="Add a case").click()
    page.get_by_label("Name", exact=True).fill("indent")
    page.get_by_label("Turn 1 text").fill("How do I indent Python?")
    page.get_by_label("Check type").select_option("contains")
    page.get_by_role("button", name="Add check").click()
    page.get_by_label("Text", exact=True).fill("spaces")
    page.get_by_label("Ignore case").check()
    page.get_by_role("button", name="Add case").click()

    case = page.locator('article[data-case="indent"]')
    expect(case.locator(".bubble-user")).to_contain_text("How do I indent Python?")
    expect(case.locator(".eval-checks")).to_contain_text("contains")
    expect(case.locator(".eval-checks")).to_contain_text("spaces")

    good = json.dumps({"name": "tabs", "messages": [{"role": "user", "content": "Tabs?"}]})
    page.get_by_label("or its lines").fill(f"{good}\n{{broken")
    page.get_by_role("button", name="Import").click()
    expect(page.locator('#import-errors li[data-line="2"]')).to_contain_text("Line 2")
    expect(page.locator("#import-errors li")).to_have_count(1)
    page_errors.take("status of 400 (Bad Request)", 1)  # the refused import's answer
    assert [c.name for c in selectors.cases_list(selectors.suite_get("style"))] == ["indent"]


def test_run_progress_reaches_finished_and_regression_opens(
    login_as: LoginAs, author: User
) -> None:
    author.user_permissions.add(Permission.objects.get(codename="publish_release"))
    releases.production_ensure()
    template_save(text="Use tabs.\nBe brief.", author=author)
    number = releases.release_create(message="reviewed", author=author).release.number
    releases.label_set(name="production", target={"release": number}, author=author)
    template_save(text="Use spaces.\nBe brief.", author=author)
    services.suite_create(name="style", author=author)
    services.case_create(
        suite="style",
        fields={
            "name": "indent",
            "messages": [{"role": "user", "content": "How?"}],
            "checks": [{"type": "contains", "value": "tabs"}],
        },
        author=author,
    )
    page = login_as(User.objects.get(pk=author.pk))
    page.goto("/evaluations/suites/style/")
    page.get_by_label("Model", exact=True).select_option("echo")
    page.get_by_role("button", name="Start the run").click()
    # The POST plans the run before it answers: on a loaded 2-core machine that took
    # longer than expect's 5 s (CI, 2026-12-07); the wait is for the run's page.
    expect(page.locator("#run-status")).to_have_text("queued", timeout=60_000)
    run_id = int(page.url.rstrip("/").rsplit("/", 1)[1])

    assert run_execute(run_id) == "finished"  # the worker's work, in this process

    expect(page.locator("#run-status")).to_have_text("finished")  # polled, then reloaded
    expect(page.locator("#candidate-rate")).to_have_text("0%")
    expect(page.locator("#baseline-rate")).to_have_text("100%")
    result = page.locator('details[data-case="indent"]')
    expect(result).to_have_attribute("data-verdict", "regression")
    result.locator("summary").click()
    answers = result.locator(".eval-answer-diff")
    expect(answers.locator(".eval-line-delete", has_text="first line: Use tabs.")).to_be_visible()
    expect(answers.locator(".eval-line-insert", has_text="first line: Use spaces.")).to_be_visible()
    expect(answers.locator(".eval-line-equal")).to_have_text(["user: How?", "user: How?"])
    expect(result.locator(".check-failed")).to_contain_text("tabs")
    expect(result.locator(".eval-prompt-diff .diff-insert")).to_contain_text("Use spaces.")
    expect(result.locator(".eval-prompt-diff .diff-delete")).to_contain_text("Use tabs.")
