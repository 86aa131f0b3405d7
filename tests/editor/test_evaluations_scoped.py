"""The Evaluations page scoped to a prompt (issue 33): under
``/editor/p/support/triage/-/evaluations/…`` the suites, cases and runs are
``support/triage``'s (and today's URLs stay ``default``'s); writes land on that prompt,
whose suite names are its own; a run started there renders that prompt's releases and
labels; every link stays under the prompt; an unknown prompt is 404; a run reached
under another prompt goes to its own prompt's page (cancelling it there is 404); a
folder restriction refuses a non-member's change with a message, and nothing changes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from sysprompt.evaluations import selectors, services
from sysprompt.evaluations.models import Case, Run, Suite
from sysprompt.events.models import AuditRecord
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.catalog_services import folder_restrict, prompt_create
from sysprompt.prompts.models import Prompt
from sysprompt.releases import services as releases
from tests.editor.library_support import htmx
from tests.releases.support import AUTHOR, PUBLISH, user

TRIAGE = "support/triage"
SCOPED = f"/editor/p/{TRIAGE}/-/"
EVALS = f"{SCOPED}evaluations/"
RUN_FORM = {"candidate": "latest", "baseline": "production", "model": "echo", "repeat": "1"}
CASE_FORM = {"save": "1", "name": "greets", "turn-0-role": "user", "turn-0-content": "hi"}


def case_fields(name: str) -> dict[str, Any]:
    return {"name": name, "messages": [{"role": "user", "content": f"question {name}"}]}


@pytest.fixture
def triage(db: None) -> Prompt:
    prompt = prompt_create(name=TRIAGE, author=None)
    releases.production_ensure(prompt)
    return prompt


@pytest.fixture
def both(triage: Prompt) -> dict[str, Any]:
    """A suite ``smoke`` in each prompt (each with its own description, case and run),
    and a suite only ``default`` has."""
    made: dict[str, Any] = {}
    for prompt, tag in ((default_prompt(), "default"), (triage, "triage")):
        services.suite_create(name="smoke", description=f"{tag} smoke", author=None, prompt=prompt)
        services.case_create(
            suite="smoke", fields=case_fields(f"{tag}-case"), author=None, prompt=prompt
        )
        run = services.run_create(
            suite="smoke", candidate="latest", model="echo", author=None, prompt=prompt
        )
        made[tag] = run.pk
    services.suite_create(name="only-default", description="default's own", author=None)
    return made


def stored() -> set[tuple[str, ...]]:
    """Every suite and case with its prompt, and every run's id and prompt."""
    suites = {
        ("suite", s.prompt.name, s.name, s.description)
        for s in Suite.objects.select_related("prompt")
    }
    cases = {
        ("case", c.suite.prompt.name, c.suite.name, c.name)
        for c in Case.objects.select_related("suite__prompt")
    }
    runs = {
        ("run", str(r.pk), r.prompt.name, r.status) for r in Run.objects.select_related("prompt")
    }
    return suites | cases | runs


def urls(html: str) -> list[str]:
    """Every link, form action and htmx URL of a page."""
    return re.findall(r'(?:href|action|formaction|hx-get|hx-post)="([^"]+)"', html)


# --- what each prompt's page shows ---------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "mine", "theirs"),
    [(EVALS, "triage", "default"), ("/evaluations/", "default", "triage")],
)
def test_evaluations_scoped_list_shows_its_suites_and_runs_only(
    author_web: Client, both: dict[str, Any], base: str, mine: str, theirs: str
) -> None:
    html = author_web.get(base).content.decode()
    suite_html = author_web.get(f"{base}suites/smoke/").content.decode()

    assert f"{mine} smoke" in html and f"{theirs} smoke" not in html
    assert re.findall(r'data-run="(\d+)"', html) == [str(both[mine])]
    assert ('data-suite="only-default"' in html) == (mine == "default")
    assert f'data-case="{mine}-case"' in suite_html
    assert f'data-case="{theirs}-case"' not in suite_html
    assert re.findall(r'data-run="(\d+)"', suite_html) == [str(both[mine])]


