"""The save banner on a named prompt's pages (``/editor/p/<name>/-/``) says what saving
that prompt's working copy does: its own production label, not ``default``'s."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from sysprompt.prompts import catalog_services
from sysprompt.prompts.models import Prompt
from sysprompt.releases import services as releases
from tests.editor.library_support import web
from tests.editor.test_save_banner import SHIPS, banners, draft
from tests.releases.support import AUTHOR, PUBLISH, template, user

TRIAGE_PAGES = ("/editor/p/support/triage/-/", "/editor/p/support/triage/-/editor")


@pytest.fixture
def publisher(db: None) -> User:
    releases.production_ensure()
    return user("publisher", AUTHOR, PUBLISH)


@pytest.fixture
def triage(publisher: User) -> Prompt:
    made = catalog_services.prompt_create(name="support/triage", template="I triage.", author=None)
    releases.production_ensure(made)
    return made


def pin(publisher: User, prompt: Prompt | None) -> None:
    """``prompt``'s production on a release of its working copy (``None``: default's)."""
    if prompt is None:
        template("Default.")
    number = releases.release_create(author=publisher, prompt=prompt).release.number
    releases.label_set(
        name="production", target={"release": number}, author=publisher, prompt=prompt
    )


CASES: dict[str, tuple[Callable[[User, Prompt], None], str, str]] = {
    "support/triage's production on a release": (
        lambda publisher, triage: pin(publisher, triage),
        draft("release 1"),
        SHIPS,
    ),
    "default's production on a release": (
        lambda publisher, triage: pin(publisher, None),
        SHIPS,
        draft("release 1"),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_save_banner_on_a_prompts_pages_tells_its_production(
    publisher: User, triage: Prompt, case: str
) -> None:
    setup, on_triage, on_default = CASES[case]
    setup(publisher, triage)
    client = web(publisher)

    for page in TRIAGE_PAGES:
        found = banners(client, page)
        assert found, f"no save banner on {page}"
        assert all(text.startswith(on_triage) for text in found), (page, found)
    assert all(text.startswith(on_default) for text in banners(client, "/"))


def test_save_banner_on_a_prompts_pages_links_its_releases_page(
    publisher: User, triage: Prompt
) -> None:
    content = web(publisher).get(TRIAGE_PAGES[0]).content.decode()

    assert '<a href="/editor/p/support/triage/-/releases/">Releases page</a>' in content


def test_save_banner_on_a_prompts_pages_names_its_labels_that_follow_latest(
    publisher: User, triage: Prompt
) -> None:
    releases.label_set(name="staging", target="latest", author=publisher, prompt=triage)
    releases.label_set(name="canary", target="latest", author=publisher)

    [page, _] = banners(web(publisher), TRIAGE_PAGES[0])

    assert page.endswith("Each save also reaches staging: that label follows the working copy.")
