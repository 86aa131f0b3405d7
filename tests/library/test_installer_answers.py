"""Adopt default and Keep mine: the answers to "newer default available"."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import FragmentNotFound, InvalidInput
from sysprompt.library import services
from sysprompt.library.models import FragmentVersion
from sysprompt.library.selectors import variant_current
from sysprompt.library.services import library_install
from tests.library.support import record, save, snapshot

pytestmark = pytest.mark.django_db

OLD = [record("core", "Old core.", strategy="prepend")]
NEW = [record("core", "New core.", defaults={"who": "you"})]
NEWER = [record("core", "Newest core.")]


@pytest.fixture
def edited(author: User) -> None:
    """core installed, edited by a person, then a newer release flagged it."""
    library_install(shipped=OLD)
    save("core", "Mine.", author=author)
    library_install(shipped=NEW)


def test_adopt_takes_the_shipped_text_and_settings(edited: None, author: User) -> None:
    state = services.default_adopt(name="core", author=author)

    assert (state.version, state.text, state.defaults, state.strategy) == (
        3,
        "New core.",
        {"who": "you"},
        "append",
    )
    assert (state.source, state.author) == ("default", "author")
    assert not state.edited and not state.newer_default


def test_adopt_then_later_installs_upgrade_again(edited: None) -> None:
    services.default_adopt(name="core", author=None)

    [step] = library_install(shipped=NEWER)

    assert step.action == "upgrade"
    state = variant_current("core")
    assert state is not None and state.text == "Newest core."


def test_adopt_twice_adds_one_version(edited: None) -> None:
    services.default_adopt(name="core", author=None)
    state = services.default_adopt(name="core", author=None)

    assert state.version == 3 and FragmentVersion.objects.count() == 3


def test_keep_mine_pins_and_stops_flagging(edited: None) -> None:
    state = services.default_keep_mine(name="core", author=None)

    assert state.pinned and not state.newer_default and state.text == "Mine."


def test_keep_mine_later_installs_leave_it_alone(edited: None) -> None:
    services.default_keep_mine(name="core", author=None)
    versions = FragmentVersion.objects.count()

    [step] = library_install(shipped=NEWER)
    again = snapshot()
    [second] = library_install(shipped=NEWER)

    assert (step.action, second.action) == ("pinned", "pinned")
    assert FragmentVersion.objects.count() == versions and snapshot() == again
    state = variant_current("core")
    assert state is not None
    assert state.text == "Mine." and state.pinned and not state.newer_default


def test_keep_mine_pin_lasts_through_further_edits(edited: None) -> None:
    services.default_keep_mine(name="core", author=None)
    save("core", "Mine, revised.")

    [step] = library_install(shipped=NEWER)

    assert step.action == "pinned"


def test_adopt_after_keep_mine_unpins(edited: None) -> None:
    services.default_keep_mine(name="core", author=None)

    state = services.default_adopt(name="core", author=None)

    assert not state.pinned and state.text == "New core."


def test_adopt_and_keep_mine_refuse_a_variant_nothing_was_shipped_for() -> None:
    save("own", "Not shipped.")

    with pytest.raises(InvalidInput, match="ships no default"):
        services.default_adopt(name="own", author=None)
    with pytest.raises(InvalidInput, match="ships no default"):
        services.default_keep_mine(name="own", author=None)
    with pytest.raises(FragmentNotFound):
        services.default_keep_mine(name="missing", author=None)
