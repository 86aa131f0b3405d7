"""Reads of the library: variants as the API and the editor show them, the library as a
resolution reads it, and the agent hosts' instance overrides.

* :func:`variant_current` / :func:`fragments_list` — a variant's newest version (a
  deleted one too) as a :class:`VariantState`, with what the installer shipped for it
  (``shipped_text``, ``pinned``) and the flags derived from them and the version's
  ``based_on`` (``edited``, ``newer_default``); one query each.
* :func:`variant_versions` / :func:`variant_version` — a variant's history.
* :class:`DatabaseSource` — :class:`~sysprompt_core.library.FragmentSource` over the
  tables: for a name, its live variants (newest version not deleted), one query per
  name, cached for the life of the instance; :func:`library_source` gives a fresh one
  (one per resolution, so a resolution sees one consistent library and the next sees
  edits).
* :func:`host_override` / :func:`host_override_state` — an agent host's instance
  override, parsed for rendering or as stored for its page.

Provider and model are stored normalised with ``""`` for "any"; here they are ``None``
for "any", as in :class:`~sysprompt_core.library.VariantKey`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection, models
from django.db.models import BooleanField, Exists, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Length

from sysprompt.errors import AgentHostNotFound
from sysprompt.groups import AGENT_HOSTS_GROUP
from sysprompt.library.apps import LibraryConfig
from sysprompt.library.models import Fragment, FragmentVersion, HostOverride, ShippedDefault
from sysprompt.library.validation import (
    Source,
    override_valid,
    source_valid,
    variant_key_valid,
)
from sysprompt_core import template as engine
from sysprompt_core.library import (
    FragmentVariant,
    Override,
    Strategy,
    VariantKey,
    check_strategy,
)
from sysprompt_core.prompt_names import DEFAULT_PROMPT


@dataclass(frozen=True)
class VariantState:
    """A variant's newest version (also when it deletes the variant) and its flags."""

    name: str
    provider: str | None
    model: str | None
    version: int
    text: str
    compress: bool
    defaults: dict[str, str]
    strategy: Strategy
    source: Source
    deleted: bool
    author: str | None
    created_at: datetime
    pinned: bool = False
    shipped_text: str | None = None
    based_on: str = ""

    @property
    def key(self) -> VariantKey:
        return VariantKey(self.provider, self.model)

    @property
    def edited(self) -> bool:
        """Not the installer's text: a person's (or an import's) version."""
        return self.source != "default"

    @property
    def newer_default(self) -> bool:
        """A person's (or an import's) version, not pinned, and the installer now ships a
        text other than the one this version started from (``based_on``) and other than
        this one: an edit alone never raises the flag, a later release does."""
        return (
            self.edited
            and not self.pinned
            and self.shipped_text is not None
            and self.shipped_text != self.text
            and text_digest(self.shipped_text) != self.based_on
        )

    @property
    def etag(self) -> str:
        """A strong entity tag naming this version of this text."""
        digest = hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f'"{self.version}-{digest}"'


@dataclass(frozen=True)
class FragmentSummary:
    """A fragment and its variants' states: the default variant first, then by provider
    and model."""

    name: str
    variants: tuple[VariantState, ...]


@dataclass(frozen=True)
class HostOverrideState:
    """An agent host's instance override as stored (raw JSON, ``None``: none)."""

    username: str
    override: object = None
    updated_at: datetime | None = None
    updated_by: str | None = None


def text_digest(text: str) -> str:
    """The SHA-256 of a text, as a version's ``based_on`` names a shipped text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def stored_key(provider: str | None, model: str | None) -> tuple[str, str]:
    """How a variant's provider and model are stored: normalised, ``""`` for any
    (``InvalidInput`` naming ``provider`` or ``model`` for a key that cannot be one)."""
    key = variant_key_valid(provider, model)
    return key.provider or "", key.model or ""


def newest_versions() -> QuerySet[FragmentVersion]:
    """Each variant's newest version (no newer one of the same variant exists), deleted
    ones included, with the shipped default's text and pin annotated."""
    return _with_shipped(_newest())


