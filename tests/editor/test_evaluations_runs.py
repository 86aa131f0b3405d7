"""The Evaluations page's runs: the form that starts one (bad input shows the field's
error and starts nothing), the run page with its progress bar polled by htmx (the
partial alone while the run is active, a refresh once it ended), Cancel, and the
results — pass rates as bars, regressions first, both answers side by side with their
differing lines marked, each check with its reason, the case's prompt diff."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from sysprompt.editor import evaluations as evaluations_page
from sysprompt.evaluations import selectors, services
from sysprompt.evaluations.execution import run_execute
from sysprompt.evaluations.models import Run
from sysprompt.prompts import services as prompts
from sysprompt.releases import services as releases
from sysprompt_core.tokens import count
from tests.editor.library_support import htmx, web
from tests.releases.support import AUTHOR, PUBLISH, user

TABS = {"type": "contains", "value": "tabs"}


@pytest.fixture
def suite(author: User) -> str:
    services.suite_create(name="style", author=author)
    for name, checks in (("indent", [TABS]), ("greet", [{"type": "max_chars", "value": 500}])):
        services.case_create(
            suite="style",
            fields={
                "name": name,
                "messages": [{"role": "user", "content": f"question {name}"}],
                "checks": checks,
            },
            author=None,
        )
    return "style"


def start(client: Client, **more: str) -> int:
    data = {"candidate": "latest", "baseline": "production", "model": "echo", "repeat": "1"}
    response = client.post("/evaluations/suites/style/run", {**data, **more})
    assert response.status_code == 302, response.content.decode()[:2000]
    match = re.fullmatch(r"/evaluations/runs/(\d+)/", response["Location"])
    assert match is not None
    return int(match[1])


def test_evaluations_run_started_from_form(author_web: Client, suite: str, author: User) -> None:
    number = releases.release_create(message="reviewed", author=None).release.number
    run_id = start(author_web, candidate="latest", baseline=str(number), repeat="2", fresh="on")
    run = selectors.run_get(run_id)
    assert (run.candidate, run.baseline, run.repeat, run.fresh) == ("latest", number, 2, True)
    assert (run.baseline_model, run.candidate_model, run.created_by) == ("echo", "echo", author)


def test_evaluations_run_two_models_and_label_baseline(author_web: Client, suite: str) -> None:
    run_id = start(author_web, candidate="production", candidate_model="echo")
    run = selectors.run_get(run_id)
    assert run.candidate == {"label": "production"} and run.baseline == {"label": "production"}


@pytest.mark.parametrize(
    ("field", "value", "error_id"),
    [
        ("model", "nope", "run-model-error"),
        ("candidate", "Not A Label", "run-candidate-error"),
        ("repeat", "11", "run-repeat-error"),
        ("candidate_model", "nope", "run-candidate-model-error"),
        ("candidate", "99", "run-candidate-error"),  # no such release
        ("baseline", "staging", "run-baseline-error"),  # no such label
    ],
)
def test_evaluations_run_bad_input_shows_error_starts_nothing(
    author_web: Client, suite: str, field: str, value: str, error_id: str
) -> None:
    data = {"candidate": "latest", "baseline": "production", "model": "echo", "repeat": "1"}
    response = author_web.post("/evaluations/suites/style/run", {**data, field: value})
    assert response.status_code == 400
    assert f'id="{error_id}"' in response.content.decode()
    assert not selectors.runs_list().exists()


def test_evaluations_run_refused_by_a_limit_says_why_at_the_top_of_the_form(
    author_web: Client, suite: str
) -> None:
    start(author_web), start(author_web)  # as many runs going as one user may have

    response = author_web.post(
        "/evaluations/suites/style/run",
        {"candidate": "latest", "baseline": "production", "model": "echo", "repeat": "1"},
    )

    assert response.status_code == 429
    html = response.content.decode()
    assert 'id="run-form-error"' in html and "You have 2 runs queued or running" in html
    assert selectors.runs_list().count() == 2


def test_evaluations_plan_partial_and_page_say_the_calls_and_the_limits(
    author_web: Client, suite: str
) -> None:
    data = {"candidate": "latest", "baseline": "production", "model": "echo", "repeat": "3"}

    plan = "/evaluations/suites/style/plan"
    partial = author_web.post(plan, data, headers=htmx())
    page = author_web.post(plan, data)
    bad = author_web.post(plan, {**data, "candidate": "99"}, headers=htmx())

    body = partial.content.decode()
    assert partial.status_code == 200 and body.lstrip().startswith('<div class="eval-plan')
    assert "At most <strong>12</strong> model calls (2 cases × 2 sides × 3 repetitions)" in body
    assert "Cost at most <strong>0</strong>" in body
    assert page.status_code == 200 and 'id="run-plan"' in page.content.decode()
    assert "<html" in page.content.decode()
    assert "No plan yet: candidate: There is no release 99" in bad.content.decode()
    assert not selectors.runs_list().exists()


def test_evaluations_run_start_refused_to_reader_and_without_csrf(
    viewer_web: Client, author: User, suite: str
) -> None:
    data = {"candidate": "latest", "baseline": "production", "model": "echo", "repeat": "1"}
    assert viewer_web.post("/evaluations/suites/style/run", data).status_code == 403
    strict = web(author, enforce_csrf_checks=True)
    assert strict.post("/evaluations/suites/style/run", data).status_code == 403
    assert not selectors.runs_list().exists()


def test_evaluations_run_page_polls_progress_while_queued(author_web: Client, suite: str) -> None:
    run_id = start(author_web)
    page = author_web.get(f"/evaluations/runs/{run_id}/")
    html = page.content.decode()
    assert 'id="run-progress"' in html and 'hx-trigger="every 1s"' in html
    assert 'id="run-cancel"' in html and "data-confirm=" in html
    assert "HX-Request" in page["Vary"]
    partial = author_web.get(f"/evaluations/runs/{run_id}/", headers=htmx())
    assert partial.status_code == 200 and "HX-Request" in partial["Vary"]
    body = partial.content.decode()
    assert body.strip().startswith('<div class="eval-progress')
    assert 'hx-get="/evaluations/runs/' in body and "<html" not in body


def test_evaluations_run_partial_shows_calls_done_while_running(
    author_web: Client, suite: str
) -> None:
    run_id = start(author_web)
    Run.objects.filter(pk=run_id).update(status="running", done=3, total=8)
    body = author_web.get(f"/evaluations/runs/{run_id}/", headers=htmx()).content.decode()
    assert '<progress id="run-progress-bar" max="8" value="3"' in body
    assert "3 of 8 calls" in body and "(38%)" in body and 'hx-trigger="every 1s"' in body


def test_evaluations_run_cancel_then_partial_refreshes(author_web: Client, suite: str) -> None:
    run_id = start(author_web)
    assert author_web.post(f"/evaluations/runs/{run_id}/cancel").status_code == 302
    assert selectors.run_get(run_id).status == "cancelled"
    partial = author_web.get(f"/evaluations/runs/{run_id}/", headers=htmx())
    assert partial["HX-Refresh"] == "true"
    html = author_web.get(f"/evaluations/runs/{run_id}/").content.decode()
    assert 'hx-trigger="every' not in html and 'id="run-cancel"' not in html


def test_evaluations_run_missing_is_404(author_web: Client) -> None:
    assert author_web.get("/evaluations/runs/999/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_evaluations_run_results_regression_first_with_answers_and_prompt_diff(
    author: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    releases.production_ensure()
    prompts.template_save(text="Use tabs.\nBe brief.")
    number = releases.release_create(message="reviewed", author=None).release.number
    releases.label_set(
        name="production", target={"release": number}, author=user("publisher", AUTHOR, PUBLISH)
    )
    prompts.template_save(text="Use spaces.\nBe brief.")
    services.suite_create(name="style", author=author)
    for name, checks in (("greet", [{"type": "max_chars", "value": 500}]), ("indent", [TABS])):
        services.case_create(
            suite="style",
            fields={"name": name, "messages": [{"role": "user", "content": "q"}], "checks": checks},
            author=None,
        )
    client = web(author)
    run_id = start(client)
    assert run_execute(run_id) == "finished"

    html = client.get(f"/evaluations/runs/{run_id}/").content.decode()

    assert 'hx-trigger="every' not in html
    assert '<rect class="eval-bar-fill eval-bar-baseline" x="0" y="0" width="100.0"' in html
    assert '<rect class="eval-bar-fill eval-bar-candidate" x="0" y="0" width="50.0"' in html
    verdicts = re.findall(r'<details class="eval-result[^"]*" data-case="([^"]+)"', html)
    assert verdicts == ["indent", "greet"]  # the regression first, though added last
    indent = html.split('data-case="indent"', 1)[1].split("</details>", 1)[0]
    # both answers side by side, the differing lines marked
    assert (
        '<td class="eval-line eval-line-delete"><span class="visually-hidden">only in the '
        "baseline: </span>system first line: Use tabs.</td>" in indent
    )
    assert "only in the candidate: </span>system first line: Use spaces.</td>" in indent
    assert '<td class="eval-line eval-line-equal">user: q</td>' in indent
    # each check with its reason
    assert indent.count('class="check-passed"') == 1 and indent.count('class="check-failed"') == 1
    assert "tabs" in indent.split('class="check-failed"', 1)[1].split("</li>", 1)[0]
    # the prompt's diff
    prompt = indent.split('class="eval-prompt-diff"', 1)[1]
    assert '<tr class="diff-delete">' in prompt and "Use tabs." in prompt
    assert '<tr class="diff-insert">' in prompt and "Use spaces." in prompt
    # sizes counted here beside the provider's usage (echo is no OpenAI model: estimates)
    baseline_prompt = count("Use tabs.\nBe brief.", provider="echo", model="echo").tokens
    candidate_prompt = count("Use spaces.\nBe brief.", provider="echo", model="echo").tokens
    assert (
        f"Baseline's prompt ≈{baseline_prompt} tokens (estimate) · candidate's prompt "
        f"≈{candidate_prompt} tokens (estimate)" in prompt
    )
    answers = re.findall(r'class="eval-answer-counted"[^>]*>answer ≈(\d+) tokens', indent)
    assert len(answers) == 2 and all(int(n) > 0 for n in answers)
    assert "style=" not in html
    monkeypatch.setattr(evaluations_page, "RESULTS_SHOWN", 1)  # cut by the database
    html = client.get(f"/evaluations/runs/{run_id}/").content.decode()
    assert re.findall(r'<details class="eval-result[^"]*" data-case="([^"]+)"', html) == ["indent"]
    assert "The first 1 of 2 cases" in html


def test_evaluations_run_form_chooses_the_configured_real_model_and_a_run_page_says_default(
    author_web: Client, suite: str, settings: Settings
) -> None:
    real = {
        "try": {"kind": "echo"},  # named first, but no real model: never the default
        "gpt": {"kind": "openai", "model": "gpt-4.1-mini", "base_url": "http://127.0.0.1:9/v1"},
    }
    settings.SYSPROMPT = {**settings.SYSPROMPT, "MODELS": real}

    form = author_web.get("/evaluations/suites/style/").content.decode()
    run = services.run_create(suite="style", candidate="latest", author=None)
    page = author_web.get(f"/evaluations/runs/{run.pk}/").content.decode()

    assert '<option value="gpt" selected>gpt</option>' in form
    assert '<option value="echo">echo</option>' in form
    assert (run.baseline_model, run.candidate_model, run.default_model) == ("gpt", "gpt", True)
    assert '<span class="mono">gpt</span> <span class="muted">(the default model)</span>' in page
