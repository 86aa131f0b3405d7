"""Reads of releases and labels, and what a conversation is built from.

* :func:`working_copy_snapshot` — the working copy as a release would hold it: the
  current template version and the newest live version of every fragment variant
  (two queries), with its fingerprint.
* :func:`releases_list` / :func:`release_get` / :func:`release_compare` — releases,
  one with its variants, and what differs between two (or one and the working copy),
  each with a bounded unified diff (all the diffs of one comparison, or of the
  Releases page's arms, share one deadline).
* :class:`ReleaseSource` — a :class:`~sysprompt_core.library.FragmentSource` over a
  release's variants (one query per set of names, like the working copy's
  :class:`~sysprompt.library.selectors.DatabaseSource`, which it extends);
  :func:`pointer_build` gives the template and library of a release or ``latest``.
* :func:`labels_list` / :func:`label_get` / :func:`label_history` — labels with their
  targets; ``production`` always exists (``production → latest`` should its row be
  missing).
* :func:`conversation_build` — the :class:`~sysprompt.prompts.builds.Chooser` the
  prompts services call when they render: the call's label, else the owner's agent
  host label, else ``production``; its target at that moment, the split's arm from
  ``sha256(label ":" conversation_id)``. One query for the label (and the host's), one
  for a release's template; none at all on a turn that renders nothing.
* :func:`host_label_state`, :func:`host_labels`, :func:`test_contexts_list`,
  :func:`test_context_get`.
* :func:`save_reach` — what saving the working copy does now: ships (``production``
  follows ``latest``), ships to a share of production (a split with a ``latest`` arm)
  or edits a draft; and the other labels every save reaches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Protocol

from django.contrib.auth import get_user_model
from django.db import connection, models
from django.db.models import Exists, OuterRef, QuerySet

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput, LabelNotFound, ReleaseNotFound, TestContextNotFound
from sysprompt.library.models import Fragment, FragmentVersion
from sysprompt.library.selectors import (
    DatabaseSource,
    agent_host_id,
    library_source,
    variants_of_rows,
)
from sysprompt.prompts.builds import Build
from sysprompt.prompts.catalog import prompt_or_default
from sysprompt.prompts.models import Prompt, TemplateVersion
from sysprompt.prompts.selectors import CurrentTemplate, template_current
from sysprompt.releases.gates import Gate
from sysprompt.releases.models import (
    HostLabel,
    Label,
    LabelMove,
    Release,
    ReleaseFragment,
    TestContext,
)
from sysprompt_core.library import FragmentSource, FragmentVariant, VariantKey
from sysprompt_core.prompt_names import DEFAULT_PROMPT
from sysprompt_core.releases import (
    LATEST,
    PRODUCTION,
    RELEASE_NUMBER_MAX,
    SPLIT_TOTAL,
    BoundedDiff,
    Deadline,
    Pointer,
    Single,
    Split,
    Target,
    choose_arm,
    parse_target,
    unified_diff,
)

PRODUCTION_DEFAULT: Target = Single(LATEST)
"""What ``production`` serves when its row is missing: the working copy."""


# --- the working copy and releases ----------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """The working copy as a release holds it: the template version (``None``: the
    built-in default) and ``(version id, fragment id)`` of every live variant's newest
    version."""

    template_version: int | None
    variants: tuple[tuple[int, int], ...]

    @property
    def fingerprint(self) -> str:
        """The SHA-256 naming exactly these version rows."""
        ids = ",".join(str(version) for version, _ in sorted(self.variants))
        text = f"template:{self.template_version or 0}\nvariants:{ids}"
        return hashlib.sha256(text.encode()).hexdigest()


def live_newest() -> QuerySet[FragmentVersion]:
    """The newest version of every live fragment variant."""
    newer = FragmentVersion.objects.filter(
        fragment=OuterRef("fragment"),
        provider=OuterRef("provider"),
        model=OuterRef("model"),
        number__gt=OuterRef("number"),
    )
    return FragmentVersion.objects.filter(~Exists(newer), deleted=False)


def _newest_version(prompt: Prompt) -> int | None:
    """The number of the prompt's newest template version (``None``: none saved yet,
    the built-in default)."""
    versions = TemplateVersion.objects.filter(prompt=prompt).order_by("-number")
    return versions.values_list("number", flat=True).first()


def working_copy_snapshot(prompt: Prompt | None = None) -> Snapshot:
    """The prompt's working copy now (see :class:`Snapshot`): its newest template
    version and the shared library's live variants; two queries."""
    template = _newest_version(prompt_or_default(prompt))
    rows = live_newest().values_list("id", "fragment_id")
    return Snapshot(template, tuple((int(v), int(f)) for v, f in rows))


