"""An agent host's instance override on the Agent hosts page: set as text or preset,
refusals shown inline under that host's form, and who may change it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.library import selectors
from tests.editor.library_support import SCRIPT, save, web


@pytest.fixture
def host(db: None) -> str:
    return accounts.agent_host_ensure(name="build-01").username


@pytest.fixture
def manager_web(author: User) -> Client:
    """An author who may also manage agent hosts."""
    author.user_permissions.add(Permission.objects.get(codename="add_token"))
    # production is protected: a host's label and override on it are a publisher's
    author.user_permissions.add(Permission.objects.get(codename="publish_release"))
    return web(User.objects.get(pk=author.pk))


def test_host_override_text_is_saved_and_shown(manager_web: Client, host: str) -> None:
    response = manager_web.post(
        f"/agent-hosts/{host}/override",
        {"kind": "text", "content": f"Be brief. {SCRIPT}", "text_strategy": "prepend"},
        follow=True,
    )

    state = selectors.host_override_state(host)
    assert state.override == {"content": f"Be brief. {SCRIPT}", "strategy": "prepend"}
    content = response.content.decode()
    assert "Instance override of build-01 saved" in content
    assert SCRIPT not in content
    row = response.context["overrides"][0]
    assert (row.kind, row.strategy) == ("text", "prepend")


def test_host_override_preset_with_variables(manager_web: Client, host: str) -> None:
    save("presets/reviewer", "Review [var:area].", defaults={"area": "all"})

    manager_web.post(
        f"/agent-hosts/{host}/override",
        {"kind": "preset", "preset": "presets/reviewer", "variables": "area=tests"},
    )

    assert selectors.host_override_state(host).override == {
        "preset": "presets/reviewer",
        "variables": {"area": "tests"},
    }


def test_host_override_unknown_preset_is_refused_inline(manager_web: Client, host: str) -> None:
    response = manager_web.post(
        f"/agent-hosts/{host}/override", {"kind": "preset", "preset": "nope/missing"}
    )

    assert response.status_code == 400
    row = response.context["overrides"][0]
    assert row.error and row.preset == "nope/missing"
    assert 'class="error override-error"' in response.content.decode()
    assert selectors.host_override_state(host).override is None


def test_host_override_none_removes_it(manager_web: Client, host: str) -> None:
    manager_web.post(f"/agent-hosts/{host}/override", {"kind": "text", "content": "x"})

    manager_web.post(f"/agent-hosts/{host}/override", {"kind": "none"})

    assert selectors.host_override_state(host).override is None


def test_host_override_needs_the_author_permission(db: None, host: str) -> None:
    manager = User.objects.create_user("grace")
    manager.user_permissions.add(Permission.objects.get(codename="add_token"))
    client = web(manager)

    page = client.get("/agent-hosts/").content.decode()
    client.post(f"/agent-hosts/{host}/override", {"kind": "text", "content": "x"})

    assert "Save override" not in page
    assert selectors.host_override_state(host).override is None


def test_host_override_of_a_non_host_is_404(manager_web: Client, author: User) -> None:
    response = manager_web.post(
        f"/agent-hosts/{author.username}/override", {"kind": "text", "content": "x"}
    )

    assert response.status_code == 404
