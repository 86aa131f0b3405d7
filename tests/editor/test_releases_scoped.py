"""The Releases page of a prompt other than ``default``, under
``/editor/p/support/triage/-/releases/…``: it shows that prompt's releases, labels and
test contexts (not ``default``'s, and ``default``'s page not its), every write from it
lands on that prompt, every link, form and redirect stays under it, an unknown prompt is
404, and a folder restriction refuses a non-member's write with the words on the page,
changing nothing."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import Client
from django.utils import timezone

from sysprompt.errors import LabelNotFound, TestContextNotFound
from sysprompt.evaluations.services import suite_create
from sysprompt.events.models import AuditRecord
from sysprompt.prompts.catalog_services import folder_restrict, prompt_create
from sysprompt.prompts.models import Prompt, PromptAlias
from sysprompt.prompts.services import template_save
from sysprompt.releases import selectors, services
from sysprompt.releases.models import Label, LabelMove, Release, TestContext
from tests.editor.library_support import web
from tests.editor.releases_support import production, publisher  # noqa: F401  (fixtures)
from tests.releases.support import template

TRIAGE = "/editor/p/support/triage/-/"
"""Where support/triage's pages are."""


@dataclass(frozen=True)
class Two:
    """``default`` and support/triage, each with releases, a ``staging`` label, a test
    context and a suite of its own; support/triage's working copy changed since its
    release 1."""

    triage: Prompt
    default: Prompt


@pytest.fixture
def two(author: User, publisher: User) -> Two:  # noqa: F811
    triage = prompt_create(name="support/triage", template="Triage v1.", author=author)
    services.release_create(message="triage one", author=author, prompt=triage)
    services.label_set(name="staging", target="latest", author=author, prompt=triage)
    services.label_set(name="staging", target={"release": 1}, author=author, prompt=triage)
    services.test_context_save(
        name="triage-host", fields={"values": {"git:branch": "main"}}, author=author, prompt=triage
    )
    suite_create(name="triage-suite", author=author, prompt=triage)
    template_save(text="Triage v2.", prompt=triage)

    template("Default v1.")
    services.release_create(message="default one", author=author)
    template("Default v2.")
    services.release_create(message="default two", author=author)
    services.label_set(name="staging", target={"release": 2}, author=author)
    services.label_set(name="canary", target="latest", author=author)
    services.test_context_save(
        name="default-host", fields={"values": {"git:branch": "dev"}}, author=author
    )
    suite_create(name="default-suite", author=author)
    default = Prompt.objects.get(name="default")
    return Two(triage=triage, default=default)


def page_of(response: HttpResponseBase) -> str:
    assert isinstance(response, HttpResponse)
    return html.unescape(response.content.decode())


def without_header(page: str) -> str:
    """The page without its header (whose switcher names every prompt)."""
    return re.sub(r"<header.*?</header>", "", page, flags=re.S)


def targets(page: str) -> dict[str, str]:
    """Each label of a page's ``#labels`` table and its target as shown."""
    return dict(
        re.findall(
            r'<tr data-label="([^"]+)">.*?<span class="target-single">([^<]+)</span>', page, re.S
        )
    )


def state() -> tuple[object, ...]:
    """Every row the Releases page writes, to show that a refusal changed none."""
    return (
        list(Release.objects.order_by("id").values_list("id", "prompt_id", "number", "message")),
        list(Label.objects.order_by("id").values_list("id", "prompt_id", "name", "target", "gate")),
        LabelMove.objects.count(),
        list(TestContext.objects.order_by("id").values_list("id", "prompt_id", "name", "values")),
    )


# --- what each page shows -------------------------------------------------------------


def test_releases_scoped_page_shows_its_prompt_and_not_default(
    author_web: Client, two: Two
) -> None:
    response = author_web.get(f"{TRIAGE}releases/")

    assert response.status_code == 200
    page = page_of(response)
    assert '<h1>Releases — <span class="mono" id="releases-prompt">support/triage</span></h1>' in (
        page
    )
    assert "triage one" in page and '<tr data-release="1">' in page
    assert "default one" not in page and '<tr data-release="2">' not in page
    assert targets(page) == {"production": "latest", "staging": "release 1"}
    assert '<tr data-test-context="triage-host">' in page
    assert "default-host" not in page


def test_releases_default_page_shows_default_and_not_the_other_prompt(
    author_web: Client, two: Two
) -> None:
    page = page_of(author_web.get("/releases/"))

    assert "<h1>Releases</h1>" in page and "releases-prompt" not in page
    assert "<title>Releases · sysprompt</title>" in page
    assert "default two" in page and "default one" in page
    assert "triage one" not in page and "triage-host" not in page
    assert targets(page) == {"production": "latest", "canary": "latest", "staging": "release 2"}
    assert "/editor/p/" not in without_header(page)


