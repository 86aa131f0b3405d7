"""A protected label protects what its hosts get: an agent host's instance override,
and its label when it moves off or onto a protected label, need the permission that
moving the label needs (``releases.publish_release``). Refused: ``LabelProtected``,
nothing written, nothing recorded."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.errors import LabelProtected
from sysprompt.events.models import AuditRecord
from sysprompt.library.selectors import host_override_state
from sysprompt.releases import selectors, services

pytestmark = pytest.mark.django_db

HOST = "host-1"
Change = Callable[[User], object]


def _override(value: object) -> Change:
    return lambda who: services.host_override_set(username=HOST, override=value, author=who)


def _label(name: str | None) -> Change:
    return lambda who: services.host_label_set(username=HOST, label=name, author=who)


# (case, the host's label before (None: production by default), the change, refused for
# an author who may not publish)
CASES: list[tuple[str, str | None, Change, bool]] = [
    ("override of a host on production (no label)", None, _override("Be terse."), True),
    ("override removed on production", None, _override(None), True),
    ("override of a host on a protected label", "eu", _override("Be terse."), True),
    ("override of a host on an unprotected label", "staging", _override("Be terse."), False),
    ("production → a label following latest", None, _label("staging"), True),
    ("production → a protected label", None, _label("eu"), True),
    ("a protected label → none (production)", "eu", _label(None), True),
    ("an unprotected label → production", "staging", _label("production"), True),
    ("an unprotected label → none (production)", "staging", _label(None), True),
    ("an unprotected label → another", "staging", _label("canary"), False),
    # a host on a protected label: its label is for publishers, whatever it is set to
    ("production → production named", None, _label("production"), True),
]


@pytest.fixture
def labels(writer: User, publisher: User) -> None:
    """staging and canary follow latest; eu is protected, on release 1."""
    services.release_create(message="one", author=writer)
    services.label_set(name="staging", target="latest", author=writer)
    services.label_set(name="canary", target="latest", author=writer)
    services.label_set(name="eu", target={"release": 1}, protected=True, author=publisher)
    agent_host_ensure(name=HOST)


def _state() -> tuple[object, str | None, int]:
    return (
        host_override_state(HOST).override,
        selectors.host_label_state(HOST).label,
        AuditRecord.objects.count(),
    )


@pytest.mark.parametrize(("case", "start", "change", "refused"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.usefixtures("labels")
def test_host_change_needs_publish_when_a_protected_label_is_involved(
    writer: User, publisher: User, case: str, start: str | None, change: Change, refused: bool
) -> None:
    if start is not None:
        services.host_label_set(username=HOST, label=start, author=publisher)
    services.host_override_set(username=HOST, override="Before.", author=publisher)
    before = _state()

    if refused:
        with pytest.raises(LabelProtected) as caught:
            change(writer)
        assert caught.value.permission == "releases.publish_release"
        assert HOST in str(caught.value)
        assert _state() == before  # nothing written, nothing recorded
    else:
        change(writer)
    change(publisher)  # a publisher may, always
