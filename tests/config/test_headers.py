"""Response headers on every route: ``Cache-Control: no-store`` wherever a prompt or a
template can travel, the Content-Security-Policy on every page, and static files that
keep whitenoise's own caching. Real views, real database, Django's test client."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from tests.conftest import token_client

pytestmark = pytest.mark.django_db

STRICT_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
CONVERSATION = "/api/conversations/c1/system-prompt"
CODEMIRROR_PAGES = {"/", "/editor/"}


def directives(policy: str) -> dict[str, str]:
    """A policy's directives by name (their order carries no meaning)."""
    parts = (part.strip().partition(" ") for part in policy.split(";") if part.strip())
    return {name: value for name, _, value in parts}


@pytest.fixture
def staff_author(author: User) -> User:
    author.is_staff = True
    author.is_superuser = True
    author.save()
    return author


@pytest.fixture
def api(staff_author: User) -> APIClient:
    return token_client(staff_author)


@pytest.fixture
def browser(staff_author: User) -> Client:
    client = Client()
    client.force_login(staff_author)
    return client


@pytest.fixture
def stored(api: APIClient, workdir: Path) -> str:
    """A stored conversation ``c1`` and a saved template version 1."""
    saved = api.put("/api/system-prompt", {"template": "In [prompt:cwd].\n"}, format="json")
    assert saved.status_code == 200
    resolved = api.post(f"{CONVERSATION}/resolve", {"cwd": str(workdir)}, format="json")
    assert resolved.status_code == 201
    return str(workdir)


# (method, path, body); "{cwd}" is the stored conversation's working directory.
API_ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/api/system-prompt", None),
    ("PUT", "/api/system-prompt", {"template": "Again [prompt:cwd].\n"}),
    ("GET", "/api/system-prompt/variables", None),
    ("GET", "/api/system-prompt/versions", None),
    ("POST", "/api/system-prompt/preview", {"template": "[prompt:cwd]", "cwd": "{cwd}"}),
    ("POST", f"{CONVERSATION}/resolve", {"cwd": "{cwd}"}),
    ("POST", f"{CONVERSATION}/construct", {"cwd": "{cwd}"}),
    ("POST", f"{CONVERSATION}/compact", {"cwd": "{cwd}"}),
    ("GET", CONVERSATION, None),
    ("DELETE", CONVERSATION, None),
    ("GET", "/api/conversations", None),
    ("GET", "/api/health", None),
    ("GET", "/api/schema/", None),
    ("GET", "/api/nope", None),  # errors too
]


def _fill(body: dict[str, Any] | None, cwd: str) -> dict[str, Any] | None:
    if body is None:
        return None
    return {key: value.replace("{cwd}", cwd) for key, value in body.items()}


@pytest.mark.parametrize(
    ("method", "url", "body"), API_ROUTES, ids=[f"{m} {u}" for m, u, _ in API_ROUTES]
)
def test_api_answer_not_stored_by_caches(
    api: APIClient, stored: str, method: str, url: str, body: dict[str, Any] | None
) -> None:
    data = "" if body is None else json.dumps(_fill(body, stored))
    response = api.generic(method, url, data, "application/json")

    assert response.status_code < 500, response.content[:300]
    assert response["Cache-Control"] == "no-store"


# (method, path, form data); pages and htmx partials of the editor, login, admin, docs.
PAGE_ROUTES: list[tuple[str, str, dict[str, str] | None]] = [
    ("GET", "/", None),
    ("GET", "/editor/", None),
    ("POST", "/editor/preview", {"template": "[prompt:cwd]", "cwd": "{cwd}"}),
    ("POST", "/editor/save", {"template": "Saved [prompt:cwd]\n", "base_etag": ""}),
    ("GET", "/editor/history", None),
    ("GET", "/editor/history/1.json", None),
    ("POST", "/editor/history/1/diff", {"template": "Other\n"}),
    ("GET", "/editor/files?cwd={cwd}&q=A", None),
    ("GET", "/conversations/", None),
    ("GET", "/conversations/c1/", None),
    ("GET", "/conversations/missing/", None),
    ("GET", "/admin/", None),
    ("GET", "/admin/sysprompt/", None),
    ("GET", "/admin/axes/accessattempt/", None),
    ("GET", "/accounts/login/", None),
    ("GET", "/api/docs/", None),
    ("GET", "/no-such-page/", None),
]


def _page(client: Client, method: str, url: str, data: dict[str, str] | None, cwd: str) -> Any:
    url = url.replace("{cwd}", cwd)
    if method == "GET":
        return client.get(url)
    filled = {key: value.replace("{cwd}", cwd) for key, value in (data or {}).items()}
    return client.post(url, filled)


PAGE_IDS = [f"{m} {u}" for m, u, _ in PAGE_ROUTES]


@pytest.mark.parametrize(("method", "url", "data"), PAGE_ROUTES, ids=PAGE_IDS)
def test_page_not_stored_by_caches(
    browser: Client, stored: str, method: str, url: str, data: dict[str, str] | None
) -> None:
    response = _page(browser, method, url, data, stored)

    assert response.status_code < 500, response.content[:300]
    assert "no-store" in response["Cache-Control"]  # admin/login: never_cache's own


@pytest.mark.parametrize(("method", "url", "data"), PAGE_ROUTES, ids=PAGE_IDS)
def test_page_carries_content_security_policy(
    browser: Client, stored: str, method: str, url: str, data: dict[str, str] | None
) -> None:
    response = _page(browser, method, url, data, stored)

    policy = response["Content-Security-Policy"]
    if url == "/api/docs/":  # drf-spectacular's inline <style>, allowed by its nonce only
        nonce = re.search(r"'nonce-([A-Za-z0-9+/=]+)'", policy)
        assert nonce is not None, policy
        expected = STRICT_POLICY.replace("style-src 'self'", f"style-src 'self' 'nonce-{nonce[1]}'")
        assert directives(policy) == directives(expected)
        assert f'<style nonce="{nonce[1]}">'.encode() in response.content
    elif url in CODEMIRROR_PAGES:  # CodeMirror's <style> elements, allowed by the nonce
        nonce = re.search(r"'nonce-([A-Za-z0-9+/=]+)'", policy)
        assert nonce is not None, policy
        expected = STRICT_POLICY.replace("style-src 'self'", f"style-src 'self' 'nonce-{nonce[1]}'")
        assert directives(policy) == directives(expected)
        assert f'"cspNonce": "{nonce[1]}"'.encode() in response.content
    else:
        assert directives(policy) == directives(STRICT_POLICY)


def test_page_anonymous_login_redirect_not_stored(client: Client) -> None:
    response = client.get("/editor/")

    assert response.status_code == 302
    assert response["Cache-Control"] == "no-store"
    assert directives(response["Content-Security-Policy"]) == directives(STRICT_POLICY)


def test_page_view_own_cache_control_kept(browser: Client) -> None:
    """Views that choose their caching keep it (the admin's never_cache)."""
    response = browser.get("/admin/")

    assert response["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"


@pytest.mark.parametrize("url", ["/static/css/app.css", "/static/editor/editor.js"])
def test_static_file_keeps_whitenoise_caching(client: Client, url: str) -> None:
    response = client.get(url)
    response.close()  # a file response

    assert response.status_code == 200
    assert "no-store" not in response["Cache-Control"]
    assert "max-age=" in response["Cache-Control"]
