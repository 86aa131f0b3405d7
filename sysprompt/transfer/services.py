"""Export and import of the prompt library and the root template as a file tree
(spec library.md §7).

Export: ``export_plan()`` lists the current root template (``template_current()``, the
built-in default included — it is what new conversations get, so it is always
exported) and every fragment's live variants (the newest version of each, when it is
not a deleted one) *without their texts*, checks the layout and writes
``sysprompt.json`` (``tree_settings``): an export that cannot be made is refused before
its first byte. Then :meth:`ExportPlan.files` yields ``(path, bytes)`` in path order,
reading the texts a few at a time → ``writers.zip_stream`` (the zip in chunks, as it is
sent: deterministic, the same library gives the same bytes) or ``write_directory``. The
library is never held in memory whole; ``export_files()`` and ``export_zip()`` are the
same in one piece.

Import: ``read_zip`` / ``read_directory`` (``readers``: bounded, refusing links and
zip-slip) → :class:`Archive` → ``library_import(archive=…, dry_run=…, author=…)``:
``parse_tree`` checks names, layout, sizes, UTF-8 and settings, collecting every
refusal; each record is compared with the current state —

* ``created``: no such variant yet, or its newest version is a deleted one (the import
  adds a live version; for the root template there is always a current one);
* ``changed``: the text or any setting (compress, defaults, strategy) differs;
* ``unchanged``: all the same — no version is added;
* ``refused`` / ``ignored``: from the readers and ``parse_tree`` (see ``readers``).

An item's path is the file's path in the archive, as written
(``providers/gemini/models/gemini-2.5-flash/core.md``); beside it, ``target`` is the
variant it becomes, its provider and model normalised (fragment ``core``, ``gemini`` /
``gemini-2-5-flash``), ``None`` for a file refused or ignored.

All-or-nothing: one refusal and nothing is written (``applied`` is ``False``), while
the report still lists what every other file would have done. Otherwise every new
version (``source="import"``; the root template through ``template_save`` with its
``compress``) is written in one transaction. The current state of every variant in the
archive is read in one query per 500 fragments (``variants_newest_many``) and the new
versions are written in bulk (``variants_save_many``): no query per file, so 10,000
small files take seconds. An import never deletes: variants absent
from the tree are left as they are. It takes no ``If-Match``: the import wins over
concurrent edits (it is a deliberate bulk replace of what the tree holds, and each
change stays one version in the history, restorable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

from sysprompt.conf import app_settings
from sysprompt.errors import SyspromptError
from sysprompt.events import records as audit
from sysprompt.library.selectors import (
    StateKey,
    VariantState,
    live_variants_listed,
    variants_newest_many,
    version_texts,
)
from sysprompt.library.services import VariantSave, variants_save_many
from sysprompt.prompts.selectors import CurrentTemplate, template_current
from sysprompt.prompts.services import template_save
from sysprompt.transfer.readers import (
    Archive,
    ArchiveLimits,
    Ignored,
    read_directory,
    read_zip,
)
from sysprompt.transfer.writers import zip_bytes, zip_stream
from sysprompt_core.library import (
    SETTINGS_PATH,
    Refusal,
    TreeRecord,
    parse_tree,
    tree_settings,
)

__all__ = [
    "Archive",
    "ArchiveLimits",
    "ExportImpossible",
    "ExportPlan",
    "Ignored",
    "ImportItem",
    "ImportReport",
    "ImportTarget",
    "export_files",
    "export_plan",
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
class ImportTarget:
    """What a file of the archive becomes: the root template (``fragment`` ``None``) or
    a variant of a fragment, its provider and model normalised (``None``: any)."""

    fragment: str | None
    provider: str | None = None
    model: str | None = None

    @property
    def label(self) -> str:
        """``the root template``, ``core``, ``core · gemini``, ``core · gemini /
        gemini-2-5-flash``."""
        if self.fragment is None:
            return "the root template"
        if self.provider is None:
            return self.fragment
        variant = self.provider if self.model is None else f"{self.provider} / {self.model}"
        return f"{self.fragment} · {variant}"


@dataclass(frozen=True)
class ImportItem:
    """What the import does (or would do) with one file (``path`` as it is written in the
    archive), what it becomes (``target``, ``None`` for a file refused or ignored) and
    why."""

    path: str
    action: Action
    reason: str
    target: ImportTarget | None = None


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


@dataclass(frozen=True)
class ExportPlan:
    """The files an export writes, in path order: each with its bytes (the root
    template, ``sysprompt.json``) or the id and length of the version whose text it
    is."""

    entries: tuple[tuple[str, bytes | tuple[int, int]], ...]

    @property
    def variants(self) -> int:
        return sum(1 for _, source in self.entries if isinstance(source, tuple))

    def files(self) -> Iterator[tuple[str, bytes]]:
        """``(path, bytes)`` of each file, reading the variants' texts a batch at a time."""
        texts = version_texts([source for _, source in self.entries if isinstance(source, tuple)])
        for path, source in self.entries:
            if isinstance(source, bytes):
                yield path, source
                continue
            version_id, text = next(texts)
            assert version_id == source[0]
            yield path, text.encode("utf-8")


