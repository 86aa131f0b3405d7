"""Saving a variant from the editor, its history, and the actions on a variant
(delete, restore, adopt, keep mine), through Django's test client."""

from __future__ import annotations

import json

from django.contrib.auth.models import User
from django.test import Client

from sysprompt.library import selectors
from tests.editor.library_support import (
    SCRIPT,
    htmx,
    save,
    web,
)

SAVE = "/library/env/git/-/save?provider=anthropic"


def test_variant_save_adds_a_version_with_its_settings(author_web: Client) -> None:
    response = author_web.post(
        SAVE,
        {
            "template": "Git\r\nrepo [var:repo]",
            "base_etag": "",
            "compress": "on",
            "strategy": "prepend",
            "defaults": "repo=demo\ntone=a=b",
        },
        headers=htmx(),
    )

    assert response.status_code == 200
    event = json.loads(response["HX-Trigger"])["sysprompt:saved"]
    state = selectors.variant_current("env/git", "anthropic", None)
    assert state is not None
    assert event == {"version": 1, "etag": state.etag, "author": "author"}
    assert state.text == "Git\r\nrepo [var:repo]"
    assert (state.compress, state.strategy) == (True, "prepend")
    assert state.defaults == {"repo": "demo", "tone": "a=b"}


def test_variant_save_stale_etag_answers_the_conflict_dialog(author_web: Client) -> None:
    first = save("core", "One.")
    save("core", f"Two {SCRIPT}.")

    response = author_web.post(
        "/library/core/-/save", {"template": "Mine.", "base_etag": first.etag}, headers=htmx()
    )

    content = response.content.decode()
    assert response.status_code == 412
    assert response["X-Sysprompt-Partial"] == "1"
    assert response["HX-Retarget"] == "#conflict-body"
    assert "sysprompt:conflict" in response["HX-Trigger"]
    assert "saved version 2" in content and SCRIPT not in content
    assert selectors.variant_current("core").text == f"Two {SCRIPT}."  # type: ignore[union-attr]


def test_variant_save_new_variant_created_meanwhile_conflicts(author_web: Client) -> None:
    save("core", "Someone made it.")

    response = author_web.post("/library/core/-/save", {"template": "Mine.", "base_etag": ""})

    assert response.status_code == 412
    assert selectors.variant_current("core").version == 1  # type: ignore[union-attr]


def test_variant_save_refuses_bad_defaults_and_settings(author_web: Client) -> None:
    bad_line = author_web.post("/library/core/-/save", {"template": "x", "defaults": "novalue"})
    bad_strategy = author_web.post("/library/core/-/save", {"template": "x", "strategy": "replace"})

    assert bad_line.status_code == 400 and "defaults" in bad_line.content.decode()
    assert bad_strategy.status_code == 400
    assert selectors.variant_current("core") is None


def test_variant_save_forbidden_without_the_author_permission(viewer_web: Client) -> None:
    response = viewer_web.post("/library/core/-/save", {"template": "x"}, headers=htmx())

    assert response.status_code == 403
    assert response["X-Sysprompt-Partial"] == "1"
    assert selectors.variant_current("core") is None


def test_variant_save_refused_without_csrf_token(author: User) -> None:
    client = web(author, enforce_csrf_checks=True)

    response = client.post("/library/core/-/save", {"template": "x"})

    assert response.status_code == 403
    assert selectors.variant_current("core") is None


def test_variant_history_lists_versions_and_diffs(author_web: Client, author: User) -> None:
    save("core", "one\n", author=author)
    save("core", "two\n", compress=True)
    author_web.post("/library/core/-/delete")

    history = author_web.get("/library/core/-/history")
    text = author_web.get("/library/core/-/history/2.json").json()
    diff = author_web.post("/library/core/-/history/1/diff", {"template": "three\n"})
    versions = author_web.get("/library/core/-/history/1/diff/2")
    compare = author_web.get("/library/core/-/history/compare?old=1&new=2")

    rows = history.context["versions"]
    assert [(r.number, r.deleted) for r in rows] == [(3, True), (2, False), (1, False)]
    assert rows[2].author == "author"
    assert text == {
        "version": 2,
        "template": "two\n",
        "settings": {"compress": True, "strategy": "append", "defaults": {}},
    }
    assert "three" in diff.content.decode()
    assert "two" in versions.content.decode() and "two" in compare.content.decode()
    assert author_web.get("/library/core/-/history/9.json").status_code == 404


def test_variant_history_pages_keep_the_variant(author_web: Client) -> None:
    for number in range(27):
        save("core", f"v{number}", "openai")

    first = author_web.get("/library/core/-/history?provider=openai")

    assert first.context["older_url"] == "/library/core/-/history?provider=openai&before=3"
    assert ("provider", "openai") in first.context["compare_hidden"]
    older = author_web.get(first.context["older_url"])
    assert [r.number for r in older.context["versions"]] == [2, 1]


def test_variant_delete_then_restore(author_web: Client) -> None:
    save("core", "Keep me.")

    deleted = author_web.post("/library/core/-/delete", follow=True)
    state = selectors.variant_current("core")
    assert state is not None and state.deleted
    assert deleted.context["restore_number"] == 1
    restored = author_web.post("/library/core/-/restore", {"number": 1}, follow=True)

    state = selectors.variant_current("core")
    assert state is not None and not state.deleted and state.text == "Keep me."
    assert "Restored version 1" in restored.content.decode()


def test_variant_actions_are_for_authors(viewer_web: Client) -> None:
    save("core", "Core.")

    for action in ("delete", "restore", "adopt", "keep-mine"):
        assert viewer_web.post(f"/library/core/-/{action}", {"number": 1}).status_code == 403
    assert selectors.variant_current("core").version == 1  # type: ignore[union-attr]


def test_template_save_keeps_compress(author_web: Client) -> None:
    response = author_web.post("/editor/save", {"template": "## T", "compress": "on"})

    assert response.status_code == 200
    assert author_web.get("/editor/history/1.json").json()["settings"] == {"compress": True}
