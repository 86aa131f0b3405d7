""" "Newer default available" (library spec §6): raised by a release that ships a text
other than the one a person's edit started from — never by the edit itself."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.library import services
from sysprompt.library.selectors import VariantState, fragments_list, variant_current
from sysprompt.library.services import library_install
from tests.library.support import record, save

pytestmark = pytest.mark.django_db

OLD = [record("core", "Old core."), record("core", "Old claude.", "anthropic")]
SAME_AGAIN = OLD
NEW = [record("core", "New core."), record("core", "New claude.", "anthropic")]


def current(name: str = "core", provider: str | None = None) -> VariantState:
    state = variant_current(name, provider)
    assert state is not None
    return state


@pytest.mark.parametrize("source", ["user", "import"])
@pytest.mark.parametrize("provider", [None, "anthropic"])
def test_edit_with_nothing_newer_shipped_is_not_flagged(source: str, provider: str | None) -> None:
    library_install(shipped=OLD)

    state = save("core", "Mine.", provider, source=source)

    assert state.edited and not state.newer_default
    assert not current("core", provider).newer_default
    flags = {(v.provider, v.newer_default) for f in fragments_list() for v in f.variants}
    assert flags == {(None, False), ("anthropic", False)}


def test_installing_the_same_release_again_does_not_flag_an_edit(author: User) -> None:
    library_install(shipped=OLD)
    save("core", "Mine.", author=author)

    core, _ = library_install(shipped=SAME_AGAIN)

    assert core.action == "keep" and "nothing newer" in core.detail
    assert "newer default available" not in core.detail
    assert not current().newer_default


@pytest.mark.parametrize("source", ["user", "import"])
def test_a_newer_release_after_the_edit_flags_it_with_the_new_text(source: str) -> None:
    library_install(shipped=OLD)
    save("core", "Mine.", source=source)

    core, _ = library_install(shipped=NEW)

    assert core.action == "keep" and "newer default available" in core.detail
    state = current()
    assert state.newer_default and (state.text, state.shipped_text) == ("Mine.", "New core.")


def test_further_edits_keep_the_flag_until_adopt_or_keep_mine() -> None:
    library_install(shipped=OLD)
    save("core", "Mine.")
    library_install(shipped=NEW)

    state = save("core", "Mine, revised.")

    assert state.newer_default and state.shipped_text == "New core."


def test_adopting_then_editing_is_not_flagged_until_the_next_release() -> None:
    library_install(shipped=OLD)
    save("core", "Mine.")
    library_install(shipped=NEW)
    services.default_adopt(name="core", author=None)

    assert not save("core", "Mine again, from the new text.").newer_default
    library_install(shipped=[record("core", "Newest core.")])
    assert current().newer_default


def test_a_deletion_is_flagged_only_by_a_newer_release() -> None:
    library_install(shipped=OLD)

    deleted = services.variant_delete(name="core", author=None)
    core, _ = library_install(shipped=SAME_AGAIN)

    assert deleted.deleted and not deleted.newer_default
    assert core.action == "keep" and "nothing newer" in core.detail
    library_install(shipped=NEW)
    assert current().newer_default


def test_restoring_an_older_default_under_a_newer_release_is_flagged() -> None:
    library_install(shipped=OLD)
    save("core", "Mine.")
    library_install(shipped=NEW)
    services.default_adopt(name="core", author=None)  # version 3: New core.

    state = services.variant_restore(name="core", number=1, author=None)

    assert state.text == "Old core." and state.newer_default


def test_a_variant_a_person_wrote_before_anything_shipped_is_flagged_by_the_first() -> None:
    save("core", "Mine from the start.")

    core, _ = library_install(shipped=NEW)

    assert core.action == "keep" and "newer default available" in core.detail
    assert current().newer_default