def test_evaluations_scoped_suite_of_another_prompt_is_404(
    author_web: Client, both: dict[str, Any]
) -> None:
    assert author_web.get("/evaluations/suites/only-default/").status_code == 200
    assert author_web.get(f"{EVALS}suites/only-default/").status_code == 404
    assert author_web.get(f"{EVALS}suites/only-default/export").status_code == 404
    assert author_web.get(f"{EVALS}suites/smoke/cases/default-case/").status_code == 404


def test_evaluations_scoped_export_is_its_suites_cases(
    author_web: Client, both: dict[str, Any]
) -> None:
    body = b"".join(author_web.get(f"{EVALS}suites/smoke/export").streaming_content)  # type: ignore[attr-defined]
    assert b'"triage-case"' in body and b'"default-case"' not in body


def test_evaluations_scoped_heading_names_the_prompt_default_looks_as_today(
    author_web: Client, both: dict[str, Any]
) -> None:
    scoped = author_web.get(EVALS).content.decode()
    today = author_web.get("/evaluations/").content.decode()

    assert f'<span class="mono" data-prompt="{TRIAGE}">{TRIAGE}</span>' in scoped
    assert f"<title>Evaluations · {TRIAGE} · sysprompt</title>" in scoped
    assert "<h1>Evaluations</h1>" in today and "<title>Evaluations · sysprompt</title>" in today
    assert "data-prompt=" not in today
    for path in ("suites/smoke/", "suites/smoke/cases/new", f"runs/{both['default']}/"):
        assert "data-prompt=" not in author_web.get(f"/evaluations/{path}").content.decode()
    for path in ("suites/smoke/", "suites/smoke/cases/new", f"runs/{both['triage']}/"):
        page = author_web.get(f"{EVALS}{path}").content.decode()
        assert f'data-prompt="{TRIAGE}"' in page.split("</h1>", 1)[0], path


# --- links stay under the prompt -----------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["", "suites/smoke/", "suites/smoke/cases/new", "suites/smoke/cases/triage-case/"]
)
def test_evaluations_scoped_links_stay_under_the_prompt(
    author_web: Client, both: dict[str, Any], path: str
) -> None:
    html = author_web.get(f"{EVALS}{path}").content.decode()

    found = [url for url in urls(html) if "/evaluations/" in url or "/releases/" in url]

    assert found
    assert all(url.startswith(SCOPED) for url in found), found


def test_evaluations_scoped_run_page_links_and_poll_stay_under_the_prompt(
    author_web: Client, both: dict[str, Any]
) -> None:
    page = author_web.get(f"{EVALS}runs/{both['triage']}/").content.decode()
    partial = author_web.get(f"{EVALS}runs/{both['triage']}/", headers=htmx()).content.decode()

    found = [url for url in urls(page) if "/evaluations/" in url]
    assert f"{EVALS}runs/{both['triage']}/cancel" in found
    assert f"{EVALS}suites/smoke/" in found
    assert all(url.startswith(SCOPED) for url in found), found
    assert f'hx-get="{EVALS}runs/{both["triage"]}/"' in partial


def test_evaluations_scoped_test_context_link_is_the_prompts(
    author_web: Client, author: User, triage: Prompt, workdir: Path
) -> None:
    releases.test_context_save(
        name="laptop", fields={"cwd": str(workdir)}, author=author, prompt=triage
    )
    services.suite_create(name="smoke", author=None, prompt=triage)
    services.case_create(
        suite="smoke",
        fields={**case_fields("ctx"), "context": {"test_context": "laptop"}},
        author=None,
        prompt=triage,
    )

    suite_html = author_web.get(f"{EVALS}suites/smoke/").content.decode()
    form_html = author_web.get(f"{EVALS}suites/smoke/cases/new").content.decode()

    assert f'href="{SCOPED}releases/test-contexts/laptop/"' in suite_html
    assert '<option value="laptop">laptop</option>' in form_html


# --- writes land on the prompt -------------------------------------------------------------


def test_evaluations_scoped_same_suite_name_in_both_prompts(
    author_web: Client, triage: Prompt
) -> None:
    today = author_web.post("/evaluations/", {"name": "smoke", "description": "d"})
    scoped = author_web.post(EVALS, {"name": "smoke", "description": "t"})
    again = author_web.post(EVALS, {"name": "smoke"})

    assert today.status_code == 302 and today["Location"] == "/evaluations/suites/smoke/"
    assert scoped.status_code == 302 and scoped["Location"] == f"{EVALS}suites/smoke/"
    assert again.status_code == 400  # taken in this prompt
    assert set(Suite.objects.values_list("prompt__name", "name", "description")) == {
        ("default", "smoke", "d"),
        (TRIAGE, "smoke", "t"),
    }


