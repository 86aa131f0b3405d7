"""Export and import of the prompt library and the root template as a file tree
(spec library.md §7).

Export: the current root template (``template_current()``, the built-in default
included — it is what new conversations get, so it is always exported) and every
fragment's live variants (the newest version of each, when it is not a deleted one)
become :class:`~sysprompt_core.library.TreeRecord` s → ``render_tree`` →
``export_files()`` (``{path: bytes}``, ``sysprompt.json`` included) → ``export_zip()``
(deterministic: the same library gives the same bytes).

Import: ``read_zip`` / ``read_directory`` (``readers``: bounded, refusing links and
zip-slip) → :class:`Archive` → ``library_import(archive=…, dry_run=…, author=…)``:
``parse_tree`` checks names, layout, sizes, UTF-8 and settings, collecting every
refusal; each record is compared with the current state —

* ``created``: no such variant yet, or its newest version is a deleted one (the import
  adds a live version; for the root template there is always a current one);
* ``changed``: the text or any setting (compress, defaults, strategy) differs;
* ``unchanged``: all the same — no version is added;
* ``refused`` / ``ignored``: from the readers and ``parse_tree`` (see ``readers``).

An item's path is the file's path in the tree; for a record it is where the variant
lives in the layout, its provider and model folders normalised
(``providers/OpenAI/core.md`` is reported as ``providers/openai/core.md``).

All-or-nothing: one refusal and nothing is written (``applied`` is ``False``), while
the report still lists what every other file would have done. Otherwise every new
version (``source="import"``; the root template through ``template_save`` with its
``compress``) is written in one transaction. An import never deletes: variants absent
from the tree are left as they are. It takes no ``If-Match``: the import wins over
concurrent edits (it is a deliberate bulk replace of what the tree holds, and each
change stays one version in the history, restorable).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

from sysprompt.conf import app_settings
from sysprompt.errors import SyspromptError
from sysprompt.events import records
from sysprompt.library.selectors import VariantState, fragments_list, variant_current
from sysprompt.library.services import variant_save
from sysprompt.prompts.selectors import CurrentTemplate, template_current
from sysprompt.prompts.services import template_save
from sysprompt.transfer.readers import (
    Archive,
    ArchiveLimits,
    Ignored,
    read_directory,
    read_zip,
)
from sysprompt.transfer.writers import zip_bytes
from sysprompt_core.library import Refusal, TreeRecord, parse_tree, render_tree

__all__ = [
    "Archive",
    "ArchiveLimits",
    "ExportImpossible",
    "Ignored",
    "ImportItem",
    "ImportReport",
    "export_files",
    "export_zip",
    "library_import",
    "read_directory",
    "read_zip",
]

Action = Literal["created", "changed", "unchanged", "refused", "ignored"]
ACTIONS: tuple[Action, ...] = ("created", "changed", "unchanged", "refused", "ignored")
Author = AbstractBaseUser | AnonymousUser | None


class ExportImpossible(SyspromptError):
    """The library holds a fragment the tree layout cannot express (a default variant
    named ``system-prompt`` or ``providers/…``); nothing was exported."""


@dataclass(frozen=True)
class ImportItem:
    """What the import does (or would do) with one file, and why."""

    path: str
    action: Action
    reason: str


@dataclass(frozen=True)
class ImportReport:
    """Every file's item, sorted by path, and whether the import was written."""

    items: tuple[ImportItem, ...]
    applied: bool

    @property
    def refused(self) -> bool:
        return any(item.action == "refused" for item in self.items)

    def counts(self) -> dict[Action, int]:
        """How many items took each action (every action, zeros included)."""
        counted = Counter(item.action for item in self.items)
        return {action: counted[action] for action in ACTIONS}


@dataclass(frozen=True)
class _Step:
    record: TreeRecord
    item: ImportItem

    @property
    def writes(self) -> bool:
        return self.item.action in ("created", "changed")


# --- export ----------------------------------------------------------------------------


def export_files() -> dict[str, bytes]:
    """The library and the root template as a file tree ``{path: bytes}``."""
    current = template_current()
    records = [TreeRecord(None, None, None, current.text, compress=current.compress)]
    for summary in fragments_list():
        records.extend(_record(state) for state in summary.variants if not state.deleted)
    try:
        return render_tree(records)
    except ValueError as error:
        raise ExportImpossible(
            f"The library cannot be exported as a file tree: {error} (rename the fragment)."
        ) from None


