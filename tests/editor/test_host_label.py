"""An agent host's label on the Agent hosts page: shown (else production by default),
set and cleared by authors, a refused name shown under that host's form with nothing
changed, and refused to users without the author permission."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.releases import selectors, services
from tests.editor.library_support import web

LABEL_URL = "/agent-hosts/build-01/label"


@pytest.fixture
def host(db: None) -> str:
    return accounts.agent_host_ensure(name="build-01").username


@pytest.fixture
def manager_web(author: User) -> Client:
    """An author who may also manage agent hosts."""
    author.user_permissions.add(Permission.objects.get(codename="add_token"))
    # production is protected: a host's label and override on it are a publisher's
    author.user_permissions.add(Permission.objects.get(codename="publish_release"))
    services.label_set(name="staging", target="latest", author=author)
    return web(User.objects.get(pk=author.pk))


def set_label(client: Client, label: str, **extra: str) -> Any:
    return client.post(LABEL_URL, {"label": label, **extra}, follow=True)


def label_of(host: str) -> str | None:
    return selectors.host_label_state(host).label


def test_host_label_shows_production_by_default(manager_web: Client, host: str) -> None:
    response = manager_web.get("/agent-hosts/")

    [(_, row)] = response.context["host_rows"]
    assert row.label is None
    assert 'production <span class="muted">(default)</span>' in response.content.decode()
    assert '<option value="staging">' in response.content.decode()


def test_host_label_set_is_stored_and_shown(manager_web: Client, host: str) -> None:
    response = set_label(manager_web, " staging ")

    assert label_of(host) == "staging"
    content = response.content.decode()
    assert "Label of build-01 set to staging" in content
    [(_, row)] = response.context["host_rows"]
    assert (row.label, row.updated_by) == ("staging", "author")


def test_host_label_clear_returns_to_production(manager_web: Client, host: str) -> None:
    set_label(manager_web, "staging")

    response = set_label(manager_web, "staging", clear="1")

    assert label_of(host) is None
    assert "Label of build-01 cleared: its conversations use production." in (
        response.content.decode()
    )


def test_host_label_empty_clears_too(manager_web: Client, host: str) -> None:
    set_label(manager_web, "staging")

    set_label(manager_web, "")

    assert label_of(host) is None


@pytest.mark.parametrize(
    ("name", "says"),
    [("Not A Label", "is not a label name"), ("latest", "the working copy itself")],
)
def test_host_label_bad_name_refused_unchanged(
    manager_web: Client, host: str, name: str, says: str
) -> None:
    set_label(manager_web, "staging")

    response = set_label(manager_web, name)

    assert response.status_code == 400
    assert label_of(host) == "staging"
    [(_, row)] = response.context["host_rows"]
    assert row.typed == name and row.label == "staging"
    assert row.error is not None and says in row.error
    assert 'class="error host-label-error"' in response.content.decode()


def test_host_label_unknown_label_refused_as_the_api_does(manager_web: Client, host: str) -> None:
    response = set_label(manager_web, "nowhere")

    assert response.status_code == 400
    assert label_of(host) is None
    [(_, row)] = response.context["host_rows"]
    assert row.error == "There is no label 'nowhere'; GET /api/labels lists them."


def test_host_label_production_can_be_named(manager_web: Client, host: str) -> None:
    set_label(manager_web, "production")

    assert label_of(host) == "production"


def test_host_label_non_author_refused(db: None, host: str) -> None:
    manager = User.objects.create_user("grace")
    manager.user_permissions.add(Permission.objects.get(codename="add_token"))
    client = web(manager)

    response = set_label(client, "production")

    assert label_of(host) is None
    assert "needs the prompt author permission" in response.content.decode()
    assert 'class="host-label-form"' not in response.content.decode()


def test_host_label_refused_without_host_permission(author: User, host: str) -> None:
    response = web(author).post(LABEL_URL, {"label": "production"})

    assert response.status_code == 403
    assert label_of(host) is None


def test_host_label_unknown_host_is_404(manager_web: Client, host: str) -> None:
    response = manager_web.post("/agent-hosts/nobody/label", {"label": "production"})

    assert response.status_code == 404