def test_evaluations_scoped_case_writes_land_on_the_prompt(
    author_web: Client, both: dict[str, Any]
) -> None:
    base = f"{EVALS}suites/smoke/"
    made = author_web.post(f"{base}cases/new", CASE_FORM)
    renamed = author_web.post(f"{base}cases/greets/", {**CASE_FORM, "name": "hello"})
    deleted = author_web.post(f"{base}cases/triage-case/delete")
    imported = author_web.post(
        f"{base}import",
        {
            "file": SimpleUploadedFile(
                "c.jsonl", b'{"name": "imported", "messages": [{"role": "user", "content": "q"}]}\n'
            )
        },
    )
    described = author_web.post(f"{base}edit", {"description": "new words"})

    for answer in (made, renamed, deleted, imported, described):
        assert answer.status_code == 302 and answer["Location"].startswith(base), answer
    cases = Case.objects.select_related("suite__prompt")
    assert {(c.suite.prompt.name, c.name) for c in cases} == {
        ("default", "default-case"),
        (TRIAGE, "hello"),
        (TRIAGE, "imported"),
    }
    descriptions = dict(
        Suite.objects.filter(name="smoke").values_list("prompt__name", "description")
    )
    assert descriptions == {"default": "default smoke", TRIAGE: "new words"}


def test_evaluations_scoped_suite_delete_leaves_defaults(
    author_web: Client, both: dict[str, Any]
) -> None:
    answer = author_web.post(f"{EVALS}suites/smoke/delete")

    assert answer.status_code == 302 and answer["Location"] == EVALS
    assert set(Suite.objects.values_list("prompt__name", "name")) == {
        ("default", "smoke"),
        ("default", "only-default"),
    }


def test_evaluations_scoped_run_compares_the_prompts_candidate_with_its_label(
    author_web: Client, triage: Prompt
) -> None:
    publisher = user("publisher", AUTHOR, PUBLISH)
    number = releases.release_create(message="r", author=None, prompt=triage).release.number
    releases.label_set(name="stable", target={"release": number}, author=publisher, prompt=triage)
    for prompt in (default_prompt(), triage):
        services.suite_create(name="smoke", author=None, prompt=prompt)
        services.case_create(suite="smoke", fields=case_fields("c"), author=None, prompt=prompt)
    form = {**RUN_FORM, "candidate": str(number), "baseline": "stable"}

    plan = author_web.post(f"{EVALS}suites/smoke/plan", form, headers=htmx()).content.decode()
    started = author_web.post(f"{EVALS}suites/smoke/run", form)
    on_default = author_web.post("/evaluations/suites/smoke/run", form)

    assert 'id="run-plan-calls"' in plan and "No plan yet" not in plan
    assert started.status_code == 302, started.content.decode()[:2000]
    match = re.fullmatch(rf"{re.escape(EVALS)}runs/(\d+)/", started["Location"])
    assert match is not None
    run = selectors.run_get(int(match[1]))
    assert run.suite is not None
    assert (run.prompt.name, run.suite.prompt.name) == (TRIAGE, TRIAGE)
    assert (run.candidate, run.baseline) == (number, {"label": "stable"})
    assert on_default.status_code == 400  # default has no label stable (and no such release)
    assert 'id="run-baseline-error"' in on_default.content.decode() or (
        'id="run-candidate-error"' in on_default.content.decode()
    )
    assert list(Run.objects.values_list("prompt__name", flat=True)) == [TRIAGE]


# --- unknown prompts, and a run of another prompt ------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "evaluations/"),
        ("post", "evaluations/"),
        ("get", "evaluations/suites/smoke/"),
        ("post", "evaluations/suites/smoke/cases/new"),
        ("post", "evaluations/suites/smoke/run"),
        ("get", "evaluations/runs/{run}/"),
        ("post", "evaluations/runs/{run}/cancel"),
    ],
)
def test_evaluations_scoped_unknown_prompt_is_404(
    author_web: Client, both: dict[str, Any], method: str, path: str
) -> None:
    before = stored()
    url = "/editor/p/nobody/here/-/" + path.format(run=both["default"])
    answer = getattr(author_web, method)(url, {"name": "x", **RUN_FORM})

    assert answer.status_code == 404
    assert stored() == before


