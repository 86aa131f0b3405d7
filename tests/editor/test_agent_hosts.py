"""The Agent hosts page: create a host and see its token once, rotate it, never list it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client
from rest_framework.authtoken.models import Token

from sysprompt.accounts import services as accounts
from sysprompt.groups import AGENT_HOSTS_GROUP

PASSWORD = "s3cret-pass-word"
TOKEN_PERMISSION = "add_token"


@pytest.fixture
def manager(db: None) -> User:
    """May create agent hosts: has ``authtoken.add_token``."""
    user = User.objects.create_user("grace", "", PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename=TOKEN_PERMISSION))
    return user


@pytest.fixture
def manager_web(manager: User) -> Client:
    client = Client()
    client.force_login(manager)
    return client


@pytest.fixture
def author_web(author: User) -> Client:
    """A prompt author without the token permission."""
    client = Client()
    client.force_login(author)
    return client


def token_of(username: str) -> str:
    return str(Token.objects.get(user__username=username).key)


# --- the list ----------------------------------------------------------------------------


def test_agent_hosts_lists_hosts_without_tokens(manager_web: Client) -> None:
    with_token = accounts.agent_host_ensure(name="build-01")
    Token.objects.filter(user__username="build-01").delete()
    accounts.agent_host_ensure(name="laptop")
    User.objects.create_user("not-a-host")

    response = manager_web.get("/agent-hosts/")

    content = response.content.decode()
    assert response.status_code == 200
    hosts = {host.username: host for host in response.context["hosts"]}
    assert set(hosts) == {"build-01", "laptop"}
    assert hosts["build-01"].has_token is False and hosts["laptop"].has_token is True
    assert "not-a-host" not in content
    assert with_token.token not in content and token_of("laptop") not in content
    assert "No token" in content and "<time" in content
    assert response["Cache-Control"] == "no-store"


def test_agent_hosts_says_none_when_empty(manager_web: Client) -> None:
    assert "No agent hosts yet" in manager_web.get("/agent-hosts/").content.decode()


# --- create ------------------------------------------------------------------------------


def test_agent_host_create_shows_token_once_on_answer(manager_web: Client) -> None:
    response = manager_web.post("/agent-hosts/", {"name": "build-01"})

    content = response.content.decode()
    key = token_of("build-01")
    assert response.status_code == 200
    assert key in content
    assert "will not see it again" in content
    assert 'data-copy="#agent-token"' in content
    assert response["Cache-Control"] == "no-store"
    host = User.objects.get(username="build-01")
    assert host.groups.filter(name=AGENT_HOSTS_GROUP).exists()
    assert not host.has_usable_password()
    # not on the list, nor on a second answer
    assert key not in manager_web.get("/agent-hosts/").content.decode()
    again = manager_web.post("/agent-hosts/", {"name": "build-01"})
    assert again.status_code == 400
    assert key not in again.content.decode()
    assert "already exists" in again.content.decode()


@pytest.mark.parametrize(
    ("name", "message"),
    [("", "This field is required"), ("bad name!", "is not a valid user name")],
)
def test_agent_host_create_shows_message_when_name_invalid(
    manager_web: Client, name: str, message: str
) -> None:
    response = manager_web.post("/agent-hosts/", {"name": name})

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Token.objects.exists()


def test_agent_host_create_refuses_existing_user(manager_web: Client, author: User) -> None:
    """An existing person's account is never turned into an agent host, nor its token shown."""
    User.objects.create_user("bob", "", PASSWORD)
    token = Token.objects.create(user=User.objects.get(username="bob"))

    for name in ("bob", author.username):
        response = manager_web.post("/agent-hosts/", {"name": name})

        assert response.status_code == 400
        assert "already exists" in response.content.decode()
        assert token.key not in response.content.decode()
    assert not Group.objects.filter(name=AGENT_HOSTS_GROUP, user__username="bob").exists()


def test_agent_host_create_escapes_name(manager_web: Client) -> None:
    response = manager_web.post("/agent-hosts/", {"name": "<script>"})

    assert "<script>" not in response.content.decode()


# --- rotate ------------------------------------------------------------------------------


def test_agent_host_rotate_replaces_token_and_shows_new_once(manager_web: Client) -> None:
    old = accounts.agent_host_ensure(name="build-01").token

    response = manager_web.post("/agent-hosts/build-01/rotate")

    new = token_of("build-01")
    content = response.content.decode()
    assert response.status_code == 200
    assert new != old
    assert new in content and old not in content
    assert "will not see it again" in content
    assert response["Cache-Control"] == "no-store"
    assert new not in manager_web.get("/agent-hosts/").content.decode()


def test_agent_host_rotate_gives_token_when_none(manager_web: Client) -> None:
    accounts.agent_host_ensure(name="build-01")
    Token.objects.all().delete()

    response = manager_web.post("/agent-hosts/build-01/rotate")

    assert token_of("build-01") in response.content.decode()


def test_agent_host_rotate_is_404_when_not_a_host(manager_web: Client) -> None:
    User.objects.create_user("bob", "", PASSWORD)

    assert manager_web.post("/agent-hosts/bob/rotate").status_code == 404
    assert manager_web.post("/agent-hosts/nobody/rotate").status_code == 404
    assert not Token.objects.exists()


def test_agent_host_rotate_refuses_get(manager_web: Client) -> None:
    accounts.agent_host_ensure(name="build-01")

    assert manager_web.get("/agent-hosts/build-01/rotate").status_code == 405


def test_agent_hosts_page_offers_rotate_with_confirm(manager_web: Client) -> None:
    accounts.agent_host_ensure(name="build-01")

    content = manager_web.get("/agent-hosts/").content.decode()

    assert 'action="/agent-hosts/build-01/rotate"' in content
    assert "data-confirm=" in content


# --- who may -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url"),
    [("get", "/agent-hosts/"), ("post", "/agent-hosts/"), ("post", "/agent-hosts/x/rotate")],
)
def test_agent_hosts_forbidden_without_permission(
    author_web: Client, method: str, url: str
) -> None:
    accounts.agent_host_ensure(name="x")
    response = getattr(author_web, method)(url, {"name": "build-01"})

    assert response.status_code == 403
    assert not User.objects.filter(username="build-01").exists()


@pytest.mark.django_db
def test_agent_hosts_redirects_to_login_when_anonymous(client: Client) -> None:
    response = client.get("/agent-hosts/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_nav_links_agent_hosts_only_with_permission(
    manager_web: Client, author_web: Client
) -> None:
    assert 'href="/agent-hosts/"' in manager_web.get("/").content.decode()
    assert 'href="/agent-hosts/"' not in author_web.get("/").content.decode()


@pytest.mark.parametrize("url", ["/agent-hosts/", "/agent-hosts/build-01/rotate"])
def test_agent_hosts_writes_refused_without_csrf_token(manager: User, url: str) -> None:
    accounts.agent_host_ensure(name="build-01")
    before = token_of("build-01")
    client = Client(enforce_csrf_checks=True)
    client.force_login(manager)

    response = client.post(url, {"name": "new-host"})

    assert response.status_code == 403
    assert token_of("build-01") == before
    assert not User.objects.filter(username="new-host").exists()
