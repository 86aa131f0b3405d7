"""The editor placeholder page and the login pages around it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client

PASSWORD = "s3cret-pass-word"


@pytest.fixture
def user(db: None) -> User:
    return User.objects.create_user("ada", "", PASSWORD)


@pytest.mark.parametrize("url", ["/", "/editor/"])
def test_placeholder_redirects_to_login_when_anonymous(client: Client, url: str) -> None:
    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"


@pytest.mark.parametrize("url", ["/", "/editor/"])
def test_placeholder_renders_when_logged_in(client: Client, user: User, url: str) -> None:
    client.force_login(user)

    response = client.get(url)

    assert response.status_code == 200
    assert [t.name for t in response.templates][:2] == ["editor/placeholder.html", "base.html"]
    content = response.content.decode()
    assert "The editor arrives soon" in content
    assert 'href="/admin/"' in content


@pytest.mark.django_db
def test_login_page_renders_when_anonymous(client: Client) -> None:
    response = client.get("/accounts/login/")

    assert response.status_code == 200
    assert "registration/login.html" in [t.name for t in response.templates]
    assert b'name="csrfmiddlewaretoken"' in response.content
    assert b"/static/css/app.css" in response.content


def test_login_redirects_to_placeholder_when_credentials_valid(client: Client, user: User) -> None:
    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/"


def test_login_shows_error_when_credentials_wrong(client: Client, user: User) -> None:
    response = client.post("/accounts/login/", {"username": "ada", "password": "nope"})

    assert response.status_code == 200
    assert b'role="alert"' in response.content


def test_logout_redirects_to_login_when_posted(client: Client, user: User) -> None:
    client.force_login(user)

    response = client.post("/accounts/logout/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/"
    assert client.get("/").status_code == 302


def test_placeholder_denies_framing_when_served(client: Client, user: User) -> None:
    client.force_login(user)

    response = client.get("/")

    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_stylesheet_is_found_when_collected() -> None:
    assert finders.find("css/app.css")