def test_evaluations_scoped_run_of_another_prompt_goes_to_its_own_page(
    author_web: Client, both: dict[str, Any]
) -> None:
    default_run, triage_run = both["default"], both["triage"]

    to_default = author_web.get(f"{EVALS}runs/{default_run}/")
    to_triage = author_web.get(f"/evaluations/runs/{triage_run}/")
    poll = author_web.get(f"{EVALS}runs/{default_run}/", headers=htmx())

    assert (
        to_default.status_code == 302
        and to_default["Location"] == f"/evaluations/runs/{default_run}/"
    )
    assert to_triage.status_code == 302 and to_triage["Location"] == f"{EVALS}runs/{triage_run}/"
    assert poll.status_code == 302
    page = author_web.get(f"{EVALS}runs/{triage_run}/")
    assert page.status_code == 200 and f"Run {triage_run}:" in page.content.decode()


def test_evaluations_scoped_cancel_of_another_prompts_run_is_404_and_cancels_nothing(
    author_web: Client, both: dict[str, Any]
) -> None:
    assert author_web.post(f"{EVALS}runs/{both['default']}/cancel").status_code == 404
    assert author_web.post(f"/evaluations/runs/{both['triage']}/cancel").status_code == 404
    assert set(Run.objects.values_list("status", flat=True)) == {"queued"}

    cancelled = author_web.post(f"{EVALS}runs/{both['triage']}/cancel")

    assert cancelled.status_code == 302
    assert cancelled["Location"] == f"{EVALS}runs/{both['triage']}/"
    assert selectors.run_get(both["triage"]).status == "cancelled"
    assert selectors.run_get(both["default"]).status == "queued"


# --- a folder restriction ------------------------------------------------------------------


RESTRICTED_WRITES = [
    ("", {"name": "fresh"}, EVALS),
    ("suites/smoke/edit", {"description": "changed"}, f"{EVALS}suites/smoke/"),
    ("suites/smoke/delete", {}, f"{EVALS}suites/smoke/"),
    ("suites/smoke/cases/new", CASE_FORM, f"{EVALS}suites/smoke/#cases"),
    ("suites/smoke/cases/triage-case/", {**CASE_FORM, "name": "x"}, f"{EVALS}suites/smoke/#cases"),
    ("suites/smoke/cases/triage-case/delete", {}, f"{EVALS}suites/smoke/#cases"),
    (
        "suites/smoke/import",
        {"text": '{"name": "imported", "messages": [{"role": "user", "content": "q"}]}'},
        f"{EVALS}suites/smoke/#import",
    ),
]


@pytest.mark.parametrize(("path", "data", "back"), RESTRICTED_WRITES)
def test_evaluations_scoped_restricted_folder_refuses_a_non_member_with_a_message(
    author_web: Client,
    author: User,
    both: dict[str, Any],
    path: str,
    data: dict[str, str],
    back: str,
) -> None:
    superuser = User.objects.create_superuser("root")
    Group.objects.create(name="Support leads")
    folder_restrict(folder="support/", editor_groups=["Support leads"], author=superuser)
    before = stored()

    answer = author_web.post(f"{EVALS}{path}", data)

    assert answer.status_code == 302 and answer["Location"] == back
    assert stored() == before
    shown = author_web.get(back.split("#", 1)[0]).content.decode()
    assert 'class="message message-error"' in shown
    assert "is restricted" in shown and "Support leads" in shown
    record = AuditRecord.objects.filter(action="prompt.refused").get()
    assert (record.prompt, record.actor) == (TRIAGE, "author")
    # default is not under the folder: the same write there goes through
    today = author_web.post(f"/evaluations/{path}".replace("triage-case", "default-case"), data)
    assert today.status_code == 302 and stored() != before
    # a member may
    author.groups.add(Group.objects.get(name="Support leads"))
    after_default = stored()
    assert author_web.post(f"{EVALS}{path}", data).status_code == 302
    assert stored() != after_default
