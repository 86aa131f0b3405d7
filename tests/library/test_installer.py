"""library_install, rule by rule (library spec §6), with shipped sets given in the test:
an earlier release's text, then the current one."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.library import services
from sysprompt.library.models import FragmentVersion, ShippedDefault
from sysprompt.library.selectors import variant_current
from sysprompt.library.services import InstallStep, library_install
from tests.library.support import record, save, snapshot

pytestmark = pytest.mark.django_db

OLD = [
    record("core", "Old core."),
    record("env/git", "Old git."),
    record("core", "Old claude.", "anthropic"),
]
NEW = [
    record("core", "New core."),
    record("env/git", "Old git."),
    record("core", "New claude.", "anthropic"),
]


def actions(steps: list[InstallStep]) -> list[tuple[str, str, str]]:
    return [(step.action, step.name, step.variant) for step in steps]


def test_install_creates_missing_variants_as_defaults() -> None:
    steps = library_install(shipped=OLD)

    assert actions(steps) == [
        ("create", "core", "default"),
        ("create", "env/git", "default"),
        ("create", "core", "anthropic"),
    ]
    state = variant_current("core", "anthropic")
    assert state is not None
    assert (state.version, state.text, state.source, state.author) == (
        1,
        "Old claude.",
        "default",
        None,
    )
    assert not state.edited and not state.newer_default and state.shipped_text == "Old claude."
    assert ShippedDefault.objects.count() == 3


def test_install_upgrades_an_untouched_default_silently() -> None:
    library_install(shipped=OLD)

    steps = library_install(shipped=NEW)

    assert actions(steps) == [
        ("upgrade", "core", "default"),
        ("unchanged", "env/git", "default"),
        ("upgrade", "core", "anthropic"),
    ]
    state = variant_current("core")
    assert state is not None
    assert (state.version, state.text, state.source) == (2, "New core.", "default")
    assert not state.newer_default


def test_install_keeps_a_person_s_edit_and_flags_it(author: User) -> None:
    library_install(shipped=OLD)
    save("core", "My core.", author=author)

    steps = library_install(shipped=NEW)

    assert steps[0].action == "keep" and "newer default available" in steps[0].detail
    state = variant_current("core")
    assert state is not None
    assert (state.version, state.text, state.source) == (2, "My core.", "user")
    assert state.edited and state.newer_default and state.shipped_text == "New core."


@pytest.mark.parametrize("source", ["import", "user"])
def test_install_counts_an_import_as_a_person_s_edit(source: str) -> None:
    library_install(shipped=OLD)
    save("core", "Imported core.", source=source)

    [core, *_] = library_install(shipped=NEW)

    assert core.action == "keep"
    assert ("imported" in core.detail) == (source == "import")
    state = variant_current("core")
    assert state is not None and state.text == "Imported core." and state.newer_default


def test_install_leaves_a_variant_a_person_deleted_deleted() -> None:
    library_install(shipped=OLD)
    services.variant_delete(name="core", author=None)

    [core, *_] = library_install(shipped=NEW)

    assert core.action == "keep" and "deleted" in core.detail
    state = variant_current("core")
    assert state is not None and state.deleted and state.version == 2


def test_install_creates_a_variant_whose_text_a_person_already_wrote_as_unchanged() -> None:
    save("core", "New core.")

    [core, *_] = library_install(shipped=NEW)

    assert core.action == "unchanged"
    state = variant_current("core")
    assert state is not None
    assert (state.version, state.source, state.shipped_text) == (1, "user", "New core.")
    assert not state.newer_default


def test_install_upgrades_a_default_whose_settings_changed() -> None:
    library_install(shipped=OLD)

    [core, *_] = library_install(shipped=[record("core", "Old core.", compress=True)])

    assert core.action == "upgrade"
    state = variant_current("core")
    assert state is not None and state.compress and state.version == 2


def test_install_twice_in_a_row_changes_nothing(author: User) -> None:
    library_install(shipped=OLD)
    save("core", "Mine.", author=author)
    services.variant_delete(name="env/git", author=author)
    library_install(shipped=NEW)
    before = snapshot()

    steps = library_install(shipped=NEW)

    assert snapshot() == before
    assert {step.action for step in steps} <= {"unchanged", "keep", "pinned"}


def test_install_dry_run_plans_and_writes_nothing() -> None:
    library_install(shipped=OLD)
    save("core", "Mine.")
    before = snapshot()

    planned = library_install(shipped=NEW, dry_run=True)

    assert snapshot() == before
    assert library_install(shipped=NEW) == planned
    assert FragmentVersion.objects.count() == 5


def test_install_dry_run_on_an_empty_library_writes_nothing() -> None:
    steps = library_install(shipped=NEW, dry_run=True)

    assert [step.action for step in steps] == ["create"] * 3
    assert snapshot() == ([], [])


def test_install_ignores_a_root_template_in_the_shipped_tree() -> None:
    steps = library_install(shipped=[record(None, "root"), *OLD])

    assert len(steps) == 3
