"""The installer of shipped defaults (library spec §6): never loses a person's edit.

shipped records (``defaults.shipped_records()``, or the caller's) → in one transaction:
each variant's newest version and what was shipped for it before → a plan, one
:class:`InstallStep` per variant → (unless ``dry_run``) the writes → the plan.

Per variant, the first rule that applies:

=============  =========================================================================
``create``     no version yet: version 1, ``source`` default.
``unchanged``  the newest version is live with the shipped text and settings.
``pinned``     pinned with "Keep mine": left alone, not flagged.
``keep``       the newest version is a person's, an import's or a deletion: kept; the
               shipped text is recorded, so when it is not the text the person's
               versions started from (their ``based_on``) the variant is flagged
               "newer default available" and its page can show the diff.
``upgrade``    the newest version is the installer's (the text it shipped before):
               a new version with the shipped text, ``source`` default.
=============  =========================================================================

Every step records what was shipped (:class:`~sysprompt.library.models.ShippedDefault`,
text and settings; the pin stays), writing only what differs, so running the installer
twice in a row writes nothing the second time. A step that finds its variant changed
between plan and write (a concurrent save) makes the whole install start again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from django.db import transaction
from django.utils import timezone

from sysprompt.errors import VariantConflict
from sysprompt.library.defaults import shipped_records
from sysprompt.library.history import NewVersion, version_append
from sysprompt.library.models import Fragment, ShippedDefault
from sysprompt.library.selectors import (
    VariantState,
    newest_versions,
    state_of,
    stored_key,
    text_digest,
)
from sysprompt.library.validation import VariantSettings
from sysprompt_core.library import TreeRecord, VariantKey

Action = Literal["create", "upgrade", "keep", "pinned", "unchanged"]
ACTIONS: tuple[Action, ...] = ("create", "upgrade", "keep", "pinned", "unchanged")

_INSTALL_ATTEMPTS = 10

_Key = tuple[str, str, str]


@dataclass(frozen=True)
class InstallStep:
    """What the installer does (or would do) with one shipped variant, and why."""

    name: str
    provider: str | None
    model: str | None
    action: Action
    detail: str
    newer_default: bool = False
    """A kept edit whose shipped text is not the one it started from: now flagged."""

    @property
    def variant(self) -> str:
        """``default``, ``<provider>`` or ``<provider>/<model>``."""
        if self.provider is None:
            return "default"
        return self.provider if self.model is None else f"{self.provider}/{self.model}"


def library_install(
    *, dry_run: bool = False, shipped: Sequence[TreeRecord] | None = None
) -> list[InstallStep]:
    """Install the shipped defaults (``shipped`` replaces them, for tests) and return the
    plan, in the order of the records; with ``dry_run`` nothing is written."""
    records = [
        record
        for record in (shipped_records() if shipped is None else shipped)
        if record.name is not None  # a root template in the tree is not the library's
    ]
    for _ in range(_INSTALL_ATTEMPTS):
        try:
            return _install(records, dry_run=dry_run)
        except VariantConflict:
            continue  # someone saved a shipped variant meanwhile: plan again
    raise RuntimeError(f"library_install lost {_INSTALL_ATTEMPTS} races in a row")


@transaction.atomic
def _install(records: Sequence[TreeRecord], *, dry_run: bool) -> list[InstallStep]:
    names = {record.name for record in records}
    states = {
        _key_of(state.name, state.provider, state.model): state
        for state in map(state_of, newest_versions().filter(fragment__name__in=names))
    }
    shipped_rows = {
        (row.fragment.name, row.provider, row.model): row
        for row in ShippedDefault.objects.select_related("fragment").filter(
            fragment__name__in=names
        )
    }
    steps = []
    for record in records:
        assert record.name is not None
        key = _key_of(record.name, record.provider, record.model)
        state, row = states.get(key), shipped_rows.get(key)
        step = _plan(record, state, row)
        steps.append(step)
        if not dry_run:
            _apply(record, step, state, row)
    return steps


def _key_of(name: str, provider: str | None, model: str | None) -> _Key:
    return (name, *stored_key(provider, model))


def _settings(record: TreeRecord) -> VariantSettings:
    return VariantSettings(
        compress=record.compress, defaults=dict(record.defaults), strategy=record.strategy
    )


def _same(state: VariantState, record: TreeRecord) -> bool:
    """Whether the state is live with the record's text and settings."""
    return (
        not state.deleted
        and state.text == record.text
        and state.compress == record.compress
        and state.defaults == dict(record.defaults)
        and state.strategy == record.strategy
    )


def _plan(
    record: TreeRecord, state: VariantState | None, row: ShippedDefault | None
) -> InstallStep:
    assert record.name is not None

    def step(action: Action, detail: str, newer: bool = False) -> InstallStep:
        assert record.name is not None
        return InstallStep(record.name, record.provider, record.model, action, detail, newer)

    if state is None:
        return step("create", "new: version 1 with the shipped text.")
    version = f"version {state.version}"
    if _same(state, record):
        return step("unchanged", f"{version} is the shipped text.")
    if row is not None and row.pinned:
        return step("pinned", f"{version} is pinned with Keep mine: left alone.")
    if state.source == "default" and not state.deleted:
        older = "" if row is None or row.text == state.text else " (an older installer text)"
        return step("upgrade", f"{version}{older} → version {state.version + 1}, the new text.")
    if state.text == record.text and not state.deleted:
        who = "imported" if state.source == "import" else "edited by a person"
        return step("keep", f"{version} {who}: kept; only its settings differ from the default.")
    # Flagged only when this text is not the one the person's versions started from.
    flagged = text_digest(record.text) != state.based_on
    newer = "newer default available" if flagged else "started from this default, nothing newer"
    if state.deleted:
        return step("keep", f"deleted at {version}: left deleted; {newer}.", flagged)
    who = "imported" if state.source == "import" else "edited by a person"
    return step("keep", f"{version} {who}: kept; {newer}.", flagged)


def _apply(
    record: TreeRecord, step: InstallStep, state: VariantState | None, row: ShippedDefault | None
) -> None:
    assert record.name is not None
    if step.action in ("create", "upgrade"):
        planned = 0 if state is None else state.version
        new = NewVersion(
            text=record.text, settings=_settings(record), source="default", change="installed"
        )

        def unless_changed(current: VariantState | None) -> NewVersion:
            if (0 if current is None else current.version) != planned:
                raise VariantConflict(current)
            return new

        key = VariantKey(record.provider, record.model)
        version_append(name=record.name, key=key, new=unless_changed, author=None)
    _shipped_record(record, row)


def _shipped_record(record: TreeRecord, row: ShippedDefault | None) -> None:
    """Record what was shipped for the variant, writing only what differs."""
    assert record.name is not None
    fields = {
        "text": record.text,
        "compress": record.compress,
        "defaults": dict(record.defaults),
        "strategy": record.strategy,
    }
    now = timezone.now()
    if row is None:
        fragment = Fragment.objects.get(name=record.name)
        provider, model = stored_key(record.provider, record.model)
        ShippedDefault.objects.create(
            fragment=fragment, provider=provider, model=model, updated_at=now, **fields
        )
        return
    changed = [name for name, value in fields.items() if getattr(row, name) != value]
    if changed:
        for name in changed:
            setattr(row, name, fields[name])
        row.updated_at = now
        row.save(update_fields=[*changed, "updated_at"])