@pytest.mark.parametrize(
    ("path", "shows", "hides"),
    [
        ("releases/labels/staging/", ["release 1", "triage-suite"], ["release 2", "default-suite"]),
        ("releases/compare?release=1&with=latest", ["Triage v1."], ["Default v"]),
        ("releases/publish?label=staging&candidate=latest", ["triage-host"], ["default-host"]),
        ("releases/test-contexts/triage-host/", ["git:branch=main"], ["default-host"]),
        ("releases/?before=2", ["triage one"], ["default one"]),
    ],
    ids=["label", "compare", "publish", "test-context", "older"],
)
def test_releases_scoped_subpage_reads_its_prompt(
    author_web: Client, two: Two, path: str, shows: list[str], hides: list[str]
) -> None:
    response = author_web.get(TRIAGE + path)

    assert response.status_code == 200
    page = page_of(response)
    assert "support/triage" in without_header(page)
    for text in shows:
        assert text in page
    for text in hides:
        assert text not in page


@pytest.mark.parametrize(
    "path",
    [
        "releases/labels/canary/",  # default's label
        "releases/test-contexts/default-host/",  # default's test context
        "releases/compare?release=2&with=latest",  # default's release
    ],
)
def test_releases_scoped_page_does_not_find_default_s_rows(
    author_web: Client, two: Two, path: str
) -> None:
    assert author_web.get(TRIAGE + path).status_code == 404


SCOPED_PAGES = [
    "releases/",
    "releases/?before=2",
    "releases/labels/staging/",
    "releases/compare?release=1&with=latest",
    "releases/publish",
    "releases/publish?label=staging&candidate=latest",
    "releases/test-contexts/",
    "releases/test-contexts/triage-host/",
]

_LINK = re.compile(r'(?:href|action|hx-get|hx-post)="([^"]*)"')


@pytest.mark.parametrize("path", SCOPED_PAGES)
def test_releases_scoped_page_links_stay_under_its_prompt(
    author_web: Client, two: Two, path: str
) -> None:
    page = page_of(author_web.get(TRIAGE + path))

    links = [
        url
        for url in _LINK.findall(page)
        if not url.startswith("/static/")
        and ("/releases" in url or "/evaluations" in url or "/labels" in url)
    ]
    assert links
    assert [url for url in links if not url.startswith(TRIAGE)] == []


def test_releases_scoped_older_rows_from_htmx_link_under_its_prompt(
    author_web: Client, two: Two
) -> None:
    for number in range(3, 24):
        template_save(text=f"Triage v{number}.", prompt=two.triage)
        services.release_create(message=f"triage {number}", author=None, prompt=two.triage)

    page = page_of(author_web.get(f"{TRIAGE}releases/"))
    more = f'hx-get="{TRIAGE}releases/?before=3"'
    rows = page_of(author_web.get(f"{TRIAGE}releases/?before=3", HTTP_HX_REQUEST="true"))

    assert more in page
    assert '<tr data-release="2">' in rows and '<tr data-release="1">' in rows
    assert f'href="{TRIAGE}releases/compare?release=1&with=latest"' in rows


def test_releases_alias_names_the_prompt(author_web: Client, two: Two) -> None:
    PromptAlias.objects.create(name="support/old", prompt=two.triage, created_at=timezone.now())

    page = page_of(author_web.get("/editor/p/support/old/-/releases/"))

    assert "triage one" in page and "default one" not in page


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "releases/"),
        ("get", "releases/labels/production/"),
        ("get", "releases/publish"),
        ("get", "releases/test-contexts/"),
        ("post", "releases/create"),
        ("post", "releases/labels/"),
        ("post", "releases/labels/production/rollback"),
    ],
)
def test_releases_unknown_prompt_is_404_and_writes_nothing(
    author_web: Client, two: Two, method: str, path: str
) -> None:
    before = state()

    response = getattr(author_web, method)(f"/editor/p/nobody/here/-/{path}", {"name": "x"})

    assert response.status_code == 404
    assert state() == before


# --- writes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Write:
    """A write on the scoped page: what it posts, where it goes, what it left on
    support/triage, and ``default`` untouched."""

    path: str
    data: dict[str, Any]
    location: str
    landed: Callable[[Prompt], bool]


def _label_target(name: str, prompt: Prompt) -> object:
    try:
        return selectors.label_get(name, prompt=prompt).target.as_json()
    except LabelNotFound:
        return None


def _has_context(name: str, prompt: Prompt) -> bool:
    try:
        selectors.test_context_get(name, prompt=prompt)
    except TestContextNotFound:
        return False
    return True