def releases_list(*, before: int | None = None, prompt: Prompt | None = None) -> QuerySet[Release]:
    """Every release of the prompt, newest first, with its author; only those numbered
    below ``before`` if given."""
    releases = (
        Release.objects.select_related("author", "prompt")
        .filter(prompt=prompt_or_default(prompt))
        .order_by("-number")
    )
    return releases if before is None else releases.filter(number__lt=before)


def release_row(number: int, *, prompt: Prompt | None = None) -> Release:
    """The prompt's release ``number`` with its author and template version;
    :class:`ReleaseNotFound`."""
    if not 1 <= number <= RELEASE_NUMBER_MAX:
        raise ReleaseNotFound(number)
    found = (
        Release.objects.select_related(
            "author", "prompt", "template_version", "template_version__author"
        )
        .filter(number=number, prompt=prompt_or_default(prompt))
        .first()
    )
    if found is None:
        raise ReleaseNotFound(number)
    return found


@dataclass(frozen=True)
class VariantRef:
    """One variant's version in a release (or the working copy), by key."""

    name: str
    provider: str | None
    model: str | None
    version: int

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "provider": self.provider,
            "model": self.model,
            "version": self.version,
        }


@dataclass(frozen=True)
class ReleaseDetail:
    """A release as the API shows it: ``template_version`` 0 is the built-in default."""

    number: int
    message: str
    author: str | None
    created_at: datetime
    template_version: int
    fragments: tuple[VariantRef, ...]
    prompt: str = "default"


def release_get(number: int, *, prompt: Prompt | None = None) -> ReleaseDetail:
    """The prompt's release ``number`` with every variant it holds, by name, provider
    and model."""
    release = release_row(number, prompt=prompt)
    refs = sorted(_release_refs(release.pk).values(), key=_ref_order)
    return ReleaseDetail(
        prompt=release.prompt.name,
        number=release.number,
        message=release.message,
        author=release.author.get_username() if release.author else None,
        created_at=release.created_at,
        template_version=release.template_version_id or 0,
        fragments=tuple(ref for ref, _ in refs),
    )


_Key = tuple[str, str, str]  # name, provider, model as stored ("" for any)


def _ref_order(item: tuple[VariantRef, int]) -> tuple[str, str, str]:
    ref = item[0]
    return ref.name, ref.provider or "", ref.model or ""


def _release_refs(release_id: int) -> dict[_Key, tuple[VariantRef, int]]:
    """The variants of a release by key: their reference and version row id."""
    rows = (
        ReleaseFragment.objects.filter(release_id=release_id)
        .values_list(
            "fragment__name", "version__provider", "version__model", "version__number", "version_id"
        )
        .order_by()
    )
    return {
        (name, provider, model): (VariantRef(name, provider or None, model or None, number), row)
        for name, provider, model, number, row in rows
    }


def _working_refs() -> dict[_Key, tuple[VariantRef, int]]:
    rows = live_newest().values_list("fragment__name", "provider", "model", "number", "id")
    return {
        (name, provider, model): (VariantRef(name, provider or None, model or None, number), row)
        for name, provider, model, number, row in rows
    }