def _newest() -> QuerySet[FragmentVersion]:
    newer = FragmentVersion.objects.filter(
        fragment=OuterRef("fragment"),
        provider=OuterRef("provider"),
        model=OuterRef("model"),
        number__gt=OuterRef("number"),
    )
    return FragmentVersion.objects.filter(~Exists(newer))


def _with_shipped(versions: QuerySet[FragmentVersion]) -> QuerySet[FragmentVersion]:
    shipped = ShippedDefault.objects.filter(
        fragment=OuterRef("fragment"), provider=OuterRef("provider"), model=OuterRef("model")
    )
    return versions.select_related("fragment", "author").annotate(
        shipped_text=Subquery(shipped.values("text")[:1]),
        shipped_pinned=Coalesce(
            Subquery(shipped.values("pinned")[:1]), Value(False), output_field=BooleanField()
        ),
    )


def state_of(version: FragmentVersion) -> VariantState:
    """A stored version (annotated by :func:`newest_versions`, or not) as a state."""
    values: dict[str, Any] = version.__dict__
    return VariantState(
        name=version.fragment.name,
        provider=version.provider or None,
        model=version.model or None,
        version=version.number,
        text=version.text,
        compress=version.compress,
        defaults=dict(version.defaults or {}),
        strategy=check_strategy(version.strategy),
        source=source_valid(version.source),
        deleted=version.deleted,
        author=version.author.get_username() if version.author else None,
        created_at=version.created_at,
        pinned=bool(values.get("shipped_pinned", False)),
        shipped_text=values.get("shipped_text"),
        based_on=version.based_on,
    )


def variant_current(
    name: str, provider: str | None = None, model: str | None = None
) -> VariantState | None:
    """The variant's newest version (also when it is deleted), or ``None`` if it has none."""
    stored_provider, stored_model = stored_key(provider, model)
    newest = (
        _with_shipped(FragmentVersion.objects.all())
        .filter(fragment__name=name, provider=stored_provider, model=stored_model)
        .order_by("-number")
        .first()
    )
    return None if newest is None else state_of(newest)


def variant_versions(
    name: str, provider: str | None = None, model: str | None = None, *, before: int | None = None
) -> QuerySet[FragmentVersion]:
    """The variant's versions, newest first; only those numbered below ``before`` if given."""
    stored_provider, stored_model = stored_key(provider, model)
    versions = (
        FragmentVersion.objects.select_related("author", "fragment")
        .filter(fragment__name=name, provider=stored_provider, model=stored_model)
        .order_by("-number")
    )
    return versions if before is None else versions.filter(number__lt=before)


def variant_version(
    name: str, provider: str | None, model: str | None, number: int
) -> FragmentVersion | None:
    """Version ``number`` of the variant, or ``None``."""
    return variant_versions(name, provider, model).filter(number=number).first()


def fragments_list(*, search: str | None = None) -> list[FragmentSummary]:
    """Every fragment with its variants' states, by name. ``search`` keeps the fragments
    whose name, or a variant's current text, holds it (ignoring case)."""
    newest = newest_versions()
    if search:
        matching = newest.filter(Q(fragment__name__icontains=search) | Q(text__icontains=search))
        newest = newest.filter(fragment__in=Subquery(matching.values("fragment")))
    by_name: dict[str, list[VariantState]] = {}
    for version in newest:
        state = state_of(version)
        by_name.setdefault(state.name, []).append(state)
    return [
        FragmentSummary(name, tuple(sorted(states, key=_variant_order)))
        for name, states in sorted(by_name.items())
    ]


def _variant_order(state: VariantState) -> tuple[str, str]:
    return state.provider or "", state.model or ""


# Reads of many variants at once (export and import) go this many names or versions
# per query, under every database's limit on a query's parameters; an export reads
# texts in batches of about TEXT_BATCH_CHARACTERS (one larger text alone), so one
# export holds about a megabyte of them whatever the library's size.
BULK_CHUNK = 500
TEXT_BATCH_CHARACTERS = 1_048_576