def export_plan() -> ExportPlan:
    """What :func:`export_files` writes, listed and checked, no text read yet; raises
    :class:`ExportImpossible` when the layout cannot hold the library."""
    current = template_current()
    root = TreeRecord(None, None, None, current.text, compress=current.compress)
    listed = live_variants_listed()
    try:
        records = [
            TreeRecord(
                variant.name,
                variant.provider,
                variant.model,
                "",
                compress=variant.compress,
                defaults=variant.defaults,
                strategy=variant.strategy,
            )
            for variant in listed
        ]
        settings = tree_settings([root, *records])
    except ValueError as error:
        raise ExportImpossible(
            f"The library cannot be exported as a file tree: {error} (rename the fragment)."
        ) from None
    entries: dict[str, bytes | tuple[int, int]] = {
        root.path: current.text.encode("utf-8"),
        SETTINGS_PATH: settings,
    }
    entries.update(
        (record.path, (variant.version_id, variant.characters))
        for record, variant in zip(records, listed, strict=True)
    )
    return ExportPlan(tuple(sorted(entries.items())))


def export_files() -> dict[str, bytes]:
    """The library and the root template as a file tree ``{path: bytes}``."""
    return dict(export_plan().files())


def export_zip() -> bytes:
    """:func:`export_files` as a zip file, deterministic (one piece of
    :func:`export_stream`)."""
    return zip_bytes(export_plan().files())


def export_stream(plan: ExportPlan) -> Iterator[bytes]:
    """The zip file of ``plan``, in chunks as it is written (for a streamed answer)."""
    return zip_stream(plan.files())


# --- import ----------------------------------------------------------------------------


def library_import(*, archive: Archive, dry_run: bool, author: Author) -> ImportReport:
    """Import ``archive`` (see the module docstring); with ``dry_run`` nothing is
    written and the report tells what would be."""
    parsed = parse_tree(archive.files, max_bytes=app_settings().max_template_bytes)
    refusals = [*archive.refusals, *parsed.refusals]
    with transaction.atomic():
        states = variants_newest_many(r.name for r in parsed.records if r.name is not None)
        current = template_current()
        steps = [_step(record, states, current) for record in parsed.records]
        applied = not dry_run and not refusals
        if applied:
            _apply([step.record for step in steps if step.writes], author)
            written = [{"path": s.item.path, "action": s.item.action} for s in steps if s.writes]
            if written:
                audit.library_imported(actor=author, items=written)
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


def _step(
    record: TreeRecord, states: dict[StateKey, VariantState], current: CurrentTemplate
) -> _Step:
    if record.name is None:
        return _Step(record, _template_item(record, current))
    state = states.get((record.name, record.provider, record.model))
    return _Step(record, _variant_item(record, state))


def _item(record: TreeRecord, action: Action, reason: str) -> ImportItem:
    """The item of a file read into ``record``: its path in the archive, what it
    becomes."""
    target = ImportTarget(record.name, record.provider, record.model)
    return ImportItem(record.found_at or record.path, action, reason, target)


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
        return _item(record, "unchanged", f"the root template: same as {was}.")
    return _item(
        record,
        "changed",
        f"the root template: {differences} from {was}; becomes version {current.version + 1}.",
    )


def _variant_item(record: TreeRecord, state: VariantState | None) -> ImportItem:
    what = f"fragment {record.name}, {_variant(record)}"
    if state is None:
        return _item(record, "created", f"{what}: new, version 1.")
    if state.deleted:
        return _item(
            record,
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
        return _item(record, "unchanged", f"{what}: same as version {state.version}.")
    return _item(
        record,
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


def _apply(records: list[TreeRecord], author: Author) -> None:
    """Write the records that differ: the root template through ``template_save``, the
    variants all at once."""
    for record in records:
        if record.name is None:
            template_save(text=record.text, compress=record.compress, author=author)
    variants_save_many(
        variants=[
            VariantSave(
                name=record.name,
                provider=record.provider,
                model=record.model,
                text=record.text,
                compress=record.compress,
                defaults=dict(record.defaults),
                strategy=record.strategy,
            )
            for record in records
            if record.name is not None
        ],
        author=author,
        source="import",
    )