# --- comparing --------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateChange:
    """The root template on both sides (version 0: the built-in default) and the diff."""

    before_version: int
    after_version: int
    diff: BoundedDiff


@dataclass(frozen=True)
class VariantChange:
    """A variant that differs: its version on each side (``None``: not there, or
    deleted) and the diff of its text; ``settings_changed`` when compression, the
    preset defaults or the strategy differ."""

    name: str
    provider: str | None
    model: str | None
    before_version: int | None
    after_version: int | None
    diff: BoundedDiff
    settings_changed: bool = False


@dataclass(frozen=True)
class Comparison:
    """What differs going from ``before`` to ``after``: the template (``None`` when it
    is the same version) and the variants, by name, provider and model."""

    before: Pointer
    after: Pointer
    template: TemplateChange | None
    fragments: tuple[VariantChange, ...]

    @property
    def changed(self) -> bool:
        return self.template is not None or bool(self.fragments)


COMPARE_DIFF_CHARS = 32_768
"""The longest diff of one template or variant in a comparison, in characters."""


def release_compare(number: int, other: Pointer, *, prompt: Prompt | None = None) -> Comparison:
    """What changes going from the prompt's release ``number`` to ``other`` (one of its
    releases, or ``latest``: its working copy). :class:`ReleaseNotFound` for an unknown
    release."""
    return pointers_compare(number, other, prompt=prompt)


def pointers_compare(
    before: Pointer,
    after: Pointer,
    *,
    deadline: Deadline | None = None,
    prompt: Prompt | None = None,
) -> Comparison:
    """What changes going from ``before`` to ``after`` (see :func:`release_compare`);
    every diff shares ``deadline`` (default: one made now), so a comparison of any
    number of variants diffs for at most its seconds."""
    deadline = Deadline() if deadline is None else deadline
    prompt = prompt_or_default(prompt)
    old_version, old_refs = _side(before, prompt)
    new_version, new_refs = _side(after, prompt)
    template = None
    if old_version != new_version:
        texts = _template_texts({old_version, new_version})
        template = TemplateChange(
            before_version=old_version,
            after_version=new_version,
            diff=_diff(texts[old_version], texts[new_version], deadline),
        )
    changed = [
        key
        for key in sorted(old_refs.keys() | new_refs.keys())
        if old_refs.get(key, (None, 0))[1] != new_refs.get(key, (None, 0))[1]
    ]
    rows = {row for key in changed for side in (old_refs, new_refs) if (row := side.get(key))}
    versions = FragmentVersion.objects.in_bulk([row_id for _, row_id in rows])
    fragments = []
    for key in changed:
        old = old_refs.get(key)
        new = new_refs.get(key)
        old_row = versions.get(old[1]) if old else None
        new_row = versions.get(new[1]) if new else None
        fragments.append(
            VariantChange(
                name=key[0],
                provider=key[1] or None,
                model=key[2] or None,
                before_version=old[0].version if old else None,
                after_version=new[0].version if new else None,
                diff=_diff(
                    old_row.text if old_row else None,
                    new_row.text if new_row else None,
                    deadline,
                ),
                settings_changed=_settings(old_row) != _settings(new_row)
                if old_row and new_row
                else False,
            )
        )
    return Comparison(before, after, template, tuple(fragments))


def _side(pointer: Pointer, prompt: Prompt) -> tuple[int, dict[_Key, tuple[VariantRef, int]]]:
    if pointer == LATEST:
        return _newest_version(prompt) or 0, _working_refs()
    release = release_row(pointer, prompt=prompt)
    return release.template_version_id or 0, _release_refs(release.pk)


def _template_texts(versions: set[int]) -> dict[int, str]:
    texts = dict(TemplateVersion.objects.filter(number__in=versions).values_list("number", "text"))
    if 0 in versions:
        texts[0] = _default_text()
    return texts


def _default_text() -> str:
    """The built-in default template: what version 0 stands for."""
    return app_settings().default_template


