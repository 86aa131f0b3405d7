"""Publish on the Releases page: the impact report first (GET), then the confirm form
(POST) that releases the working copy (or takes a release) and moves the label; a
protected label refuses an author without ``publish_release``, changing nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.releases import selectors, services
from sysprompt.releases.models import Release
from tests.editor.library_support import htmx
from tests.editor.releases_support import (  # noqa: F401  (fixtures)
    SCRIPT,
    move_count,
    production,
    publisher,
    publisher_web,
    release,
    save,
    template,
)


def conversation(cid: str, cwd: Path, **fields: object) -> None:
    now = timezone.now()
    ConversationPrompt.objects.create(
        prompt=default_prompt(),
        conversation_id=cid,
        system_prompt="frozen",
        cwd=str(cwd),
        created_at=now,
        constructed_at=now,
        label="production",
        **fields,
    )


@pytest.fixture
def released(publisher: User, workdir: Path) -> int:  # noqa: F811
    """production → release 1 with three recent conversations and a test context; the
    working copy then changes the shell fragment (which only tool:shell reaches)."""
    template("Root.\n[fragment:core]\n[if tool:shell][fragment:shell][endif]")
    save("core", "Core.")
    save("shell", "Shell v1.")
    number = release("first")
    services.label_set(name="production", target={"release": number}, author=publisher)
    save("shell", f"Shell v2 {SCRIPT}")
    conversation("a", workdir, tools=["shell"])
    conversation("b", workdir, tools=["shell"])
    conversation("c", workdir)
    services.test_context_save(
        name="shell-user", fields={"cwd": str(workdir), "tools": ["shell"]}, author=publisher
    )
    return number


def test_publish_get_shows_impact_before_the_confirm_form(
    publisher_web: Client,  # noqa: F811
    released: int,
) -> None:
    response = publisher_web.get("/releases/publish?label=production&candidate=latest")

    assert response.status_code == 200
    html = response.content.decode()
    summary = re.sub(r"\s+", " ", html.split('id="impact-summary"', 1)[1].split("</p>", 1)[0])
    assert "2 of 3 contexts changed" in summary
    assert "standing for 2 of 3 recent conversations (66.7%)" in summary
    assert html.index('id="impact-report"') < html.index('id="publish-confirm"')
    assert "+Shell v2 &lt;script&gt;" in html and SCRIPT not in html
    assert 'data-key="test:shell-user"' in html
    assert Release.objects.count() == 1  # the report stores nothing


def test_publish_get_htmx_answers_the_report_alone(
    publisher_web: Client,  # noqa: F811
    released: int,
) -> None:
    response = publisher_web.get(
        "/releases/publish?label=production&candidate=latest", headers=htmx()
    )
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"]
    html = response.content.decode()
    assert 'id="impact-summary"' in html and "<html" not in html


def test_publish_get_htmx_history_restore_answers_the_whole_page(
    publisher_web: Client,  # noqa: F811
    released: int,
) -> None:
    response = publisher_web.get(
        "/releases/publish?label=production&candidate=latest",
        headers=htmx(History_Restore_Request="true"),
    )
    assert "<html" in response.content.decode()


def test_publish_get_htmx_refusal_is_a_partial_to_swap(
    publisher_web: Client,  # noqa: F811
) -> None:
    response = publisher_web.get("/releases/publish?label=production&candidate=99", headers=htmx())
    assert response.status_code == 404
    assert response["X-Sysprompt-Partial"] == "1"
    assert "There is no release 99" in response.content.decode()


def test_publish_post_releases_and_moves_the_label(
    publisher_web: Client,  # noqa: F811
    released: int,
) -> None:
    response = publisher_web.post(
        "/releases/publish",
        {"label": "production", "candidate": "latest", "message": "Shell v2"},
    )

    assert response.status_code == 302
    assert response["Location"] == "/releases/labels/production/"
    assert selectors.label_get("production").target.as_json() == {"release": 2}
    assert Release.objects.get(number=2).message == "Shell v2"
    page = publisher_web.get(response["Location"]).content.decode()
    assert "Release 2 created and published: production now serves it." in page


def test_publish_by_author_without_permission_is_refused(
    author_web: Client,
    released: int,
) -> None:
    moves = move_count()

    shown = author_web.get("/releases/publish?label=production&candidate=latest")
    assert shown.status_code == 200
    html = shown.content.decode()
    assert 'id="publish-refused"' in html and 'id="publish-confirm"' not in html

    refused = author_web.post(
        "/releases/publish", {"label": "production", "candidate": "latest", "message": "x"}
    )
    assert refused.status_code == 403
    assert "is protected" in refused.content.decode()
    assert selectors.label_get("production").target.as_json() == {"release": released}
    assert move_count() == moves
    assert Release.objects.count() == 1  # the release was rolled back with the move


def test_publish_to_unprotected_label_by_author(author_web: Client, released: int) -> None:
    services.label_set(name="staging", target="latest", author=User.objects.get(username="author"))

    response = author_web.post(
        "/releases/publish", {"label": "staging", "candidate": str(released), "message": ""}
    )

    assert response.status_code == 302
    assert selectors.label_get("staging").target.as_json() == {"release": released}


@pytest.mark.parametrize(
    ("query", "status", "text"),
    [
        ("label=production&candidate=nope", 400, "is not a release number"),
        ("label=production&candidate=99", 404, "There is no release 99"),
        ("label=Bad!&candidate=latest", 400, "is not a label name"),
        ("label=ghost&candidate=latest", 400, "There is no label"),
    ],
)
def test_publish_get_bad_input_says_why(
    publisher_web: Client,  # noqa: F811
    query: str,
    status: int,
    text: str,
) -> None:
    response = publisher_web.get(f"/releases/publish?{query}")
    assert response.status_code == status
    assert text in response.content.decode()


def test_publish_post_unknown_release_changes_nothing(
    publisher_web: Client,  # noqa: F811
    released: int,
) -> None:
    moves = move_count()
    response = publisher_web.post(
        "/releases/publish", {"label": "production", "candidate": "99", "message": ""}
    )
    assert response.status_code == 400
    assert "There is no release 99" in response.content.decode()
    assert move_count() == moves


def test_publish_page_without_input_shows_the_form(author_web: Client) -> None:
    response = author_web.get("/releases/publish")
    assert response.status_code == 200
    assert 'id="publish-form"' in response.content.decode()


def test_publish_post_with_a_share_splits_the_label(
    publisher_web: Client,  # noqa: F811
    released: int,
) -> None:
    response = publisher_web.post(
        "/releases/publish",
        {"label": "production", "candidate": "latest", "message": "canary", "share": "12.5%"},
    )

    assert response.status_code == 302
    assert selectors.label_get("production").target.as_json() == {
        "split": [{"release": released, "weight": 8750}, {"release": 2, "weight": 1250}]
    }


@pytest.mark.parametrize(
    ("share", "text"), [("ten", "is no percentage"), ("100", "the weight is 1 to 9,999")]
)
def test_publish_post_bad_share_shows_under_it_with_the_report(
    publisher_web: Client,  # noqa: F811
    released: int,
    share: str,
    text: str,
) -> None:
    moves = move_count()
    response = publisher_web.post(
        "/releases/publish",
        {"label": "production", "candidate": "latest", "message": "kept", "share": share},
    )

    assert response.status_code == 400
    html = response.content.decode()
    assert text in html.split('id="publish-share-error"', 1)[1].split("</p>", 1)[0]
    assert 'id="impact-summary"' in html and 'value="kept"' in html
    assert selectors.label_get("production").target.as_json() == {"release": released}
    assert move_count() == moves
    assert Release.objects.count() == 1
