"""Releases §5: GET, POST /api/releases, one release, and comparisons."""

from __future__ import annotations

from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.api.library_support import put_fragment
from tests.api.release_support import (
    RELEASES,
    create_release,
    release_url,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]


def test_create_release_answers_201_then_200_while_nothing_changes(
    author_client: APIClient,
) -> None:
    author_client.put("/api/system-prompt", {"template": "[fragment:core]"}, format="json")
    put_fragment(author_client, "core", "v1")
    put_fragment(author_client, "core", "claude", query={"provider": "anthropic"})

    first = create_release(author_client, "First")
    again = create_release(author_client, "Again")

    assert (first.status_code, again.status_code) == (201, 200)
    body = first.json()
    assert again.json() == body
    assert {key: body[key] for key in ("number", "message", "author", "template_version")} == {
        "number": 1,
        "message": "First",
        "author": "author",
        "template_version": 1,
    }
    assert body["created_at"].endswith("Z")
    assert body["fragments"] == [
        {"name": "core", "provider": None, "model": None, "version": 1},
        {"name": "core", "provider": "anthropic", "model": None, "version": 1},
    ]
    assert author_client.get(release_url(1)).json() == body


def test_list_releases_newest_first_in_cursor_pages(author_client: APIClient) -> None:
    for n in range(3):
        put_fragment(author_client, "core", f"v{n}")
        create_release(author_client, f"release {n}")

    first = author_client.get(RELEASES, {"page_size": 2}).json()
    rest = author_client.get(first["next"]).json()

    assert [r["number"] for r in first["results"]] == [3, 2]
    assert [r["number"] for r in rest["results"]] == [1]
    assert rest["next"] is None
    assert set(first["results"][0]) == {
        "prompt",
        "number",
        "message",
        "author",
        "created_at",
        "template_version",
    }


def test_compare_release_with_latest_and_with_another(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "one\n")
    create_release(author_client)
    put_fragment(author_client, "core", "two\n")
    create_release(author_client)
    put_fragment(author_client, "core", "three\n")

    with_latest = author_client.get(release_url(1, "/compare")).json()
    with_two = author_client.get(release_url(1, "/compare"), {"with": "2"}).json()

    assert with_latest["with"] == "latest" and with_two["with"] == 2
    assert with_latest["changed"] and with_latest["template"] is None
    [change] = with_latest["fragments"]
    assert (change["before_version"], change["after_version"]) == (1, 3)
    assert change["diff"] == "--- before\n+++ after\n@@ -1 +1 @@\n-one\n+three\n"
    assert with_two["fragments"][0]["diff"].endswith("-one\n+two\n")


def test_compare_variants_share_one_diff_deadline_and_say_why_not_shown(
    author_client: APIClient,
) -> None:
    """Three variants whose texts no diff finishes in a second (10,000 lines, one line
    repeated, against the same with every other line changed): one is stopped at the
    deadline, the others are not started; each says why, with both sides' sizes."""
    old = "- rule\n" * 10_000
    new = "".join("- rule\n" if n % 2 else "- other\n" for n in range(10_000))
    names = ("a", "b", "c")
    for name in names:
        put_fragment(author_client, name, old)
    create_release(author_client)
    for name in names:
        put_fragment(author_client, name, new)

    fragments = author_client.get(release_url(1, "/compare")).json()["fragments"]

    sizes = "(old: 10,000 lines, 70,000 characters; new: 10,000 lines, 75,000 characters)"
    assert [(change["diff"], change["diff_truncated"]) for change in fragments] == [("", False)] * 3
    reasons = [change["diff_too_large"] for change in fragments]
    assert reasons[0] == f"Too large to show a line diff: not computed within 1 s {sizes}"
    assert (
        reasons[1:]
        == [f"Not diffed: the 1 s the diffs shown here share went to the ones before {sizes}"] * 2
    )


@pytest.mark.parametrize(
    "url",
    [release_url(9), release_url(0), release_url(10**30), release_url(1, "/compare?with=9")],
)
def test_unknown_release_answers_404(author_client: APIClient, url: str) -> None:
    create_release(author_client)

    response = author_client.get(url)

    assert response.status_code == 404
    assert "There is no release" in response.json()["detail"]


@pytest.mark.parametrize("other", ["main", "0", "-1", "1.0", "latest ", "99999999999"])
def test_compare_refuses_a_bad_with_naming_it(author_client: APIClient, other: str) -> None:
    create_release(author_client)

    response = author_client.get(release_url(1, "/compare"), {"with": other})

    assert response.status_code == 400
    assert list(response.json()) == ["with"]


def test_create_release_of_an_empty_install_holds_the_default_template(
    author_client: APIClient, workdir: Path
) -> None:
    response = create_release(author_client)

    assert response.status_code == 201
    assert (response.json()["template_version"], response.json()["fragments"]) == (0, [])
