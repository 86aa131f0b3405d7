"""The Publish dialog of a gated label: the gate, the newest run for the candidate with
a link to it, a button that starts one, the 409's words when the gate refuses, and a
publisher's forced move with a message."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.evaluations.models import Run
from sysprompt.events.models import AuditRecord
from sysprompt.releases import selectors
from tests.editor.releases_support import production, publisher, publisher_web  # noqa: F401
from tests.releases.gate_support import Gated, executed, gated

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def made(publisher: User, allowed_root: Path) -> Gated:  # noqa: F811
    return gated(publisher)


def dialog(web: Client, candidate: int) -> str:
    response = web.get(f"/releases/publish?label=production&candidate={candidate}")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def publish(web: Client, candidate: int, **more: str) -> tuple[int, str]:
    response = web.post(
        "/releases/publish",
        {"label": "production", "candidate": str(candidate), "message": "", **more},
    )
    return response.status_code, html.unescape(response.content.decode())


def test_gate_dialog_without_run_shows_the_gate_and_offers_a_run(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    page = dialog(publisher_web, made.good)

    assert 'id="gate"' in page and "suite style" in page
    assert 'id="gate-run-echo"' in page
    assert f"no run of this suite evaluates release {made.good} on it yet." in page
    assert (
        f"no finished run of suite style on model echo with release {made.good} as candidate"
        in page
    )
    assert f"Start a run of style on release {made.good}" in page
    assert 'id="publish-force"' in page
    assert page.index('id="impact-report"') < page.index('id="gate"')


def test_gate_dialog_shows_the_newest_run_with_its_link(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    run = executed({"release": made.bad})

    page = dialog(publisher_web, made.bad)

    assert f'<a href="/evaluations/runs/{run.pk}/">run {run.pk}</a>' in page
    assert "1 regression · pass rate 100% → 0%" in page
    assert f"run {run.pk} regressed 1 case (at most 0 allowed)" in page


def test_gate_dialog_passing_run_says_the_gate_passes(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    run = executed({"release": made.good})

    page = dialog(publisher_web, made.good)

    assert f"The gate passes: run {run.pk} on echo evaluated this move." in page
    assert 'id="publish-force"' not in page


def test_gate_dialog_button_starts_a_run_of_the_candidate_against_the_label(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    response = publisher_web.post(
        "/releases/publish/evaluate", {"label": "production", "candidate": str(made.good)}
    )

    assert response.status_code == 302
    assert response["Location"] == f"/releases/publish?label=production&candidate={made.good}"
    run = Run.objects.get()
    assert (run.suite_name, run.candidate_release, run.baseline, run.created_by) == (
        "style",
        made.good,
        {"label": "production"},
        User.objects.get(username="publisher"),
    )


def test_gate_dialog_refused_publish_shows_the_409_words(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    status, page = publish(publisher_web, made.bad)

    assert status == 409
    assert "Label 'production' is gated by suite 'style': no finished run" in page
    assert "move it anyway with the “Force past the gate” box ticked and a message" in page
    assert '"force": true' not in page
    assert selectors.label_get("production").target.as_json() == {"release": made.old}


def test_gate_dialog_forced_publish_needs_a_message_then_moves(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    status, page = publish(publisher_web, made.bad, force="on")
    assert status == 400 and "a forced move needs a message" in page

    status, _ = publish(publisher_web, made.bad, force="on", message="incident 7")

    assert status == 302
    assert selectors.label_get("production").target.as_json() == {"release": made.bad}
    assert AuditRecord.objects.filter(action="label.forced", actor="publisher").count() == 1


def test_gate_set_a_label_refused_is_409_with_the_words(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    response = publisher_web.post(
        "/releases/labels/",
        {"name": "production", "kind": "release", "release": str(made.bad), "message": ""},
    )

    page = html.unescape(response.content.decode())
    assert response.status_code == 409
    assert "is gated by suite 'style'" in page
    assert "the “Force past the gate” box ticked" in page and '"force": true' not in page
    assert 'id="label-force"' in page  # the checkbox it names is there
    assert selectors.label_get("production").target.as_json() == {"release": made.old}


def test_gate_set_a_label_forced_with_the_checkbox_moves(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    response = publisher_web.post(
        "/releases/labels/",
        {
            "name": "production",
            "kind": "release",
            "release": str(made.bad),
            "message": "incident 8",
            "force": "on",
        },
    )

    assert response.status_code == 302
    assert selectors.label_get("production").target.as_json() == {"release": made.bad}
    assert AuditRecord.objects.filter(action="label.forced", actor="publisher").count() == 1


def test_gate_rollback_refused_offers_a_publisher_the_forced_rollback(
    publisher_web: Client,  # noqa: F811
    made: Gated,
) -> None:
    executed({"release": made.good})
    publish(publisher_web, made.good)
    url = "/releases/labels/production/rollback"

    refused = publisher_web.post(url, {"message": ""})
    page = html.unescape(refused.content.decode())
    forced = publisher_web.post(url, {"message": "back, incident 9", "force": "on"})

    assert refused.status_code == 409
    assert "is gated by suite 'style'" in page and 'id="rollback-force-form"' in page
    assert "the “Force past the gate” box ticked" in page and '"force": true' not in page
    assert re.search(r'<dialog id="rollback-dialog"[^>]* data-show-on-load>', page)
    assert forced.status_code == 302
    assert selectors.label_get("production").target.as_json() == {"release": made.old}
