"""History: two versions compared with each other, and relative times ("just now")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.template import Context, Template
from django.test import Client
from django.utils import timezone

from sysprompt.prompts import services


@pytest.fixture
def author_web(author: User) -> Client:
    client = Client()
    client.force_login(author)
    return client


def test_versions_diff_shows_lines_between_two_versions(author_web: Client) -> None:
    services.template_save(text="a\nold\nc\n")
    services.template_save(text="unrelated\n")
    services.template_save(text="a\nnew\nc\n")

    response = author_web.get("/editor/history/1/diff/3", HTTP_HX_REQUEST="true")

    content = response.content.decode()
    assert response.status_code == 200
    assert "Version 1 → version 3" in content
    assert '<tr class="diff-insert">' in content and '<tr class="diff-delete">' in content
    diff = response.context["diff"]
    assert (diff.added, diff.removed) == (1, 1)
    lines = {(line.kind, line.text) for hunk in diff.hunks for line in hunk.lines}
    assert {("delete", "old"), ("insert", "new")} <= lines


def test_versions_diff_goes_either_way(author_web: Client) -> None:
    services.template_save(text="one\n")
    services.template_save(text="one\ntwo\n")

    response = author_web.get("/editor/history/2/diff/1")

    assert "Version 2 → version 1" in response.content.decode()
    assert (response.context["diff"].added, response.context["diff"].removed) == (0, 1)


def test_versions_diff_says_identical_when_same_version(author_web: Client) -> None:
    services.template_save(text="one\n")

    response = author_web.get("/editor/history/1/diff/1")

    assert "Identical." in response.content.decode()


@pytest.mark.parametrize("url", ["/editor/history/1/diff/9", "/editor/history/9/diff/1"])
def test_versions_diff_is_404_when_version_missing(author_web: Client, url: str) -> None:
    services.template_save(text="one\n")

    assert author_web.get(url).status_code == 404


@pytest.mark.django_db
def test_versions_diff_redirects_to_login_when_anonymous(client: Client) -> None:
    response = client.get("/editor/history/1/diff/2")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_versions_compare_form_renders_chosen_pair(author_web: Client) -> None:
    services.template_save(text="first\n")
    services.template_save(text="second\n")

    response = author_web.get("/editor/history/compare", {"old": 1, "new": 2})

    assert response.status_code == 200
    assert "Version 1 → version 2" in response.content.decode()


def test_versions_compare_form_refuses_missing_choice(author_web: Client) -> None:
    services.template_save(text="first\n")

    response = author_web.get("/editor/history/compare", {"old": 1})

    assert response.status_code == 400
    assert response["X-Sysprompt-Partial"] == "1"


def test_history_offers_compare_choices_preselecting_newest_two(author_web: Client) -> None:
    for text in ("one\n", "two\n", "three\n"):
        services.template_save(text=text)

    content = author_web.get("/editor/history", HTTP_HX_REQUEST="true").content.decode()

    assert 'id="history-compare"' in content
    assert 'name="old" value="2" form="history-compare" checked' in content
    assert 'name="new" value="3" form="history-compare" checked' in content
    assert 'name="old" value="1" form="history-compare" aria-label' in content
    assert "Diff with editor" in content and "Restore" in content  # kept as they were


def test_history_offers_no_compare_with_one_version(author_web: Client) -> None:
    services.template_save(text="one\n")

    content = author_web.get("/editor/history", HTTP_HX_REQUEST="true").content.decode()

    assert 'id="history-compare"' not in content


# --- relative times --------------------------------------------------------------------


def ago(value: object) -> str:
    return Template("{% load relative_time %}{{ value|ago }}").render(Context({"value": value}))


@pytest.mark.parametrize("seconds", [0, 1, 59, -5])
def test_ago_says_just_now_when_under_a_minute(seconds: int) -> None:
    assert ago(timezone.now() - timedelta(seconds=seconds)) == "just now"


def test_ago_counts_minutes_when_a_minute_or_more() -> None:
    assert ago(timezone.now() - timedelta(minutes=5, seconds=3)) == "5\xa0minutes ago"


def test_ago_is_empty_when_no_time() -> None:
    assert ago(None) == ""


def test_history_says_just_now_when_saved_this_minute(author_web: Client) -> None:
    services.template_save(text="fresh\n")

    content = author_web.get("/editor/history", HTTP_HX_REQUEST="true").content.decode()

    assert "just now" in content
    assert "0\xa0minutes" not in content and "0 minutes" not in content


def test_main_page_says_just_now_when_saved_this_minute(author_web: Client) -> None:
    services.template_save(text="fresh\n")

    content = author_web.get("/").content.decode()

    assert "saved <time" in content and "just now</time>" in content
    assert "0\xa0minutes" not in content
