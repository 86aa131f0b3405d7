"""Which prompts a fragment reaches, and what a change of its text would do to them.

The fragment library is shared by every prompt; a prompt uses a fragment when its
working copy's template, or the template of a release one of its labels serves,
includes it — directly, or through fragments that include it (``fragment:`` tags, read
from the texts' parsed references, each text parsed once per process).

* :func:`fragment_users` — the prompts (and, for each, whether its working copy uses it
  and which served releases do), by name; ``used_by`` of ``GET
  /api/library/fragments/{name}``.
* :func:`fragment_impact` — for every prompt that uses the fragment, for each of its
  labels whose target (or an arm of it) uses it, what the label's recent conversations
  and the prompt's test contexts would get with the fragment's variant holding
  ``text``: the impact report's rows (:func:`sysprompt.releases.impact.label_impact`),
  before as the label serves now, after the same with the text changed.

Bounded: at most ``USED_BY_MAX_TEMPLATES`` distinct template texts and
``USED_BY_MAX_FRAGMENT_TEXTS`` fragment texts are read for one answer (past them it
says ``truncated``), at most ``IMPACT_MAX_PROMPTS`` prompts are rendered by one impact
report, and every diff of a report shares one deadline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType

from django.db.models import Max
from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.errors import FragmentNotFound, InvalidInput
from sysprompt.library.models import Fragment, FragmentVersion
from sysprompt.library.selectors import parsed_text, stored_key
from sysprompt.library.validation import fragment_name_valid, text_size_valid, variant_key_valid
from sysprompt.prompts.models import Prompt, TemplateVersion
from sysprompt.prompts.selectors import template_current, template_of
from sysprompt.releases.impact import HOST_VALUES_NOTE, ContextRow, ImpactScope, label_impact
from sysprompt.releases.models import Label, Release, ReleaseFragment, TestContext
from sysprompt.releases.selectors import (
    LabelState,
    labels_by_prompt,
    live_newest,
)
from sysprompt.releases.validation import window_days_valid
from sysprompt_core import template as engine
from sysprompt_core.library import FragmentSource, FragmentVariant, VariantKey
from sysprompt_core.library.lint import FRAGMENT
from sysprompt_core.releases import LATEST, ImpactSummary, Pointer, Side, Target, parse_target

USED_BY_MAX_TEMPLATES = 20_000
"""The most distinct template texts one ``used_by`` reads (working copies and served
releases of every prompt)."""
USED_BY_MAX_FRAGMENT_TEXTS = 20_000
"""The most fragment texts one ``used_by`` reads to follow includes through fragments."""
IMPACT_MAX_PROMPTS = 500
"""The most prompts one fragment impact report renders."""

_PREFIX = f"{FRAGMENT}:"


@dataclass(frozen=True)
class PromptUse:
    """One prompt that uses the fragment: whether its working copy does, and which of
    its served releases do (by number)."""

    prompt: Prompt
    working_copy: bool
    releases: frozenset[int]

    def uses(self, pointer: Pointer) -> bool:
        return self.working_copy if pointer == LATEST else pointer in self.releases


@dataclass(frozen=True)
class FragmentUsers:
    """The prompts using a fragment, by name; ``truncated`` when a bound stopped the
    reading (the list may then miss some)."""

    uses: tuple[PromptUse, ...]
    truncated: bool = False

    @property
    def names(self) -> list[str]:
        return [use.prompt.name for use in self.uses]


def _fragment_refs(source: str) -> frozenset[str]:
    """The fragments a text includes (its ``fragment:`` references), parsed once per
    process."""
    return frozenset(
        reference.removeprefix(_PREFIX)
        for reference in parsed_text(source).references
        if reference.startswith(_PREFIX)
    )


@dataclass
class _Budget:
    left: int
    spent: bool = False

    def take(self) -> bool:
        if self.left <= 0:
            self.spent = True
            return False
        self.left -= 1
        return True


def _includers(name: str, version_ids: Iterable[int], budget: _Budget) -> frozenset[str]:
    """``name`` and every fragment that includes it, directly or through others, in
    the live library or in the variants of ``version_ids`` (the served releases')."""
    included_by: dict[str, set[str]] = {}
    live = live_newest().values_list("id", "fragment__name", "text")
    extra = set(version_ids)
    rows: list[tuple[str, str]] = []
    for version_id, fragment, text in live.iterator(chunk_size=500):
        extra.discard(version_id)
        rows.append((fragment, text))
    if extra:
        pinned = FragmentVersion.objects.filter(id__in=sorted(extra)).values_list(
            "fragment__name", "text"
        )
        rows.extend(pinned.iterator(chunk_size=500))
    for fragment, text in rows:
        if _PREFIX not in text or not budget.take():
            continue  # no fragment: tag in it (or the budget is spent)
        for child in _fragment_refs(text):
            included_by.setdefault(child, set()).add(fragment)
    found = {name}
    todo = [name]
    while todo:
        for parent in included_by.get(todo.pop(), ()):
            if parent not in found:
                found.add(parent)
                todo.append(parent)
    return frozenset(found)


def fragment_users(name: str) -> FragmentUsers:
    """The prompts whose working copy or served releases include the fragment ``name``
    (see the module docstring), by name."""
    prompts = {prompt.pk: prompt for prompt in Prompt.objects.order_by("name")}
    served = _served_releases(prompts)
    release_rows = {
        (prompt_id, number): (release_id, version)
        for release_id, prompt_id, number, version in Release.objects.filter(
            prompt_id__in={prompt_id for prompt_id, _ in served},
            number__in={number for _, number in served},
        ).values_list("id", "prompt_id", "number", "template_version")
        if (prompt_id, number) in served
    }
    pinned = ReleaseFragment.objects.filter(
        release_id__in=[release_id for release_id, _ in release_rows.values()]
    ).values_list("version_id", flat=True)
    fragment_budget = _Budget(USED_BY_MAX_FRAGMENT_TEXTS)
    names = _includers(name, set(pinned), fragment_budget)
    working = _working_versions()
    versions = {
        version
        for version in (*working.values(), *(number for _, number in release_rows.values()))
        if version is not None
    }
    template_budget = _Budget(USED_BY_MAX_TEMPLATES)
    using = _versions_using(versions, names, template_budget)
    default_uses = bool(_fragment_refs(app_settings().default_template) & names)

    def uses(version: int | None) -> bool:
        return default_uses if version is None else version in using

    found = []
    for prompt_id, prompt in prompts.items():
        releases = frozenset(
            number
            for (owner, number), (_, version) in release_rows.items()
            if owner == prompt_id and uses(version)
        )
        working_copy = uses(working.get(prompt_id))
        if working_copy or releases:
            found.append(PromptUse(prompt, working_copy, releases))
    return FragmentUsers(tuple(found), fragment_budget.spent or template_budget.spent)


def _served_releases(prompts: Mapping[int, Prompt]) -> set[tuple[int, int]]:
    """(prompt id, release number) of every release a label serves (every arm)."""
    served: set[tuple[int, int]] = set()
    for prompt_id, target in Label.objects.values_list("prompt_id", "target"):
        if prompt_id in prompts:
            for pointer in parse_target(target).pointers:
                if pointer != LATEST:
                    served.add((prompt_id, int(pointer)))
    return served


def _working_versions() -> dict[int, int | None]:
    """Each prompt's newest template version number (a prompt without one is left out:
    its working copy is the built-in default)."""
    newest = (
        TemplateVersion.objects.order_by()
        .values("prompt_id")
        .annotate(top=Max("number"))
        .values_list("prompt_id", "top")
    )
    return {int(prompt_id): int(top) for prompt_id, top in newest}


def _versions_using(versions: set[int], names: frozenset[str], budget: _Budget) -> set[int]:
    """The template versions among ``versions`` that include one of ``names``."""
    using: set[int] = set()
    texts = TemplateVersion.objects.filter(number__in=sorted(versions)).values_list(
        "number", "text"
    )
    for number, text in texts.iterator(chunk_size=200):
        if _PREFIX not in text or not budget.take():
            continue
        if _fragment_refs(text) & names:
            using.add(number)
    return using


# --- the impact of a change of the fragment's text ---------------------------------------


class _Overlay:
    """A library with one fragment variant holding another text (the rest as ``base``)."""

    __slots__ = ("_base", "_name", "_variant")

    def __init__(self, base: FragmentSource, variant: FragmentVariant) -> None:
        self._base = base
        self._name = variant.name
        self._variant = variant

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        found = self._base.variants(name)
        if name != self._name:
            return found
        return MappingProxyType({**found, self._variant.key: self._variant})

    def names(self) -> frozenset[str]:
        return self._base.names() | {self._name}

    def compile(self, source: str) -> engine.Template:
        return self._base.compile(source)

    def prefetch(self, names: Iterable[str]) -> None:
        prefetch = getattr(self._base, "prefetch", None)
        if prefetch is not None:
            prefetch(names)


def _changed(base: FragmentSource, name: str, key: VariantKey, text: str) -> FragmentSource:
    """``base`` with the variant ``key`` of ``name`` holding ``text`` (its settings kept;
    a variant ``base`` lacks is added with the default settings)."""
    current = base.variants(name).get(key)
    if current is None:
        variant = FragmentVariant(name=name, key=key, version=0, text=text)
    else:
        variant = FragmentVariant(
            name=name,
            key=key,
            version=current.version + 1,
            text=text,
            compress=current.compress,
            defaults=current.defaults,
            strategy=current.strategy,
        )
    return _Overlay(base, variant)


@dataclass(frozen=True)
class LabelPart:
    """One label's part of a fragment impact report."""

    label: str
    current: Target
    rows: tuple[ContextRow, ...]

    @property
    def follows_latest(self) -> bool:
        return LATEST in self.current.pointers

    @property
    def summary(self) -> ImpactSummary:
        return ImpactSummary.of(row.impact for row in self.rows)


@dataclass(frozen=True)
class PromptPart:
    """One prompt's part: the labels covered (those that serve something including the
    fragment)."""

    prompt: str
    working_copy: bool
    releases: tuple[int, ...]
    labels: tuple[LabelPart, ...]


@dataclass(frozen=True)
class FragmentImpact:
    """What the fragment's variant holding another text would do, prompt by prompt."""

    fragment: str
    key: VariantKey
    window_days: int
    since: datetime
    prompts: tuple[PromptPart, ...]
    truncated: bool
    note: str = field(default=HOST_VALUES_NOTE)

    @property
    def summary(self) -> ImpactSummary:
        return ImpactSummary.of(
            row.impact for part in self.prompts for label in part.labels for row in label.rows
        )


def fragment_impact(
    *,
    name: str,
    text: object,
    provider: str | None = None,
    model: str | None = None,
    window_days: object = None,
    now: datetime | None = None,
) -> FragmentImpact:
    """What the variant ``provider``/``model`` of fragment ``name`` holding ``text``
    would do (see the module docstring). Refused, naming the field: a bad name, text,
    variant or ``window_days``; :class:`FragmentNotFound` for a fragment that does not
    exist. Stores nothing."""
    checked = fragment_name_valid(name, "name")
    key = variant_key_valid(provider, model)
    if not isinstance(text, str):
        raise InvalidInput("text", "the text is a string.")
    text_size_valid(text)
    days = window_days_valid(window_days)
    if not Fragment.objects.filter(name=checked).exists():
        raise FragmentNotFound(checked, *stored_key(key.provider, key.model))
    users = fragment_users(checked)
    now = timezone.now() if now is None else now
    since = now - timedelta(days=days)
    scope = ImpactScope()
    uses = users.uses[:IMPACT_MAX_PROMPTS]
    _read_at_once(scope, [use.prompt for use in uses])
    labels_of = labels_by_prompt([use.prompt for use in uses])
    parts = []
    for use in uses:
        labels = []
        for state in _covered(use, labels_of[use.prompt.pk]):
            rows = label_impact(
                prompt=use.prompt,
                label=state[0],
                current=state[1],
                after=lambda before: _after(before, checked, key, text),
                since=since,
                now=now,
                scope=scope,
            )
            labels.append(LabelPart(label=state[0], current=state[1], rows=rows))
        parts.append(
            PromptPart(
                prompt=use.prompt.name,
                working_copy=use.working_copy,
                releases=tuple(sorted(use.releases)),
                labels=tuple(labels),
            )
        )
    return FragmentImpact(
        fragment=checked,
        key=key,
        window_days=days,
        since=since,
        prompts=tuple(parts),
        truncated=users.truncated or len(users.uses) > IMPACT_MAX_PROMPTS,
    )


def _read_at_once(scope: ImpactScope, prompts: list[Prompt]) -> None:
    """Every prompt's current template and test contexts, for the whole report: two
    queries rather than two per label."""
    ids = [prompt.pk for prompt in prompts]
    newest = (
        TemplateVersion.objects.filter(prompt_id__in=ids)
        .order_by()
        .values("prompt_id")
        .annotate(top=Max("number"))
        .values_list("top", flat=True)
    )
    versions = TemplateVersion.objects.select_related("author").filter(number__in=list(newest))
    scope.templates = {version.prompt_id: template_of(version) for version in versions}
    for prompt in prompts:
        if prompt.pk not in scope.templates:
            scope.templates[prompt.pk] = template_current(prompt)  # none saved: the default
    scope.tests = {}
    for test in (
        TestContext.objects.select_related("prompt").filter(prompt_id__in=ids).order_by("name")
    ):
        scope.tests.setdefault(test.prompt_id, []).append(test)


def _covered(use: PromptUse, states: list[LabelState]) -> Iterator[tuple[str, Target]]:
    """The prompt's labels that serve something including the fragment, with their
    targets (``production`` as installed while its row is missing)."""
    for state in states:
        if any(use.uses(pointer) for pointer in state.target.pointers):
            yield state.name, state.target


def _after(before: Side, name: str, key: VariantKey, text: str) -> Side:
    """``before`` with the fragment's variant holding ``text``."""
    return Side(before.template, _changed(before.library, name, key, text), before.compress)