StateKey = tuple[str, str | None, str | None]
"""A variant as (fragment name, provider, model); provider and model normalised,
``None`` for any."""


def variants_newest_many(names: Iterable[str]) -> dict[StateKey, VariantState]:
    """The newest version (a deleted one too) of every variant of the fragments
    ``names``, keyed (name, provider, model), in one query per :data:`BULK_CHUNK` names:
    what an import compares a tree with. Without what the installer shipped (``pinned``
    and ``shipped_text`` keep their defaults), and with no model instances, so that
    10,000 variants take a fraction of a second."""
    wanted = sorted(set(names))
    fields = (
        *("fragment__name", "provider", "model", "number", "text", "compress", "defaults"),
        *("strategy", "source", "deleted", f"author__{get_user_model().USERNAME_FIELD}"),
        "created_at",
    )
    states: dict[StateKey, VariantState] = {}
    for start in range(0, len(wanted), BULK_CHUNK):
        chunk = wanted[start : start + BULK_CHUNK]
        rows = _newest().filter(fragment__name__in=chunk).values_list(*fields).order_by()
        for name, provider, model, number, text, compress, defaults, *rest in rows.iterator():
            strategy, source, deleted, author, created_at = rest
            state = VariantState(
                name=name,
                provider=provider or None,
                model=model or None,
                version=number,
                text=text,
                compress=compress,
                defaults=_json_object(defaults),
                strategy=check_strategy(strategy),
                source=source_valid(source),
                deleted=deleted,
                author=author,
                created_at=created_at,
            )
            states[(name, state.provider, state.model)] = state
    return states


@dataclass(frozen=True)
class ExportedVariant:
    """A live variant as an export lists it: everything but its text, which
    :func:`version_texts` reads afterwards, a few at a time, by ``version_id``."""

    version_id: int
    name: str
    provider: str | None
    model: str | None
    compress: bool
    defaults: dict[str, str]
    strategy: Strategy
    characters: int


def live_variants_listed() -> list[ExportedVariant]:
    """Every live variant (its newest version is not a deleted one), without its text
    but with the text's length: one query, whatever the library's size."""
    rows = (
        _live()
        .annotate(characters=Length("text"))
        .values_list(
            *("pk", "fragment__name", "provider", "model", "compress", "defaults"),
            *("strategy", "characters"),
        )
    )
    return [
        ExportedVariant(
            version_id=pk,
            name=name,
            provider=provider or None,
            model=model or None,
            compress=compress,
            defaults=_json_object(defaults),
            strategy=check_strategy(strategy),
            characters=characters,
        )
        for pk, name, provider, model, compress, defaults, strategy, characters in rows.iterator()
    ]


def version_texts(
    versions: Sequence[tuple[int, int]], *, model: type[models.Model] = FragmentVersion
) -> Iterator[tuple[int, str]]:
    """``(id, text)`` of each of ``versions`` (``(id, characters)`` pairs of ``model``
    rows: fragment versions, or template versions for an export's prompts), in that
    order, read in batches of about :data:`TEXT_BATCH_CHARACTERS`: a generator, so
    only one batch is held in memory. Versions are never changed or deleted, so what
    was listed is what is read."""
    batch: list[int] = []
    size = 0
    for version_id, characters in versions:
        if batch and size + characters > TEXT_BATCH_CHARACTERS:
            yield from _texts(batch, model)
            batch, size = [], 0
        batch.append(version_id)
        size += characters
    if batch:
        yield from _texts(batch, model)


def _texts(version_ids: list[int], model: type[models.Model]) -> Iterator[tuple[int, str]]:
    found = model._default_manager.filter(pk__in=version_ids).values_list("pk", "text")
    texts = dict(found.iterator(chunk_size=len(version_ids)))
    for version_id in version_ids:
        yield version_id, texts.pop(version_id)