def _diff(before: str | None, after: str | None, deadline: Deadline) -> BoundedDiff:
    return unified_diff(before, after, max_chars=COMPARE_DIFF_CHARS, deadline=deadline)


def _settings(row: FragmentVersion) -> tuple[bool, str, str]:
    return row.compress, json.dumps(row.defaults or {}, sort_keys=True), row.strategy


# --- what a conversation is built from -------------------------------------------------


class ReleaseSource(DatabaseSource):
    """The variants of one release as a resolution reads them (see the module
    docstring): for a set of names, one query; cached for the life of the instance."""

    __slots__ = ("_found", "_release_id", "_release_names")

    def __init__(self, release_id: int) -> None:
        super().__init__()
        self._release_id = release_id
        self._found: dict[str, Mapping[VariantKey, FragmentVariant]] = {}
        self._release_names: frozenset[str] | None = None

    def __repr__(self) -> str:
        return f"ReleaseSource(release row {self._release_id}, {len(self._found)} fragments read)"

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        cached = self._found.get(name)
        if cached is None:
            self.prefetch([name])
            cached = self._found[name]
        return cached

    def prefetch(self, names: Iterable[str]) -> None:
        wanted = [name for name in dict.fromkeys(names) if name not in self._found]
        if not wanted:
            return
        found = _release_variants(self._release_id, wanted)
        for name in wanted:
            self._found[name] = found.get(name, _NONE)

    def names(self) -> frozenset[str]:
        if self._release_names is None:
            names = ReleaseFragment.objects.filter(release_id=self._release_id).values_list(
                "fragment__name", flat=True
            )
            self._release_names = frozenset(names)
        return self._release_names


_NONE: Mapping[VariantKey, FragmentVariant] = MappingProxyType({})


