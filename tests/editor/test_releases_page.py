"""The Releases page: labels with their targets (a split as a bar), what the working
copy changes since what production serves, the releases newest first (htmx pages
them), and who may see it."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.test import Client

from sysprompt.releases import selectors, services
from tests.editor.library_support import htmx
from tests.editor.releases_support import (  # noqa: F401  (fixtures)
    SCRIPT,
    production,
    publisher,
    publisher_web,
    release,
    save,
    template,
)


def test_releases_page_lists_labels_with_split_bar(author_web: Client, author: User) -> None:
    template("Hello.")
    first = release("first")
    template("Hello again.")
    second = release("second")
    services.label_set(
        name="canary",
        target={"split": [{"release": first, "weight": 7500}, {"release": second, "weight": 2500}]},
        author=author,
    )

    response = author_web.get("/releases/")

    assert response.status_code == 200
    html = response.content.decode()
    row = re.search(r'<tr data-label="canary">.*?</tr>', html, re.S)
    assert row is not None
    assert 'class="split-arm split-arm-0" x="0" y="0" width="7500"' in row[0]
    assert 'class="split-arm split-arm-1" x="7500" y="0" width="2500"' in row[0]
    assert "release 1 <strong>75%</strong>" in row[0]
    production_row = re.search(r'<tr data-label="production">.*?</tr>', html, re.S)
    assert production_row is not None and "protected" in production_row[0]
    assert "publishers only" in production_row[0]  # the author may not move it
    assert "style=" not in html  # the CSP allows no inline style


def test_releases_page_publisher_sees_no_lock(publisher_web: Client) -> None:  # noqa: F811
    html = publisher_web.get("/releases/").content.decode()
    assert "publishers only" not in html
    assert 'id="publish-protected-note"' not in html


def test_releases_page_production_latest_says_saving_ships(author_web: Client) -> None:
    response = author_web.get("/releases/")
    assert 'id="ships-directly"' in response.content.decode()


def test_releases_page_shows_working_copy_changes_since_production(
    author_web: Client,
    publisher: User,  # noqa: F811
) -> None:
    template("Be brief.")
    save("style", "Old style.")
    number = release()
    services.label_set(name="production", target={"release": number}, author=publisher)
    template("Be brief and kind.")
    save("style", f"New style {SCRIPT}")

    html = author_web.get("/releases/").content.decode()

    assert 'id="ships-directly"' not in html
    section = html.split('id="working-copy"', 1)[1].split("</section>", 1)[0]
    assert "release 1" in section and "→ working copy" in section
    assert '<span class="udiff-line udiff-insert">+Be brief and kind.</span>' in section
    assert '<span class="udiff-line udiff-delete">-Be brief.</span>' in section
    assert "style" in section and "version 1 → 2" in section
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section


def test_releases_page_says_why_a_diff_is_not_shown_with_sizes(
    author_web: Client,
    publisher: User,  # noqa: F811
) -> None:
    """A template no diff finishes in a second (10,000 lines, one line repeated, against
    the same with every other line changed): the sentence and sizes, no lines, no counts."""
    template("- rule\n" * 10_000)
    number = release()
    services.label_set(name="production", target={"release": number}, author=publisher)
    template("".join("- rule\n" if n % 2 else "- other\n" for n in range(10_000)))

    html = author_web.get("/releases/").content.decode()

    section = html.split('id="working-copy"', 1)[1].split("</section>", 1)[0]
    assert (
        '<p class="muted diff-too-large" role="status">Too large to show a line diff: not '
        "computed within 1 s (old: 10,000 lines, 70,000 characters; new: 10,000 lines, "
        "75,000 characters).</p>"
    ) in section
    assert "udiff-line" not in section and "diff-counts" not in section


def test_releases_page_lists_releases_newest_first_and_pages_with_htmx(
    author_web: Client,
) -> None:
    for number in range(22):
        template(f"Version {number}.")
        release(f"message {number}")

    html = author_web.get("/releases/").content.decode()
    numbers = re.findall(r'<tr data-release="(\d+)">', html)
    assert numbers == [str(n) for n in range(22, 2, -1)]
    assert "?before=3" in html

    older = author_web.get("/releases/?before=3", headers=htmx())
    assert older.status_code == 200
    assert "Vary" in older and "HX-Request" in older["Vary"]
    assert re.findall(r'<tr data-release="(\d+)">', older.content.decode()) == ["2", "1"]
    assert "<html" not in older.content.decode()

    page = author_web.get("/releases/?before=3")
    assert "<html" in page.content.decode()
    assert re.findall(r'<tr data-release="(\d+)">', page.content.decode()) == ["2", "1"]


def test_releases_page_refuses_agent_hosts(agent_host: User) -> None:
    client = Client()
    client.force_login(agent_host)
    for path in ("/releases/", "/releases/publish", "/releases/labels/production/"):
        assert client.get(path).status_code == 403
    assert client.post("/releases/create", {"message": "x"}).status_code == 403
    assert client.get("/").content.decode().count('href="/releases/"') == 0


def test_releases_page_anonymous_goes_to_login(client: Client, db: None) -> None:
    response = client.get("/releases/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_releases_nav_link_for_authors(author_web: Client) -> None:
    html = author_web.get("/releases/").content.decode()
    assert '<a href="/releases/" aria-current="page">Releases</a>' in html


def test_releases_posts_need_the_csrf_token(author: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(author)
    for path in (
        "/releases/create",
        "/releases/publish",
        "/releases/labels/",
        "/releases/labels/production/rollback",
        "/releases/test-contexts/",
    ):
        assert client.post(path, {"message": "x"}).status_code == 403, path
    assert not selectors.releases_list().exists()