class DatabaseSource:
    """The library as one resolution reads it (see the module docstring)."""

    __slots__ = ("_names", "_variants")

    def __init__(self) -> None:
        self._variants: dict[str, Mapping[VariantKey, FragmentVariant]] = {}
        self._names: frozenset[str] | None = None

    def __repr__(self) -> str:
        return f"DatabaseSource({len(self._variants)} fragments read)"

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        cached = self._variants.get(name)
        if cached is None:
            self.prefetch([name])
            cached = self._variants[name]
        return cached

    def prefetch(self, names: Iterable[str]) -> None:
        """Read the variants of every one of ``names`` not read yet, in one query (a
        template's ``fragment:`` references, before it renders)."""
        wanted = [name for name in dict.fromkeys(names) if name not in self._variants]
        if not wanted:
            return
        found = _live_variants(wanted)
        for name in wanted:
            self._variants[name] = found.get(name, _NONE)

    def compile(self, source: str) -> engine.Template:
        """A fragment's text parsed, from the process's cache when seen before."""
        return parsed_text(source)

    def names(self) -> frozenset[str]:
        if self._names is None:
            live = _live().values_list("fragment__name", flat=True).distinct()
            self._names = frozenset(live)
        return self._names


_NONE: Mapping[VariantKey, FragmentVariant] = MappingProxyType({})


def parsed_text(source: str, *, keep: bool = True) -> engine.Template:
    """``source`` parsed, from the process's cache of parsed texts (templates and
    fragments, bounded in bytes: ``PARSE_CACHE_BYTES``) when seen before; kept there
    unless ``keep`` is false (a draft)."""
    config = apps.get_app_config("library")
    assert isinstance(config, LibraryConfig)
    return config.parsed_texts.get(source, keep=keep)


def library_source() -> DatabaseSource:
    """A fresh :class:`DatabaseSource` (one per resolution)."""
    return DatabaseSource()


def _live() -> QuerySet[FragmentVersion]:
    return _newest().filter(deleted=False)