def _quoted(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _release_variants(
    release_id: int, names: Sequence[str]
) -> dict[str, Mapping[VariantKey, FragmentVariant]]:
    """The variants of ``names`` in the release, by name: one query, written once (a
    construct from a release comes here, as one from the working copy reads
    ``library.selectors._live_variants``), its rows made into variants the same way."""
    sql = (
        "SELECT f.name, v.provider, v.model, v.number, v.text, v.compress, v.defaults, "
        f"v.strategy FROM {_quoted(ReleaseFragment)} r "
        f"JOIN {_quoted(Fragment)} f ON f.id = r.fragment_id "
        f"JOIN {_quoted(FragmentVersion)} v ON v.id = r.version_id "
        f"WHERE r.release_id = %s AND f.name IN ({', '.join(['%s'] * len(names))})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [release_id, *names])
        return variants_of_rows(cursor.fetchall())


def pointer_build(
    pointer: Pointer, latest: CurrentTemplate | None = None, *, prompt: Prompt | None = None
) -> tuple[CurrentTemplate, DatabaseSource, int | None]:
    """The template and library ``pointer`` builds from in ``prompt`` (``None``:
    ``default``), and the release number to record (``None`` for latest).
    :class:`ReleaseNotFound` for an unknown release. ``latest``: the prompt's current
    template, when the caller read it already."""
    if pointer == LATEST:
        return latest or template_current(prompt), library_source(), None
    release_id, template = _release_template(pointer, prompt)
    return template, ReleaseSource(release_id), pointer


def _prompt_id_sql(prompt: Prompt | None) -> tuple[str, list[int | str]]:
    """The SQL (and its parameters) of the prompt's row id: a parameter, or for
    ``None`` the id of ``default`` looked up in the same statement (no query more)."""
    if prompt is not None:
        return "%s", [prompt.pk]
    return f"(SELECT id FROM {_quoted(Prompt)} WHERE name = %s)", [DEFAULT_PROMPT]


def _release_template(number: int, prompt: Prompt | None) -> tuple[int, CurrentTemplate]:
    """The row id of the prompt's release ``number`` and the template it holds, in one
    query written once: every construct from a release comes here, and compiling the
    ORM's query would cost more than running it (as
    ``prompts.selectors.conversation_prompt_get`` says of its own)."""
    if not 1 <= number <= RELEASE_NUMBER_MAX:
        raise ReleaseNotFound(number)
    users = get_user_model()
    prompt_sql, prompt_params = _prompt_id_sql(prompt)
    sql = (
        f"SELECT r.id, t.number, t.text, t.compress, t.created_at, u.{_username_column()} "
        f"FROM {_quoted(Release)} r "
        f"LEFT JOIN {_quoted(TemplateVersion)} t ON t.number = r.template_version "
        f"LEFT JOIN {_quoted(users)} u ON u.id = t.author_id "
        f"WHERE r.prompt_id = {prompt_sql} AND r.number = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*prompt_params, number])
        row = cursor.fetchone()
    if row is None:
        raise ReleaseNotFound(number)
    return row[0], _template_of_row(row[1:])


def _template_of_row(row: Sequence[Any]) -> CurrentTemplate:
    """A template version read by hand — number, text, compress, created_at, author's
    name — as a :class:`CurrentTemplate`; no version (``None``) is the built-in default."""
    version, text, compress, created_at, author = row
    if version is None:
        return CurrentTemplate(text=_default_text(), version=0, updated_at=None, author=None)
    if isinstance(created_at, datetime) and created_at.tzinfo is None:  # SQLite
        created_at = created_at.replace(tzinfo=UTC)
    return CurrentTemplate(
        text=text, version=version, updated_at=created_at, author=author, compress=bool(compress)
    )


class PromptChooser(Protocol):
    """A :class:`~sysprompt.prompts.builds.Chooser` that also takes the prompt the
    conversation is (or is being) frozen from (``None``: the chooser's own, else
    ``default``)."""

    def __call__(
        self, *, conversation_id: str, owner_id: int | None, prompt: Prompt | None = None
    ) -> Build: ...


def conversation_build(label: str | None = None, *, prompt: Prompt | None = None) -> PromptChooser:
    """The chooser of a call that names ``label`` (``None``: it names none;
    ``"latest"``: the working copy, recorded as label ``latest``) in ``prompt``
    (``None``: ``default``; the chooser's own ``prompt`` keyword, when its caller passes
    one, wins); see the module docstring. An unknown call label is refused when the
    chooser runs, naming the field ``label``."""
    chosen = prompt

    def choose(
        *, conversation_id: str, owner_id: int | None, prompt: Prompt | None = None
    ) -> Build:
        which = chosen if prompt is None else prompt
        name, target, latest = _label_for(label, owner_id, which)
        arm: int | None = None
        if isinstance(target, Split):
            arm = choose_arm(target, name, conversation_id)
            pointer = target.arms[arm].pointer
        else:
            pointer = target.pointer
        template, library, release = pointer_build(pointer, latest, prompt=which)
        return Build(template=template, library=library, label=name, release=release, arm=arm)

    return choose


def label_builds(
    label: str | None, owner_id: int | None, *, prompt: Prompt | None = None
) -> list[tuple[CurrentTemplate, FragmentSource]]:
    """The template and library of every pointer the prompt's label serves (the call's
    ``label``, else the agent host ``owner_id``'s for that prompt, else production):
    one, or one per arm of a split (what a host must be ready to resolve for any
    conversation)."""
    _, target, latest = _label_for(label, owner_id, prompt)
    return [pointer_build(pointer, latest, prompt=prompt)[:2] for pointer in target.pointers]


def _label_for(
    label: str | None, owner_id: int | None, prompt: Prompt | None = None
) -> tuple[str, Target, CurrentTemplate | None]:
    """The label a conversation of ``prompt`` (``None``: ``default``) uses and its
    target now: the call's ``label``, else the owner's agent host label for that
    prompt, else ``production``; and the prompt's current template (what ``latest``
    builds from; ``None`` when no label row was read).

    One query, written once (every build comes here): the prompt's label wanted and
    production, with whether the host's label is the row, and beside them the prompt's
    newest template version — so that a label following ``latest``, a fresh install's
    production, costs a first turn no query more than before labels (nor a named
    prompt one more than ``default``: its id is in the statement).
    A call's ``"latest"`` is the working copy itself: no label is read."""
    if label == LATEST:
        return LATEST, PRODUCTION_DEFAULT, None
    users = get_user_model()
    prompt_sql, prompt_params = _prompt_id_sql(prompt)
    sql = (
        f"SELECT l.name, l.target, h.user_id, t.number, t.text, t.compress, t.created_at, "
        f"u.{_username_column()} FROM {_quoted(Label)} l "
        f"LEFT JOIN {_quoted(HostLabel)} h ON h.label_id = l.id AND h.user_id = %s "
        f"LEFT JOIN (SELECT number, text, compress, created_at, author_id "
        f"FROM {_quoted(TemplateVersion)} WHERE prompt_id = {prompt_sql} "
        "ORDER BY number DESC LIMIT 1) t ON 1 = 1 "
        f"LEFT JOIN {_quoted(users)} u ON u.id = t.author_id "
        f"WHERE l.prompt_id = {prompt_sql} AND (l.name = %s OR h.user_id IS NOT NULL)"
    )
    host = -1 if label is not None or owner_id is None else owner_id  # -1: no user's id
    with connection.cursor() as cursor:
        cursor.execute(sql, [host, *prompt_params, *prompt_params, label or PRODUCTION])
        rows = cursor.fetchall()
    by_host = {row[2] is not None: row for row in rows}
    found = by_host.get(True) or by_host.get(False)
    if found is not None:
        return found[0], parse_target(_json(found[1])), _template_of_row(found[3:])
    if label is None or label == PRODUCTION:
        return PRODUCTION, PRODUCTION_DEFAULT, None  # its row is missing: as installed
    raise InvalidInput("label", f"There is no label {label!r}; GET /api/labels lists them.")


def _username_column() -> str:
    users = get_user_model()
    field = users._meta.get_field(users.USERNAME_FIELD)
    assert isinstance(field, models.Field) and field.column is not None
    return connection.ops.quote_name(field.column)


def _json(value: object) -> object:
    """A JSON column as the cursor gives it: text (as Django sets the backends up)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


# --- labels ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelState:
    """A label as the API shows it."""

    name: str
    target: Target
    protected: bool
    updated_at: datetime | None
    updated_by: str | None = None
    gate: Gate | None = None
    prompt: str = DEFAULT_PROMPT

    @property
    def follows_latest(self) -> bool:
        """Whether every save reaches it (its target is ``latest``, or a split with a
        ``latest`` arm)."""
        return LATEST in self.target.pointers


def _state(label: Label, prompt: Prompt) -> LabelState:
    return LabelState(
        prompt=prompt.name,
        name=label.name,
        target=parse_target(label.target),
        protected=label.protected,
        updated_at=label.updated_at,
        updated_by=label.updated_by.get_username() if label.updated_by else None,
        gate=Gate.from_json(label.gate),
    )


def _production_default(prompt: Prompt) -> LabelState:
    return LabelState(
        prompt=prompt.name,
        name=PRODUCTION,
        target=PRODUCTION_DEFAULT,
        protected=True,
        updated_at=None,
    )


def labels_list(prompt: Prompt | None = None) -> list[LabelState]:
    """Every label of the prompt by name; ``production`` always among them."""
    prompt = prompt_or_default(prompt)
    rows = Label.objects.select_related("updated_by").filter(prompt=prompt).order_by("name")
    states = [_state(label, prompt) for label in rows]
    if all(state.name != PRODUCTION for state in states):
        states = sorted([*states, _production_default(prompt)], key=lambda state: state.name)
    return states


def labels_by_prompt(prompts: Sequence[Prompt]) -> dict[int, list[LabelState]]:
    """The labels of each of ``prompts`` (as :func:`labels_list`), by prompt id: one query."""
    by_id: dict[int, list[LabelState]] = {prompt.pk: [] for prompt in prompts}
    names = {prompt.pk: prompt for prompt in prompts}
    rows = Label.objects.select_related("updated_by").filter(prompt_id__in=list(names))
    for label in rows.order_by("prompt_id", "name"):
        by_id[label.prompt_id].append(_state(label, names[label.prompt_id]))
    for prompt_id, states in by_id.items():
        if all(state.name != PRODUCTION for state in states):
            states.append(_production_default(names[prompt_id]))
            states.sort(key=lambda state: state.name)
    return by_id


def label_get(name: str, *, prompt: Prompt | None = None) -> LabelState:
    """The prompt's label ``name``; :class:`LabelNotFound` when there is none."""
    prompt = prompt_or_default(prompt)
    label = Label.objects.select_related("updated_by").filter(prompt=prompt, name=name).first()
    if label is not None:
        return _state(label, prompt)
    if name == PRODUCTION:
        return _production_default(prompt)
    raise LabelNotFound(name)


def label_history(name: str, *, prompt: Prompt | None = None) -> QuerySet[LabelMove]:
    """The moves of the prompt's label, newest first, with their authors;
    :class:`LabelNotFound`."""
    prompt = prompt_or_default(prompt)
    label_get(name, prompt=prompt)
    return (
        LabelMove.objects.select_related("author")
        .filter(label__prompt=prompt, label__name=name)
        .order_by("-id")
    )


def protected_names() -> frozenset[str]:
    """The label names protected in the deployment (``production`` always): whether a
    name is protected is the same for every prompt."""
    names = Label.objects.filter(protected=True).values_list("name", flat=True).distinct()
    return frozenset({PRODUCTION, *names})


_ROLLBACK_CHUNK = 100


def rollback_target(name: str, *, prompt: Prompt | None = None) -> Target | None:
    """Where a rollback of the label ``name`` would move it now: one step further back
    through its history each time (``None``: nothing to roll back to).

    The history is a stack of steps: every move that is not a rollback pushes one (the
    target it moved to), every rollback pops one and goes to the target the step below
    held, which is the ``from`` of the step it popped's move. Read newest first, a
    rollback hides the nearest earlier step not already hidden; the first step left
    visible is the one the next rollback pops. Reading stops there (usually the first
    rows read)."""
    hidden = 0
    moves = (
        LabelMove.objects.filter(label__prompt=prompt_or_default(prompt), label__name=name)
        .order_by("-id")
        .values_list("from_target", "rollback")
    )
    for from_target, rollback in moves.iterator(chunk_size=_ROLLBACK_CHUNK):
        if rollback:
            hidden += 1
        elif hidden:
            hidden -= 1
        else:
            return None if from_target is None else parse_target(from_target)
    return None


@dataclass(frozen=True)
class ArmChanges:
    """What the working copy changes since one pointer a label serves (one per arm of a
    split; ``weight`` 10,000 without one)."""

    pointer: Pointer
    weight: int
    comparison: Comparison


def working_copy_changes(
    name: str = PRODUCTION, *, prompt: Prompt | None = None
) -> tuple[ArmChanges, ...]:
    """What the prompt's working copy changes since what its label ``name`` serves, per
    pointer it serves (a release; ``latest`` compares as unchanged). The diffs of every
    arm share one deadline."""
    prompt = prompt_or_default(prompt)
    target = label_get(name, prompt=prompt).target
    arms = target.arms if isinstance(target, Split) else ()
    weights = [arm.weight for arm in arms] or [10_000]
    deadline = Deadline()
    return tuple(
        ArmChanges(
            pointer, weight, pointers_compare(pointer, LATEST, deadline=deadline, prompt=prompt)
        )
        for pointer, weight in zip(target.pointers, weights, strict=True)
    )


# --- agent hosts and test contexts ------------------------------------------------------


@dataclass(frozen=True)
class HostLabelState:
    """An agent host's label (``None``: none set, its conversations use production)."""

    username: str
    label: str | None = None
    updated_at: datetime | None = None
    updated_by: str | None = None
    prompt: str = DEFAULT_PROMPT

    @property
    def effective(self) -> str:
        return self.label or PRODUCTION


def host_label_state(username: str, *, prompt: Prompt | None = None) -> HostLabelState:
    """The label of the agent host ``username`` for the prompt;
    :class:`AgentHostNotFound`."""
    user_id = agent_host_id(username)
    prompt = prompt_or_default(prompt)
    row = (
        HostLabel.objects.select_related("label", "updated_by")
        .filter(user_id=user_id, prompt=prompt)
        .first()
    )
    if row is None:
        return HostLabelState(username=username, prompt=prompt.name)
    return HostLabelState(
        prompt=prompt.name,
        username=username,
        label=row.label.name,
        updated_at=row.updated_at,
        updated_by=row.updated_by.get_username() if row.updated_by else None,
    )


def test_contexts_list(prompt: Prompt | None = None) -> QuerySet[TestContext]:
    """Every test context of the prompt, by name."""
    return (
        TestContext.objects.select_related("updated_by", "prompt")
        .filter(prompt=prompt_or_default(prompt))
        .order_by("name")
    )


def test_context_get(name: str, *, prompt: Prompt | None = None) -> TestContext:
    """The prompt's test context ``name``; :class:`TestContextNotFound`."""
    found = test_contexts_list(prompt).filter(name=name).first()
    if found is None:
        raise TestContextNotFound(name)
    return found


def host_labels(
    usernames: Iterable[str], *, prompt: Prompt | None = None
) -> dict[str, HostLabelState]:
    """The labels for the prompt of the agent hosts ``usernames`` that have one, by
    username: one query for a whole list (a host without a label is left out: it uses
    production)."""
    users = get_user_model()
    prompt = prompt_or_default(prompt)
    column = f"user__{users.USERNAME_FIELD}"
    rows = HostLabel.objects.filter(
        **{f"{column}__in": list(usernames)}, prompt=prompt
    ).values_list(column, "label__name", "updated_at", f"updated_by__{users.USERNAME_FIELD}")
    return {
        str(username): HostLabelState(
            username=str(username),
            label=label,
            updated_at=updated_at,
            updated_by=updated_by,
            prompt=prompt.name,
        )
        for username, label, updated_at, updated_by in rows
    }


# --- what saving the working copy does -----------------------------------------------------


@dataclass(frozen=True)
class SaveReach:
    """What a save of the working copy reaches now: ``production`` (whose target says
    whether saving ships or edits a draft) and the other labels that follow ``latest``
    (entirely or by one arm of a split), whose new conversations get every save too."""

    production: LabelState
    others: tuple[LabelState, ...]

    @property
    def ships(self) -> bool:
        """Whether production follows the working copy entirely: saving is shipping."""
        return self.production.target == Single(LATEST)

    @property
    def production_weight(self) -> int:
        """The share of production's new conversations a save reaches, in basis
        points: 10,000 when it ships, a split's ``latest`` arm, else 0 (a draft)."""
        return latest_weight(self.production.target)


def latest_weight(target: Target) -> int:
    """The basis points of a label's conversations that ``latest`` serves."""
    if isinstance(target, Split):
        return sum(arm.weight for arm in target.arms if arm.pointer == LATEST)
    return SPLIT_TOTAL if target.pointer == LATEST else 0


def save_reach(prompt: Prompt | None = None) -> SaveReach:
    """What saving the prompt's working copy does now (see :class:`SaveReach`): one
    query, its labels'."""
    states = labels_list(prompt)
    production = next(state for state in states if state.name == PRODUCTION)
    others = tuple(state for state in states if state.name != PRODUCTION and state.follows_latest)
    return SaveReach(production=production, others=others)
