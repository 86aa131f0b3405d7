"""An agent host's instance override: set, read, parsed for rendering, and refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from sysprompt import groups
from sysprompt.accounts import services as accounts
from sysprompt.errors import AgentHostNotFound, InvalidInput
from sysprompt.groups import AGENT_HOSTS_GROUP
from sysprompt.library import selectors, services
from sysprompt.library.models import HostOverride
from sysprompt.prompts.catalog import default_prompt
from sysprompt_core.library import Override
from tests.library.support import save

pytestmark = pytest.mark.django_db


@pytest.fixture
def host(db: None) -> User:
    user = User.objects.create_user("host-1")
    user.groups.add(Group.objects.get_or_create(name=AGENT_HOSTS_GROUP)[0])
    return user


def test_group_name_is_defined_once_below_both_apps() -> None:
    assert vars(selectors)["AGENT_HOSTS_GROUP"] is groups.AGENT_HOSTS_GROUP
    assert accounts.AGENT_HOSTS_GROUP is groups.AGENT_HOSTS_GROUP


def test_host_override_state_is_empty_before_any_set(host: User) -> None:
    state = selectors.host_override_state("host-1")

    assert state == selectors.HostOverrideState(username="host-1")
    assert selectors.host_override(host.pk) is None
    assert selectors.host_override(None) is None


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("Be brief.", Override(content="Be brief.")),
        (
            {"content": "First.", "strategy": "prepend"},
            Override(content="First.", strategy="prepend"),
        ),
        (
            {"preset": "presets/reviewer", "variables": {"area": "tests"}},
            Override(preset="presets/reviewer", variables={"area": "tests"}),
        ),
    ],
    ids=["text", "content", "preset"],
)
def test_host_override_set_stores_as_given_and_parses(
    host: User, author: User, value: object, parsed: Override
) -> None:
    save("presets/reviewer", "Review [var:area].")

    state = services.host_override_set(
        prompt_id=default_prompt().pk, username="host-1", override=value, author=author
    )

    assert (state.override, state.updated_by) == (value, "author")
    assert state.updated_at is not None
    assert selectors.host_override_state("host-1") == state
    assert selectors.host_override(host.pk) == parsed


def test_host_override_set_none_removes_it(host: User) -> None:
    services.host_override_set(
        prompt_id=default_prompt().pk, username="host-1", override="x", author=None
    )

    state = services.host_override_set(
        prompt_id=default_prompt().pk, username="host-1", override=None, author=None
    )

    assert state.override is None and selectors.host_override(host.pk) is None
    assert HostOverride.objects.count() == 1


REFUSED: list[tuple[str, Any, str]] = [
    ("unknown preset", {"preset": "presets/missing"}, "override.preset"),
    ("deleted preset", {"preset": "presets/gone"}, "override.preset"),
    ("replace", {"content": "x", "strategy": "replace"}, "override.strategy"),
    ("both", {"content": "x", "preset": "presets/reviewer"}, "override"),
    ("neither", {"strategy": "append"}, "override"),
    ("a number", 3, "override"),
    ("invalid preset name", {"preset": "Presets/X"}, "override.preset"),
]


@pytest.mark.parametrize(
    ("value", "field"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED]
)
def test_host_override_set_refuses_naming_the_field(host: User, value: object, field: str) -> None:
    save("presets/reviewer", "Review.")
    save("presets/gone", "Gone.")
    services.variant_delete(name="presets/gone", author=None)

    with pytest.raises(InvalidInput) as raised:
        services.host_override_set(
            prompt_id=default_prompt().pk, username="host-1", override=value, author=None
        )

    assert raised.value.field == field
    assert not HostOverride.objects.exists()


@pytest.mark.parametrize("username", ["agent-host", "nobody"])
def test_host_override_refuses_a_user_that_is_no_agent_host(
    agent_host: User, username: str
) -> None:
    with pytest.raises(AgentHostNotFound, match=username):
        services.host_override_set(
            prompt_id=default_prompt().pk, username=username, override="x", author=None
        )
    with pytest.raises(AgentHostNotFound):
        selectors.host_override_state(username)
    assert not HostOverride.objects.exists()