def _live_variants(names: Sequence[str]) -> dict[str, Mapping[VariantKey, FragmentVariant]]:
    """The newest version of each variant of each of ``names`` that is not deleted, by
    name (a name without any is absent).

    Every construct that includes fragments comes here, so the query is written once
    instead of compiled by the ORM on each call (which cost ten times the query); the
    unique (fragment, provider, model, number) index answers both the join and the "no
    newer version" test. A resolution uses one variant of each fragment: the rows are
    kept as read, and a row becomes its :class:`FragmentVariant` only when it is looked
    up (:class:`_LiveVariants`)."""
    versions = _quoted(FragmentVersion)
    fragments = _quoted(Fragment)
    sql = (
        "SELECT f.name, v.provider, v.model, v.number, v.text, v.compress, v.defaults, "
        f"v.strategy FROM {versions} v JOIN {fragments} f ON f.id = v.fragment_id "
        f"WHERE f.name IN ({', '.join(['%s'] * len(names))}) AND NOT v.deleted AND NOT "
        f"EXISTS (SELECT 1 FROM {versions} n WHERE n.fragment_id = v.fragment_id AND "
        "n.provider = v.provider AND n.model = v.model AND n.number > v.number)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, list(names))
        rows: list[_Row] = cursor.fetchall()
    return variants_of_rows(rows)


def variants_of_rows(rows: Sequence[_Row]) -> dict[str, Mapping[VariantKey, FragmentVariant]]:
    """Variant rows as :func:`_live_variants` reads them (``_Row``), by fragment name,
    each made into its :class:`FragmentVariant` only when looked up: the working copy's
    and a release's (``sysprompt.releases.selectors.ReleaseSource``) alike."""
    found: dict[str, dict[tuple[str, str], _Row]] = {}
    keys: dict[tuple[str, str], VariantKey] = {}  # a library has few distinct keys
    for row in rows:
        if (row[1], row[2]) not in keys:
            keys[row[1], row[2]] = VariantKey(row[1] or None, row[2] or None)
        variants = found.get(row[0])
        if variants is None:
            variants = found[row[0]] = {}
        variants[row[1], row[2]] = row
    return {name: _LiveVariants(variants, keys) for name, variants in found.items()}


_Row = tuple[Any, ...]
"""A variant's newest version as :func:`_live_variants` reads it: fragment name,
provider and model (normalised, ``""`` for any), number, text, compress, defaults (JSON
text, as Django sets the backends up) and strategy."""


class _LiveVariants(Mapping[VariantKey, FragmentVariant]):
    """One fragment's live variants as read: a read-only mapping whose values are made
    from their rows when first looked up; inside, the rows are keyed by provider and
    model as stored (``""`` for any), which hash and compare as plain strings."""

    __slots__ = ("_keys", "_made", "_rows")

    def __init__(
        self, rows: dict[tuple[str, str], _Row], keys: Mapping[tuple[str, str], VariantKey]
    ) -> None:
        self._rows = rows
        self._keys = keys
        self._made: dict[tuple[str, str], FragmentVariant] = {}

    def __repr__(self) -> str:
        return f"_LiveVariants({list(self)})"

    def __getitem__(self, key: VariantKey) -> FragmentVariant:
        stored = (key.provider or "", key.model or "")
        made = self._made.get(stored)
        if made is None:
            name, _, _, number, text, compress, defaults, strategy = self._rows[stored]
            settings = (bool(compress), _json_object(defaults), check_strategy(strategy))
            made = FragmentVariant(name, self._keys[stored], number, text, *settings)
            self._made[stored] = made
        return made

    def __contains__(self, key: object) -> bool:
        return isinstance(key, VariantKey) and (key.provider or "", key.model or "") in self._rows

    def __iter__(self) -> Iterator[VariantKey]:
        return (self._keys[stored] for stored in self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def _quoted(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _json_object(value: object) -> dict[str, str]:
    """A JSON column as the cursor gives it: text (as Django sets the backends up)."""
    if value == "{}":  # nearly every version: no defaults
        return {}
    decoded = json.loads(value) if isinstance(value, str | bytes) else value
    return dict(decoded) if isinstance(decoded, dict) else {}


def _of_prompt(prompt_id: int | None) -> dict[str, object]:
    """The lookup of one prompt's rows: by id, or ``default``'s by name (``None``)."""
    return {"prompt__name": DEFAULT_PROMPT} if prompt_id is None else {"prompt_id": prompt_id}


def host_override(user_id: int | None, prompt_id: int | None = None) -> Override | None:
    """The instance override of the user ``user_id`` (an agent host) for the prompt
    ``prompt_id`` (``None``: ``default``), checked, or ``None``.

    A stored override was checked when it was set; one that no longer parses (it cannot,
    short of a hand-edited row) counts as none rather than failing a conversation."""
    if user_id is None:
        return None
    stored = HostOverride.objects.filter(user_id=user_id, **_of_prompt(prompt_id)).values_list(
        "override", flat=True
    )
    value = stored.first()
    if value is None:
        return None
    try:
        return override_valid(value)
    except ValueError:
        return None


def agent_host_id(username: str) -> int:
    """The user id of the agent host ``username``; :class:`AgentHostNotFound` for a user
    outside the "Agent hosts" group (or no user)."""
    user_model = get_user_model()
    found = (
        user_model._default_manager.filter(
            groups__name=AGENT_HOSTS_GROUP, **{user_model.USERNAME_FIELD: username}
        )
        .values_list("pk", flat=True)
        .first()
    )
    if found is None:
        raise AgentHostNotFound(username)
    return int(found)


def host_override_state(username: str, prompt_id: int | None = None) -> HostOverrideState:
    """The agent host's instance override for the prompt ``prompt_id`` (``None``:
    ``default``) as stored, with who set it and when."""
    user_id = agent_host_id(username)
    row = (
        HostOverride.objects.select_related("updated_by")
        .filter(user_id=user_id, **_of_prompt(prompt_id))
        .first()
    )
    if row is None:
        return HostOverrideState(username=username)
    return HostOverrideState(
        username=username,
        override=row.override,
        updated_at=row.updated_at,
        updated_by=row.updated_by.get_username() if row.updated_by else None,
    )
