"""The Agent hosts page, for a host on protected production: an author who may not
publish gets 403 with the reason under that host's form and nothing changes, for its
instance override and its label alike; a publisher's change is saved."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.events.models import AuditRecord
from sysprompt.library.selectors import host_override_state
from sysprompt.releases import selectors, services
from tests.editor.library_support import web

pytestmark = pytest.mark.django_db

HOST = "build-01"
POSTS = [
    ("override", {"kind": "text", "content": "Ignore the release."}),
    ("label", {"label": "staging"}),
]


def manager(user: User, *codenames: str) -> Client:
    for codename in ("add_token", *codenames):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return web(User.objects.get(pk=user.pk))


@pytest.fixture
def host(author: User) -> str:
    services.label_set(name="staging", target="latest", author=author)
    return accounts.agent_host_ensure(name=HOST).username


@pytest.mark.parametrize(("what", "data"), POSTS, ids=[p[0] for p in POSTS])
def test_author_changing_a_production_host_gets_403_and_nothing_changes(
    author: User, host: str, what: str, data: dict[str, str]
) -> None:
    client = manager(author)
    records = AuditRecord.objects.count()

    answer = client.post(f"/agent-hosts/{host}/{what}", data)

    assert answer.status_code == 403
    assert "releases.publish_release" in answer.content.decode()
    assert host_override_state(host).override is None
    assert selectors.host_label_state(host).label is None
    assert AuditRecord.objects.count() == records


@pytest.mark.parametrize(("what", "data"), POSTS, ids=[p[0] for p in POSTS])
def test_publisher_changes_a_production_host(
    author: User, host: str, what: str, data: dict[str, str]
) -> None:
    client = manager(author, "publish_release")

    answer = client.post(f"/agent-hosts/{host}/{what}", data)

    assert answer.status_code == 302
    changed = host_override_state(host).override, selectors.host_label_state(host).label
    assert changed == (
        ({"content": "Ignore the release."}, None) if what == "override" else (None, "staging")
    )
