"""The save banner: every editor page that saves the working copy says whether saving
ships (production follows latest), ships to a share of production (a split with a
``latest`` arm) or edits a draft (production serves a release or a split of releases),
and which other labels each save reaches."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.releases import services as releases
from tests.editor.library_support import save, web
from tests.releases.support import AUTHOR, PUBLISH, template, user

PAGES = {
    "template": "/",
    "template editor": "/editor/",
    "variant": "/library/env/git",
    "variant editor": "/library/env/git/-/edit",
    "new fragment": "/library/-/new?name=env/docker",
    "library": "/library/",
    "import": "/library/-/transfer",
}
"""Every page that saves the working copy (the new fragment's opens its editor)."""

SHIPS = (
    "Saving ships: production follows the working copy; every new conversation on "
    "production gets each save."
)


def to_release(number: int) -> object:
    return {"release": number}


def to_split(first: int, second: int) -> object:
    return {"split": [{"release": first, "weight": 9000}, {"release": second, "weight": 1000}]}


@pytest.fixture
def publisher(db: None) -> User:
    releases.production_ensure()  # production → latest, as the migration leaves it
    return user("publisher", AUTHOR, PUBLISH)


@pytest.fixture
def author_web(publisher: User) -> Client:
    save("env/git", "Git.")
    return web(publisher)


def point(publisher: User, name: str, target: object) -> None:
    releases.label_set(name=name, target=target, author=publisher)


def two_releases(publisher: User) -> tuple[int, int]:
    template("One.")
    first = releases.release_create(author=publisher).release.number
    template("Two.")
    return first, releases.release_create(author=publisher).release.number


def banners(client: Client, url: str) -> list[str]:
    """The text of every save banner on the page (the page's, and the editor's)."""
    response = client.get(url, follow=True)
    assert response.status_code == 200
    found = re.findall(
        r'<div class="save-banner[^"]*"[^>]*>(.*?)</div>', response.content.decode(), re.S
    )
    return [" ".join(re.sub(r"<[^>]+>", "", html).split()) for html in found]


def draft(serves: str) -> str:
    return (
        f"Saving edits a draft: production serves {serves}. To ship, publish on the Releases page."
    )


CASES: dict[str, tuple[Callable[[User], None], str]] = {
    "latest": (lambda publisher: None, SHIPS),
    "release": (
        lambda publisher: point(publisher, "production", to_release(two_releases(publisher)[0])),
        draft("release 1"),
    ),
    "split": (
        lambda publisher: point(publisher, "production", to_split(*two_releases(publisher))),
        draft("a split (release 1 90%, release 2 10%)"),
    ),
}


@pytest.mark.parametrize("target", CASES)
@pytest.mark.parametrize("page", PAGES)
def test_save_banner_says_what_saving_does_on_every_saving_page(
    author_web: Client, publisher: User, page: str, target: str
) -> None:
    setup, words = CASES[target]
    setup(publisher)

    found = banners(author_web, PAGES[page])

    assert found, f"no save banner on {page}"
    assert all(text.startswith(words) for text in found), found


def test_save_banner_split_with_latest_ships_to_its_share(
    author_web: Client, publisher: User
) -> None:
    first, _ = two_releases(publisher)
    split = {"split": [{"release": first, "weight": 7500}, {"release": "latest", "weight": 2500}]}
    point(publisher, "production", split)

    [page, editor] = banners(author_web, "/")

    assert page == editor
    assert page.startswith(
        "Saving ships to 25% of production: production serves a split (release 1 75%, "
        "latest 25%); the rest gets a change once you publish it on the Releases page."
    )


def test_save_banner_names_other_labels_that_follow_latest(
    author_web: Client, publisher: User
) -> None:
    first, _ = two_releases(publisher)
    point(publisher, "production", to_release(first))
    point(publisher, "staging", "latest")
    releases.label_set(name="eu", target="latest", protected=True, author=publisher)
    canary = {"split": [{"release": first, "weight": 9000}, {"release": "latest", "weight": 1000}]}
    point(publisher, "canary", canary)
    point(publisher, "pinned", to_release(first))

    [text, _] = banners(author_web, "/library/env/git")

    assert text.endswith(
        "Each save also reaches canary (10%), eu (protected), staging: those labels follow "
        "the working copy."
    )
    assert "pinned" not in text


def banner_html(client: Client) -> str:
    content = client.get("/").content.decode()
    banner = content[content.index('<div class="save-banner') :]
    return banner[: banner.index("</div>")]


def test_save_banner_links_the_releases_page(author_web: Client) -> None:
    assert '<a href="/releases/">Releases page</a>' in banner_html(author_web)


def test_save_banner_links_no_page_a_reader_may_not_open(db: None) -> None:
    html = banner_html(web(User.objects.create_user("reader")))

    assert "Releases page" in html and "/releases/" not in html


def test_save_banner_index_says_new_conversations_get_production(
    author_web: Client, publisher: User
) -> None:
    point(publisher, "production", to_release(two_releases(publisher)[0]))

    content = author_web.get("/").content.decode()

    assert "new conversations get what production serves (release 1)" in content
    assert "New conversations get this template" not in content


def test_save_banner_shown_to_readers_too(publisher: User) -> None:
    point(publisher, "production", to_release(two_releases(publisher)[0]))
    reader = web(User.objects.create_user("reader"))

    assert banners(reader, "/")[0].startswith(draft("release 1"))


def test_save_banner_library_search_partial_has_none(author_web: Client) -> None:
    response = author_web.get("/library/?q=git", HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert "save-banner" not in response.content.decode()