WRITES = {
    "create-release": Write(
        "releases/create",
        {"message": "triage two"},
        f"{TRIAGE}releases/",
        lambda p: selectors.releases_list(prompt=p).first().message == "triage two",  # type: ignore[union-attr]
    ),
    "set-label": Write(
        "releases/labels/",
        {"name": "beta", "kind": "release", "release": "1", "arms": "", "message": "b"},
        f"{TRIAGE}releases/labels/beta/",
        lambda p: _label_target("beta", p) == {"release": 1},
    ),
    "rollback": Write(
        "releases/labels/staging/rollback",
        {"message": "back"},
        f"{TRIAGE}releases/labels/staging/",
        lambda p: _label_target("staging", p) == "latest",
    ),
    "publish": Write(
        "releases/publish",
        {"label": "staging", "candidate": "latest", "message": "ship"},
        f"{TRIAGE}releases/labels/staging/",
        lambda p: _label_target("staging", p) == {"release": 2},
    ),
    "gate": Write(
        "releases/labels/staging/gate",
        {"suite": "triage-suite", "max_regressions": "0", "min_pass_rate": "0", "models": "echo"},
        f"{TRIAGE}releases/labels/staging/#gate",
        lambda p: selectors.label_get("staging", prompt=p).gate is not None,
    ),
    "test-context-new": Write(
        "releases/test-contexts/",
        {"name": "second-host", "values": "git:branch=next"},
        f"{TRIAGE}releases/#test-contexts",
        lambda p: _has_context("second-host", p),
    ),
    "test-context-edit": Write(
        "releases/test-contexts/triage-host/",
        {"values": "git:branch=edited"},
        f"{TRIAGE}releases/#test-contexts",
        lambda p: (
            selectors.test_context_get("triage-host", prompt=p).values == {"git:branch": "edited"}
        ),
    ),
    "test-context-delete": Write(
        "releases/test-contexts/triage-host/delete",
        {},
        f"{TRIAGE}releases/#test-contexts",
        lambda p: not _has_context("triage-host", p),
    ),
}


def _default_rows(default: Prompt) -> tuple[object, ...]:
    return (
        list(Release.objects.filter(prompt=default).values_list("id", "message")),
        list(Label.objects.filter(prompt=default).values_list("name", "target", "gate")),
        LabelMove.objects.filter(label__prompt=default).count(),
        list(TestContext.objects.filter(prompt=default).values_list("name", "values")),
    )


@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
def test_releases_scoped_write_lands_on_its_prompt_only(
    author_web: Client, two: Two, write: Write
) -> None:
    untouched = _default_rows(two.default)

    response = author_web.post(TRIAGE + write.path, write.data)

    assert response.status_code == 302, re.findall(
        r"class=\"error\"[^>]*>([^<]*)", page_of(response)
    )
    assert response["Location"] == write.location
    assert write.landed(two.triage)
    assert _default_rows(two.default) == untouched


def test_releases_scoped_release_numbers_count_per_prompt(author_web: Client, two: Two) -> None:
    template("Default v3.")

    author_web.post(f"{TRIAGE}releases/create", {"message": "triage two"})
    author_web.post("/releases/create", {"message": "default three"})

    assert [r.number for r in selectors.releases_list(prompt=two.triage)] == [2, 1]
    assert [r.number for r in selectors.releases_list()] == [3, 2, 1]


# --- a folder restriction ---------------------------------------------------------------


@pytest.fixture
def restricted(two: Two) -> Two:
    """support/ restricted to the group support-team, which the author is not in."""
    Group.objects.create(name="support-team")
    admin = User.objects.create_superuser("admin")
    folder_restrict(folder="support/", editor_groups=["support-team"], author=admin)
    return two


REFUSED = "The prompt 'support/triage' is restricted"


@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
def test_releases_scoped_write_refused_by_a_folder_restriction_changes_nothing(
    author_web: Client, restricted: Two, write: Write
) -> None:
    before = state()

    response = author_web.post(TRIAGE + write.path, write.data, follow=True)

    assert response.status_code in (200, 403)
    page = page_of(response)
    assert REFUSED in page and "support-team" in page
    assert state() == before
    refused = AuditRecord.objects.filter(action="prompt.refused").get()
    assert refused.object == "prompt support/triage"


def test_releases_scoped_write_allowed_for_a_member_of_the_restriction(
    author: User, restricted: Two
) -> None:
    author.groups.add(Group.objects.get(name="support-team"))
    member = web(User.objects.get(pk=author.pk))

    response = member.post(f"{TRIAGE}releases/create", {"message": "triage two"})

    assert response.status_code == 302
    assert selectors.releases_list(prompt=restricted.triage).count() == 2
