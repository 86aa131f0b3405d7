"""Releases §2: an agent host's label, set by authors — by publishers when the host
moves off or onto a protected label (tests/releases/test_host_protection.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.errors import AgentHostNotFound, InvalidInput
from sysprompt.releases import selectors, services
from sysprompt.releases.models import HostLabel

pytestmark = pytest.mark.django_db


def test_host_label_set_and_remove(writer: User, publisher: User) -> None:
    agent_host_ensure(name="host-1")
    services.label_set(name="canary", target="latest", author=writer)

    state = services.host_label_set(username="host-1", label="canary", author=publisher)

    assert (state.label, state.effective, state.updated_by) == ("canary", "canary", "publisher")
    cleared = services.host_label_set(username="host-1", label=None, author=publisher)
    assert (cleared.label, cleared.effective) == (None, "production")
    assert selectors.host_label_state("host-1") == cleared


@pytest.mark.parametrize("label", ["nope", "Bad Name", "latest"])
def test_host_label_set_refuses_what_is_no_label_and_keeps_the_old_one(
    writer: User, publisher: User, label: str
) -> None:
    agent_host_ensure(name="host-1")
    services.label_set(name="canary", target="latest", author=writer)
    services.host_label_set(username="host-1", label="canary", author=publisher)

    with pytest.raises(InvalidInput) as caught:
        services.host_label_set(username="host-1", label=label, author=writer)

    assert caught.value.field == "label"
    assert selectors.host_label_state("host-1").label == "canary"


def test_host_label_set_refuses_a_user_who_is_no_agent_host(writer: User) -> None:
    with pytest.raises(AgentHostNotFound):
        services.host_label_set(username="writer", label="production", author=writer)

    assert not HostLabel.objects.exists()
