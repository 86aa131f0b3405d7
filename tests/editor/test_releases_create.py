"""Create release and Compare on the Releases page."""

from __future__ import annotations

import pytest
from django.test import Client

from sysprompt.releases.models import Release
from tests.editor.releases_support import (  # noqa: F401  (fixtures)
    SCRIPT,
    production,
    release,
    save,
    template,
)


def test_release_create_makes_a_release_with_its_message(author_web: Client) -> None:
    template("Hello.")

    response = author_web.post("/releases/create", {"message": f"first {SCRIPT}"}, follow=True)

    assert response.status_code == 200
    html = response.content.decode()
    assert "Release 1 created." in html
    assert "first &lt;script&gt;" in html and SCRIPT not in html
    assert Release.objects.get().message == f"first {SCRIPT}"


def test_release_create_unchanged_working_copy_makes_none(author_web: Client) -> None:
    template("Hello.")
    release()

    response = author_web.post("/releases/create", {"message": "again"}, follow=True)

    assert "Nothing changed since release 1" in response.content.decode()
    assert Release.objects.count() == 1


def test_release_create_too_long_message_changes_nothing(author_web: Client) -> None:
    response = author_web.post("/releases/create", {"message": "x" * 4001})
    assert response.status_code == 400
    assert 'id="release-message-error"' in response.content.decode()
    assert not Release.objects.exists()


def test_release_compare_with_working_copy(author_web: Client) -> None:
    template("Hello.")
    save("core", "Core v1.")
    number = release()
    save("core", f"Core v2 {SCRIPT}")
    save("extra", "Extra.")

    response = author_web.get(f"/releases/compare?release={number}&with=latest")

    assert response.status_code == 200
    html = response.content.decode()
    assert "Release 1 → latest (the working copy)" in html
    assert "-Core v1." in html and "+Core v2 &lt;script&gt;" in html and SCRIPT not in html
    assert "new, version 1" in html  # extra


def test_release_compare_two_releases(author_web: Client) -> None:
    template("One.")
    first = release()
    template("Two.")
    second = release()

    html = author_web.get(f"/releases/compare?release={first}&with={second}").content.decode()

    assert "Release 1 → release 2" in html
    assert "version 1 → 2" in html and "+Two." in html


def test_release_compare_same_release_says_so(author_web: Client) -> None:
    template("One.")
    number = release()
    html = author_web.get(f"/releases/compare?release={number}&with=latest").content.decode()
    assert "No difference" in html


@pytest.mark.parametrize(
    ("query", "status", "error_id"),
    [
        ("release=abc&with=latest", 400, "compare-release-error"),
        ("release=latest&with=latest", 400, "compare-release-error"),
        ("release=1&with=soon", 400, "compare-with-error"),
        ("release=99&with=latest", 404, "compare-error"),
    ],
)
def test_release_compare_bad_input_says_why(
    author_web: Client, query: str, status: int, error_id: str
) -> None:
    template("One.")
    release()
    response = author_web.get(f"/releases/compare?{query}")
    assert response.status_code == status
    assert f'id="{error_id}"' in response.content.decode()
