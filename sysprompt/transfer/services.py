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

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

from sysprompt.conf import app_settings
from sysprompt.errors import SyspromptError
from sysprompt.events import prompt_records
from sysprompt.events import records as audit
from sysprompt.library.selectors import (
    StateKey,
    VariantState,
    live_variants_listed,
    variants_newest_many,
    version_texts,
)
from sysprompt.library.services import VariantSave, variants_save_many
from sysprompt.prompts.catalog import prompt_may_edit
from sysprompt.prompts.models import Prompt, TemplateVersion
from sysprompt.prompts.selectors import CurrentTemplate, template_current
from sysprompt.prompts.services import template_save
from sysprompt.transfer.prompts import (
    prompt_import_create,
    prompt_import_update,
    prompt_named,
    prompts_listed,
)
from sysprompt.transfer.readers import (
    PROMPTS_PATH,
    Archive,
    ArchiveLimits,
    Ignored,
    read_directory,
    read_zip,
)
from sysprompt.transfer.writers import zip_bytes, zip_stream
from sysprompt_core.library import (
    ROOT_TEMPLATE_PATH,
    SETTINGS_PATH,
    Refusal,
    TreeRecord,
    parse_tree,
    tree_settings,
)
from sysprompt_core.library.tree import SUFFIX
from sysprompt_core.prompt_names import DEFAULT_PROMPT, InvalidPromptName, prompt_name_check

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
    prompt: str | None = None
    """A named prompt other than ``default`` (its working copy, description and tags);
    then ``fragment`` is ``None``."""

    @property
    def label(self) -> str:
        """``the root template``, ``prompt support/triage``, ``core``, ``core · gemini``,
        ``core · gemini / gemini-2-5-flash``."""
        if self.prompt is not None:
            return f"prompt {self.prompt}"
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
class TemplateText:
    """A named prompt's working copy in an export: the id and length of its template
    version, read when the file is written."""

    version_id: int
    characters: int


Source = bytes | tuple[int, int] | TemplateText


@dataclass(frozen=True)
class ExportPlan:
    """The files an export writes, in path order: each with its bytes (the root
    template, ``sysprompt.json``, ``prompts.json``), the id and length of the fragment
    version whose text it is, or a prompt's :class:`TemplateText`."""

    entries: tuple[tuple[str, Source], ...]

    @property
    def variants(self) -> int:
        return sum(1 for _, source in self.entries if isinstance(source, tuple))

    def files(self) -> Iterator[tuple[str, bytes]]:
        """``(path, bytes)`` of each file, reading the texts of fragment and template
        versions a batch at a time."""
        texts = version_texts([source for _, source in self.entries if isinstance(source, tuple)])
        templates = version_texts(
            [
                (source.version_id, source.characters)
                for _, source in self.entries
                if isinstance(source, TemplateText)
            ],
            model=TemplateVersion,
        )
        for path, source in self.entries:
            if isinstance(source, bytes):
                yield path, source
                continue
            if isinstance(source, TemplateText):
                version_id, text = next(templates)
                assert version_id == source.version_id
            else:
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
    entries: dict[str, Source] = {
        root.path: current.text.encode("utf-8"),
        SETTINGS_PATH: settings,
        **_prompt_entries(records),
    }
    entries.update(
        (record.path, (variant.version_id, variant.characters))
        for record, variant in zip(records, listed, strict=True)
    )
    return ExportPlan(tuple(sorted(entries.items())))