def export_zip() -> bytes:
    """:func:`export_files` as a zip file, deterministic."""
    return zip_bytes(export_files())


def _record(state: VariantState) -> TreeRecord:
    return TreeRecord(
        state.name,
        state.provider,
        state.model,
        state.text,
        compress=state.compress,
        defaults=state.defaults,
        strategy=state.strategy,
    )


# --- import ----------------------------------------------------------------------------


def library_import(*, archive: Archive, dry_run: bool, author: Author) -> ImportReport:
    """Import ``archive`` (see the module docstring); with ``dry_run`` nothing is
    written and the report tells what would be."""
    parsed = parse_tree(archive.files, max_bytes=app_settings().max_template_bytes)
    refusals = [*archive.refusals, *parsed.refusals]
    with transaction.atomic():
        steps = [_step(record) for record in parsed.records]
        applied = not dry_run and not refusals
        if applied:
            for step in steps:
                if step.writes:
                    _apply(step.record, author)
            written = [{"path": s.item.path, "action": s.item.action} for s in steps if s.writes]
            if written:
                records.library_imported(actor=author, items=written)
    items = [
        *(step.item for step in steps),
        *(_refused(refusal) for refusal in refusals),
        *(_ignored(note) for note in archive.ignored),
    ]
    return ImportReport(tuple(sorted(items, key=lambda item: item.path)), applied)


def _refused(refusal: Refusal) -> ImportItem:
    return ImportItem(refusal.path, "refused", refusal.reason)


def _ignored(note: Ignored) -> ImportItem:
    return ImportItem(note.path, "ignored", note.reason)


def _step(record: TreeRecord) -> _Step:
    if record.name is None:
        return _Step(record, _template_item(record, template_current()))
    state = variant_current(record.name, record.provider, record.model)
    return _Step(record, _variant_item(record, state))


def _template_item(record: TreeRecord, current: CurrentTemplate) -> ImportItem:
    differences = _differences(
        record,
        text=current.text,
        compress=current.compress,
        defaults=dict(record.defaults),
        strategy=record.strategy,
    )
    was = "the built-in default" if current.is_default else f"version {current.version}"
    if not differences:
        return ImportItem(record.path, "unchanged", f"the root template: same as {was}.")
    return ImportItem(
        record.path,
        "changed",
        f"the root template: {differences} from {was}; becomes version {current.version + 1}.",
    )


def _variant_item(record: TreeRecord, state: VariantState | None) -> ImportItem:
    what = f"fragment {record.name}, {_variant(record)}"
    if state is None:
        return ImportItem(record.path, "created", f"{what}: new, version 1.")
    if state.deleted:
        return ImportItem(
            record.path,
            "created",
            f"{what}: deleted at version {state.version}; comes back as version "
            f"{state.version + 1}.",
        )
    differences = _differences(
        record,
        text=state.text,
        compress=state.compress,
        defaults=dict(state.defaults),
        strategy=state.strategy,
    )
    if not differences:
        return ImportItem(record.path, "unchanged", f"{what}: same as version {state.version}.")
    return ImportItem(
        record.path,
        "changed",
        f"{what}: {differences} from version {state.version}; becomes version {state.version + 1}.",
    )


def _variant(record: TreeRecord) -> str:
    if record.provider is None:
        return "default variant"
    if record.model is None:
        return f"variant for {record.provider}"
    return f"variant for {record.provider} / {record.model}"


def _differences(
    record: TreeRecord, *, text: str, compress: bool, defaults: dict[str, str], strategy: str
) -> str:
    """What differs between ``record`` and the current version ("" when nothing does)."""
    differ = [
        label
        for label, different in (
            ("text", record.text != text),
            ("compress", record.compress != compress),
            ("defaults", dict(record.defaults) != defaults),
            ("strategy", record.strategy != strategy),
        )
        if different
    ]
    if len(differ) <= 1:
        return "".join(f"{label} differs" for label in differ)
    return f"{', '.join(differ[:-1])} and {differ[-1]} differ"


def _apply(record: TreeRecord, author: Author) -> None:
    if record.name is None:
        template_save(text=record.text, compress=record.compress, author=author)
        return
    variant_save(
        name=record.name,
        provider=record.provider,
        model=record.model,
        text=record.text,
        compress=record.compress,
        defaults=dict(record.defaults),
        strategy=record.strategy,
        author=author,
        source="import",
    )
