"""The Library pages through Django's test client: login, the tree and its search
partial, a variant's page (escaping, normalised keys, new variants, permissions)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from sysprompt.library import services
from tests.editor.library_support import (
    SCRIPT,
    htmx,
    save,
)

GET_URLS = [
    "/library/",
    "/library/core",
    "/library/core/-/edit",
    "/library/core/-/history",
    "/library/core/-/history/1.json",
    "/library/-/new?name=core",
    "/library/-/transfer",
    "/library/-/export",
]
POST_URLS = [
    "/library/core/-/save",
    "/library/core/-/history/1/diff",
    "/library/core/-/delete",
    "/library/core/-/restore",
    "/library/core/-/adopt",
    "/library/core/-/keep-mine",
    "/library/-/import",
    "/library/-/import/apply",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", GET_URLS)
def test_library_get_redirects_to_login_when_anonymous(client: Client, url: str) -> None:
    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.django_db
@pytest.mark.parametrize("url", POST_URLS)
def test_library_post_redirects_to_login_when_anonymous(client: Client, url: str) -> None:
    response = client.post(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_library_tree_groups_names_by_segment(author_web: Client) -> None:
    save("core", "Core.")
    save("core", "Core for Anthropic.", "anthropic")
    save("env/git-repository", "Git.")
    save("env/sandbox", "Sandbox.")

    response = author_web.get("/library/")

    content = response.content.decode()
    assert response.status_code == 200
    nodes = [node.path for node in response.context["tree"]]
    assert nodes == ["core", "env"]
    env = response.context["tree"][1]
    assert not env.is_fragment
    assert [child.path for child in env.children] == ["env/git-repository", "env/sandbox"]
    assert [row.label for row in response.context["tree"][0].variants] == ["default", "anthropic"]
    assert 'href="/library/core?provider=anthropic"' in content
    assert 'href="/library/env/sandbox"' in content
    assert ">Library</a>" in content  # the navigation link


def test_library_search_htmx_answers_tree_alone_with_vary(author_web: Client) -> None:
    save("core", "Core.")
    save("env/sandbox", "You run in a sandbox.")

    response = author_web.get("/library/?q=SANDBOX", headers=htmx())

    content = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in content
    assert 'data-name="env/sandbox"' in content and 'data-name="core"' not in content
    assert "HX-Request" in response["Vary"]


def test_library_search_history_restore_gets_whole_page(author_web: Client) -> None:
    response = author_web.get("/library/?q=x", headers=htmx(History_Restore_Request="true"))

    assert "<html" in response.content.decode()
    assert "HX-Request" in response["Vary"]


def test_library_tree_shows_flags(author_web: Client, author: User) -> None:
    save("core", "Mine.", author=author)
    save("gone", "Soon gone.")
    services.variant_delete(name="gone", author=author)

    response = author_web.get("/library/")

    rows = {node.path: node.variants[0].state for node in response.context["tree"]}
    assert rows["core"].edited and not rows["core"].deleted
    assert rows["gone"].deleted
    content = response.content.decode()
    assert 'class="badge badge-deleted">deleted' in content
    assert 'class="badge badge-edited">edited' in content


def test_variant_page_escapes_hostile_text(author_web: Client) -> None:
    save("core", f"Hi {SCRIPT}\n", defaults={"x": SCRIPT})

    for url in ("/library/core", "/library/core/-/edit", "/library/?q=script"):
        content = author_web.get(url).content.decode()
        assert SCRIPT not in content
    page = author_web.get("/library/core").content.decode()
    assert escape(SCRIPT) in page


def test_variant_page_redirects_to_normalised_key(author_web: Client) -> None:
    response = author_web.get("/library/core?provider=Anthropic&model=Claude%20Sonnet%204.5")

    assert response.status_code == 302
    assert response["Location"] == "/library/core?provider=anthropic&model=claude-sonnet-4-5"


@pytest.mark.parametrize(
    "url", ["/library/Bad%20Name", "/library/a/../b", "/library/core?model=gpt-5"]
)
def test_variant_page_not_a_variant_answers_404(author_web: Client, url: str) -> None:
    assert author_web.get(url).status_code == 404


def test_variant_page_new_variant_starts_from_its_fallback(author_web: Client) -> None:
    save("core", "The default text.", strategy="prepend")

    response = author_web.get("/library/core/-/edit?provider=openai")

    assert response.status_code == 200
    config = response.context["config"]
    assert config["template"] == "The default text."
    assert config["etag"] == "" and config["settings"]["strategy"] == "prepend"
    assert "data-open-on-load" in response.content.decode()


def test_variant_page_missing_variant_is_404_for_viewer(viewer_web: Client) -> None:
    save("core", "Core.")

    assert viewer_web.get("/library/core?provider=openai").status_code == 404
    response = viewer_web.get("/library/core")
    content = response.content.decode()
    assert response.status_code == 200
    assert response.context["config"]["canEdit"] is False
    assert 'id="delete-variant"' not in content and 'id="new-variant"' not in content


def test_fragment_named_like_an_endpoint_has_its_page(author_web: Client) -> None:
    save("export", "A fragment named export.")

    page = author_web.get("/library/export")
    archive = author_web.get("/library/-/export")

    assert page.status_code == 200 and page.context["variant"].name == "export"
    assert archive["Content-Type"] == "application/zip"


def test_new_refuses_a_bad_name_with_its_reason(author_web: Client) -> None:
    response = author_web.get("/library/-/new?name=Bad Name")

    assert response.status_code == 400
    assert "name:" in response.context["new_error"]


def test_new_opens_the_editor_on_the_normalised_variant(author_web: Client) -> None:
    response = author_web.get("/library/-/new?name=env/docker&provider=OpenAI&model=GPT 5")

    assert response.status_code == 302
    assert response["Location"] == "/library/env/docker/-/edit?provider=openai&model=gpt-5"


def test_new_is_for_authors(viewer_web: Client) -> None:
    assert viewer_web.get("/library/-/new?name=core").status_code == 403