def _prompt_entries(records: list[TreeRecord]) -> dict[str, Source]:
    """Every prompt but ``default``: ``prompts/<name>.md`` (its working copy, read when
    written) and ``prompts.json`` (description, tags, compress, archived); nothing when
    there is none. A name is checked with the rule before it becomes a path; a fragment
    whose path would fall among them makes the export impossible."""
    entries: dict[str, Source] = {}
    described: dict[str, dict[str, object]] = {}
    for listed in prompts_listed():
        if not described:
            clash = next((r.path for r in records if r.path.startswith(PROMPTS_FOLDER)), None)
            if clash is not None:
                raise ExportImpossible(
                    f"The library cannot be exported beside the named prompts: the fragment "
                    f"file {clash} would be read back as a prompt (rename the fragment)."
                )
        prompt = listed.prompt
        try:
            name = prompt_name_check(prompt.name, "prompt")
        except InvalidPromptName as error:
            raise ExportImpossible(f"The prompt cannot be exported: {error.message}") from None
        path = f"{PROMPTS_FOLDER}{name}{SUFFIX}"
        if listed.version_id is None:
            entries[path] = app_settings().default_template.encode("utf-8")
        else:
            entries[path] = TemplateText(listed.version_id, listed.characters)
        described[name] = {
            "description": prompt.description,
            "tags": list(prompt.tags or []),
            "compress": listed.compress,
            "archived": prompt.archived,
        }
    if not described:
        return {}
    document = {"prompts": dict(sorted(described.items()))}
    entries[PROMPTS_PATH] = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode(
        "utf-8"
    )
    return entries


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
    library_files, prompt_files = _prompt_files_apart(archive.files)
    max_bytes = app_settings().max_template_bytes
    parsed = parse_tree(library_files, max_bytes=max_bytes)
    prompt_records, prompt_refusals = parse_prompts(prompt_files, max_bytes=max_bytes)
    refusals = [*archive.refusals, *parsed.refusals, *prompt_refusals]
    with transaction.atomic():
        states = variants_newest_many(r.name for r in parsed.records if r.name is not None)
        current = template_current()
        steps = [_step(record, states, current) for record in parsed.records]
        prompt_steps = [_prompt_step(record, author) for record in prompt_records]
        refusals += [step.refusal for step in prompt_steps if step.refusal is not None]
        applied = not dry_run and not refusals
        if applied:
            _apply([step.record for step in steps if step.writes], author)
            _prompts_apply([step for step in prompt_steps if step.writes], author)
            written = [
                {"path": item.path, "action": item.action}
                for item in [
                    *(step.item for step in steps if step.writes),
                    *(step.item for step in prompt_steps if step.writes),
                ]
            ]
            if written:
                audit.library_imported(actor=author, items=written)
    items = [
        *(step.item for step in steps),
        *(step.item for step in prompt_steps if step.refusal is None),
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


# --- named prompts ---------------------------------------------------------------------

PROMPTS_FOLDER = "prompts/"
"""Beside the library's tree: each prompt but ``default`` as ``prompts/<name>.md`` (its
working copy) and its description, tags, compress and archived in ``prompts.json``."""
PROMPT_SETTINGS = ("description", "tags", "compress", "archived")
TAGS_MAX = 20
TAG_MAX_CHARACTERS = 50
DESCRIPTION_MAX_CHARACTERS = 2_000


def _prompt_files_apart(files: Mapping[str, bytes]) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The library's files, and the named prompts' (``prompts.json`` and the files under
    ``prompts/``) — the latter only when ``prompts.json`` is there: an archive without
    it is read as before named prompts (a fragment may be called ``prompts/x``)."""
    if PROMPTS_PATH not in files:
        return dict(files), {}
    library = {p: d for p, d in files.items() if not _prompt_path(p)}
    prompts = {p: d for p, d in files.items() if _prompt_path(p)}
    return library, prompts


def _prompt_path(path: str) -> bool:
    return path == PROMPTS_PATH or path.startswith(PROMPTS_FOLDER)


@dataclass(frozen=True)
class PromptRecord:
    """A named prompt read from an archive: its name (checked with the rule), working
    copy and settings (``None``: left as they are)."""

    name: str
    path: str
    text: str
    compress: bool
    description: str | None
    tags: tuple[str, ...] | None
    archived: bool | None


def parse_prompts(
    files: Mapping[str, bytes], *, max_bytes: int
) -> tuple[list[PromptRecord], list[Refusal]]:
    """The named prompts of an archive's ``prompts.json`` and ``prompts/<name>.md``
    files, each name checked with the rule before anything else is done with it."""
    refusals: list[Refusal] = []
    settings = _prompt_settings(files.get(PROMPTS_PATH), refusals)
    records: list[PromptRecord] = []
    seen: set[str] = set()
    for path in sorted(files):
        if path == PROMPTS_PATH or (path.endswith("/") and not files[path]):
            continue
        name = _prompt_name_of(path, refusals)
        if name is None:
            continue
        text = _prompt_text(path, files[path], max_bytes, refusals)
        if text is None:
            continue
        seen.add(name)
        given = settings.get(name, {})
        records.append(
            PromptRecord(
                name=name,
                path=path,
                text=text,
                compress=bool(given.get("compress", False)),
                description=given.get("description"),
                tags=None if "tags" not in given else tuple(given["tags"]),
                archived=given.get("archived"),
            )
        )
    for name in sorted(set(settings) - seen):
        refusals.append(
            Refusal(
                PROMPTS_PATH, f"prompts.{name}: no {PROMPTS_FOLDER}{name}{SUFFIX} in the archive."
            )
        )
    return records, refusals


def _prompt_name_of(path: str, refusals: list[Refusal]) -> str | None:
    """The prompt ``prompts/<name>.md`` names, checked (the rule refuses ``..``, ``.``,
    absolute and backslash names); ``None`` after adding a refusal."""
    if "\\" in path or "\x00" in path:
        refusals.append(Refusal(path, "a prompt's file name holds a backslash or a NUL."))
        return None
    if not path.endswith(SUFFIX):
        refusals.append(Refusal(path, f"a prompt's file is {PROMPTS_FOLDER}<name>{SUFFIX}."))
        return None
    name = path[len(PROMPTS_FOLDER) : -len(SUFFIX)]
    try:
        checked = prompt_name_check(name, "prompt")
    except InvalidPromptName as error:
        refusals.append(Refusal(path, error.message))
        return None
    if checked == DEFAULT_PROMPT:
        refusals.append(
            Refusal(
                path, f"the prompt default is the tree's {ROOT_TEMPLATE_PATH}, not a prompt file."
            )
        )
        return None
    return checked


def _prompt_text(path: str, data: bytes, max_bytes: int, refusals: list[Refusal]) -> str | None:
    reason = None
    if len(data) > max_bytes:
        reason = f"{len(data):,} bytes; a file may have at most {max_bytes:,}."
    elif b"\x00" in data:
        reason = "holds a NUL byte: not a text file."
    else:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            reason = f"not UTF-8 text (byte {error.start:,} is not valid)."
    refusals.append(Refusal(path, reason))
    return None


def _prompt_settings(data: bytes | None, refusals: list[Refusal]) -> dict[str, dict[str, Any]]:
    """``prompts.json``: ``{"prompts": {name: {description?, tags?, compress?,
    archived?}}}``, each entry checked; a refused entry is reported and left out."""
    if data is None:
        return {}
    shape = '{"prompts": {"<name>": {"description"?, "tags"?, "compress"?, "archived"?}}}'
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        refusals.append(Refusal(PROMPTS_PATH, f"not valid JSON in UTF-8 ({error})."))
        return {}
    if not isinstance(document, dict) or set(document) != {"prompts"}:
        refusals.append(Refusal(PROMPTS_PATH, f"expected {shape}."))
        return {}
    given = document["prompts"]
    if not isinstance(given, dict):
        refusals.append(Refusal(PROMPTS_PATH, f"'prompts' is an object: expected {shape}."))
        return {}
    checked: dict[str, dict[str, Any]] = {}
    for name, settings in given.items():
        try:
            prompt_name_check(name, "prompt")
        except InvalidPromptName as error:
            refusals.append(Refusal(PROMPTS_PATH, f"prompts: {error.message}"))
            continue
        reason = _prompt_settings_reason(settings)
        if reason is not None:
            refusals.append(Refusal(PROMPTS_PATH, f"prompts.{name}: {reason}"))
            continue
        checked[name] = settings
    return checked


def _prompt_settings_reason(settings: object) -> str | None:
    if not isinstance(settings, dict):
        return "an object with description, tags, compress and archived."
    unknown = sorted(set(settings) - set(PROMPT_SETTINGS))
    if unknown:
        return f"unknown setting {unknown[0]!r}: the settings are {', '.join(PROMPT_SETTINGS)}."
    description = settings.get("description", "")
    if not isinstance(description, str) or len(description) > DESCRIPTION_MAX_CHARACTERS:
        return f"description is text of at most {DESCRIPTION_MAX_CHARACTERS:,} characters."
    tags = settings.get("tags", [])
    if (
        not isinstance(tags, list)
        or len(tags) > TAGS_MAX
        or not all(isinstance(tag, str) and 0 < len(tag) <= TAG_MAX_CHARACTERS for tag in tags)
    ):
        return (
            f"tags are a list of at most {TAGS_MAX} texts of 1 to {TAG_MAX_CHARACTERS} characters."
        )
    for flag in ("compress", "archived"):
        if not isinstance(settings.get(flag, False), bool):
            return f"{flag} is true or false."
    return None


@dataclass(frozen=True)
class _PromptStep:
    record: PromptRecord
    item: ImportItem
    prompt: Prompt | None
    """The prompt there is (``None``: the import creates it)."""
    refusal: Refusal | None = None

    @property
    def writes(self) -> bool:
        return self.refusal is None and self.item.action in ("created", "changed")


def _prompt_step(record: PromptRecord, author: Author) -> _PromptStep:
    """What the import does with one prompt: create it, change it (a new version of its
    working copy, its description, tags, archived), or nothing; refused when the author
    may not change it (a restricted folder or prompt)."""
    target = ImportTarget(None, prompt=record.name)
    prompt = prompt_named(record.name)
    if prompt is None:
        item = ImportItem(record.path, "created", f"prompt {record.name}: new.", target)
        return _PromptStep(record, item, None)
    if not prompt_may_edit(author, prompt):
        reason = f"prompt {record.name} is restricted to groups you are not in."
        item = ImportItem(record.path, "refused", reason)
        return _PromptStep(record, item, prompt, Refusal(record.path, reason))
    current = template_current(prompt=prompt)
    differ = [
        label
        for label, different in (
            ("text", record.text != current.text),
            ("compress", record.compress != current.compress),
            ("description", record.description not in (None, prompt.description)),
            ("tags", record.tags is not None and list(record.tags) != list(prompt.tags or [])),
            ("archived", record.archived not in (None, prompt.archived)),
        )
        if different
    ]
    was = "the built-in default" if current.is_default else f"version {current.version}"
    if not differ:
        item = ImportItem(record.path, "unchanged", f"prompt {record.name}: same as {was}.", target)
    else:
        item = ImportItem(
            record.path,
            "changed",
            f"prompt {record.name}: {', '.join(differ)} differ from {was}.",
            target,
        )
    return _PromptStep(record, item, prompt)


def _prompts_apply(steps: list[_PromptStep], author: Author) -> None:
    """Create the new prompts and save what changed of the others (a template version
    only where the text or compress differs), each recorded in the audit log as the
    Prompts page's own changes are."""
    for step in steps:
        record = step.record
        prompt = step.prompt
        changed: list[str] = []
        if prompt is None:
            prompt = prompt_import_create(
                name=record.name,
                description=record.description or "",
                tags=list(record.tags or ()),
                archived=bool(record.archived),
                author=author,
            )
            current = None
        else:
            changed = prompt_import_update(
                prompt=prompt,
                description=record.description,
                tags=None if record.tags is None else list(record.tags),
                archived=record.archived,
                author=author,
            )
            current = template_current(prompt=prompt)
        saved = None
        if current is None or (record.text, record.compress) != (current.text, current.compress):
            saved = template_save(
                text=record.text, compress=record.compress, author=author, prompt=prompt
            )
        _prompt_recorded(step, prompt, changed, saved, author)


def _prompt_recorded(
    step: _PromptStep,
    prompt: Prompt,
    changed: list[str],
    saved: TemplateVersion | None,
    author: Author,
) -> None:
    """The audit records of one imported prompt: created (with its first version),
    archived or unarchived, its description or tags changed."""
    if step.prompt is None:
        prompt_records.prompt_created(
            actor=author, prompt=prompt.name, version=None if saved is None else saved.number
        )
        return
    if "archived" in changed:
        prompt_records.prompt_archived(actor=author, prompt=prompt.name, archived=prompt.archived)
    fields = [field for field in changed if field != "archived"]
    if fields:
        prompt_records.prompt_changed(actor=author, prompt=prompt.name, fields=fields)
