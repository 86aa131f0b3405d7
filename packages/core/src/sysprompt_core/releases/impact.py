"""The impact of a change: one prompt per context, built both ways, compared.

:func:`impact_matrix` takes host contexts (each standing for some number of recent
conversations, or for none: a saved test context) and two :class:`Side` s — what a
label serves now (``before``) and the candidate (``after``), each a root template and
a :class:`~sysprompt_core.library.FragmentSource` — and for every context::

    context ──resolve_prompt(before.template, library=before.library)──▶ base
            ──layered_prompt(base, [instance, thread])──────────────────▶ prompt before
    the host-local values that rendering read ──▶ supplied to the other side, so both
    sides see the same files, branch and clock
    context ──resolve_prompt(after.template, …) ──layered_prompt──────────▶ prompt after
            ──unified_diff, sizes, shared prefixes, library_lint(after)──▶ ContextImpact

Every diff of a matrix shares one :class:`~sysprompt_core.diff.Deadline` (the caller's,
or one made for the matrix): however many contexts and however adversarial their
texts, the diffs together take at most its seconds; a context whose diff was not done
has ``diff_too_large`` saying why, with both prompts' sizes.

Host-local values (``prompt:cwd``, ``git:``, ``file:``, ``system:``) depend on nothing
but the place they are read in — the working directory as checked, what the server may
resolve, the instant — so what one context's rendering read there is supplied to the
next context of the same place too: a repository shared by many contexts is read
once per report, not once per context. What a context supplies itself (a test
context's own values) stays its own.

then sums the :class:`ImpactSummary`: how many contexts changed of how many rendered,
and the share of the conversations they stand for. Nothing here reads a database or
stores anything; the server feeds it (its contexts from stored conversations and test
contexts, its sides from releases and the working copy).

Each side's template is parsed once and its library read through one source for the
whole matrix; lint is run once per provider and model. The contexts' ``now`` is the
caller's: giving every context the same instant keeps ``system:time`` from showing as
a change.

**Tokens** are counted with :func:`sysprompt_core.tokens.count` for each context's
provider and model: exact for OpenAI's models, a marked estimate for the others
(``tokens_exact``), calibrated by the provider's ratio when ``impact_matrix`` is given
``token_ratios``. Counting is lazy (a row's counts are made when first asked for) and
kept by the text's SHA-256, so contexts that render the same prompt count it once.

A context whose template cannot be rendered on one side (its literal text alone is
over the prompt limit) has that side's prompt ``None`` and its ``problem`` set.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sysprompt_core import template as engine
from sysprompt_core.diff import DIFF_MAX_CHARS, Deadline, unified_diff
from sysprompt_core.library import FragmentSource, Override, compress, layered_prompt
from sysprompt_core.library.lint import library_lint
from sysprompt_core.tokens import TokenCount, count, ratio_for
from sysprompt_core.variables import (
    Missing,
    Registry,
    ResolveContext,
    default_registry,
    is_host_local,
    resolve_prompt,
)

__all__ = [
    "ContextImpact",
    "Impact",
    "ImpactContext",
    "ImpactSummary",
    "Side",
    "impact_matrix",
]


@dataclass(frozen=True)
class Side:
    """What one side builds from: the root template's source as stored, whether it is
    compressed before parsing, and the fragments it includes."""

    template: str
    library: FragmentSource
    compress: bool = False


@dataclass(frozen=True)
class ImpactContext:
    """One host context to render: ``context`` without a library (each side brings its
    own), the agent host's ``instance`` override and the ``thread`` override, and how
    many recent conversations it stands for (0 for a test context)."""

    key: str
    context: ResolveContext
    conversations: int = 0
    instance: Override | None = None
    thread: Override | None = None


@dataclass(frozen=True)
class ContextImpact:
    """One context rendered both ways (see the module docstring).

    ``diff`` is a bounded unified diff (``""`` when unchanged; ``diff_truncated`` when
    it was cut; ``""`` too with ``diff_too_large`` saying why, with both prompts'
    sizes, when it is too large to show or was not done by the deadline);
    ``shared_prefix_before``/``after`` how many leading characters every conversation
    of the agent host, provider and model shares on each side, and
    ``prefix_changed`` whether that shared text differs (each conversation of the
    context then pays one provider cache write at its next construct);
    ``diagnostics`` lint of the candidate for the context's provider and model;
    ``provider`` and ``model`` the context's, which the token counts are for."""

    key: str
    conversations: int
    prompt_before: str | None
    prompt_after: str | None
    diff: str
    diff_truncated: bool
    shared_prefix_before: int
    shared_prefix_after: int
    diagnostics: tuple[engine.Diagnostic, ...] = ()
    problem: str | None = None
    diff_too_large: str | None = None
    provider: str | None = None
    model: str | None = None
    token_ratio: float | None = None
    """The ratio an estimate for the context's provider is calibrated by (``None``: the
    plain ``o200k_base`` count; see :func:`sysprompt_core.tokens.count`)."""

    @property
    def changed(self) -> bool:
        return self.prompt_before != self.prompt_after

    @property
    def chars_before(self) -> int:
        return len(self.prompt_before or "")

    @property
    def chars_after(self) -> int:
        return len(self.prompt_after or "")

    @functools.cached_property
    def counted_before(self) -> TokenCount:
        """The prompt before, in tokens for the context's provider and model."""
        return count(
            self.prompt_before or "",
            provider=self.provider,
            model=self.model,
            ratio=self.token_ratio,
        )

    @functools.cached_property
    def counted_after(self) -> TokenCount:
        """The prompt after, in tokens for the context's provider and model."""
        return count(
            self.prompt_after or "",
            provider=self.provider,
            model=self.model,
            ratio=self.token_ratio,
        )

    @property
    def tokens_before(self) -> int | None:
        return self.counted_before.tokens

    @property
    def tokens_after(self) -> int | None:
        return self.counted_after.tokens

    @property
    def tokens_change(self) -> int | None:
        """After minus before, in tokens (None when either could not be counted)."""
        if self.tokens_after is None or self.tokens_before is None:
            return None
        return self.tokens_after - self.tokens_before

    @property
    def tokens_error(self) -> str | None:
        """Why a prompt could not be counted (its tokens are then None), or None."""
        return self.counted_before.failure or self.counted_after.failure

    @property
    def tokens_exact(self) -> bool:
        """Whether the counts are the provider's exact ones (else an estimate)."""
        return self.counted_before.exact

    @property
    def prefix_changed(self) -> bool:
        before = (self.prompt_before or "")[: self.shared_prefix_before]
        after = (self.prompt_after or "")[: self.shared_prefix_after]
        return before != after


@dataclass(frozen=True)
class ImpactSummary:
    """How many contexts changed of how many were rendered, and the conversations they
    stand for; ``share_changed`` is the share of those conversations (0 when the
    contexts stand for none, as test contexts do)."""

    contexts: int
    contexts_changed: int
    conversations: int
    conversations_changed: int
    prefixes_changed: int = 0
    conversations_prefix_changed: int = 0

    @property
    def share_changed(self) -> float:
        return self.conversations_changed / self.conversations if self.conversations else 0.0

    @classmethod
    def of(cls, impacts: Iterable[ContextImpact]) -> ImpactSummary:
        rows = list(impacts)
        changed = [row for row in rows if row.changed]
        prefixes = [row for row in rows if row.prefix_changed]
        return cls(
            contexts=len(rows),
            contexts_changed=len(changed),
            conversations=sum(row.conversations for row in rows),
            conversations_changed=sum(row.conversations for row in changed),
            prefixes_changed=len(prefixes),
            conversations_prefix_changed=sum(row.conversations for row in prefixes),
        )


@dataclass(frozen=True)
class Impact:
    """The matrix: one :class:`ContextImpact` per context, in the given order, and the
    summary."""

    contexts: tuple[ContextImpact, ...]
    summary: ImpactSummary = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "summary", ImpactSummary.of(self.contexts))


@dataclass(frozen=True)
class _Built:
    prompt: str | None
    shared_prefix: int
    host_values: Mapping[str, str | None]
    problem: str | None = None


def impact_matrix(
    contexts: Sequence[ImpactContext],
    before: Side,
    after: Side,
    registry: Registry | None = None,
    *,
    max_diff_chars: int = DIFF_MAX_CHARS,
    deadline: Deadline | None = None,
    token_ratios: Mapping[str, float] | None = None,
) -> Impact:
    """Render every context both ways and compare (see the module docstring); every
    diff shares ``deadline`` (default: one made now). ``token_ratios`` (by provider,
    lowercase) calibrate the rows' estimated token counts."""
    registry = default_registry() if registry is None else registry
    deadline = Deadline() if deadline is None else deadline
    parsed_before = _parsed(before)
    parsed_after = _parsed(after)
    lints: dict[tuple[str | None, str | None], tuple[engine.Diagnostic, ...]] = {}
    places: dict[_Place, dict[str, str | None]] = {}
    rows = []
    for item in contexts:
        place = _place(item.context)
        read_here = places.setdefault(place, {})
        supplied = {**read_here, **item.context.supplied}
        old = _build(item, before, parsed_before, registry, supplied)
        read_here.update(
            (key, value)
            for key, value in old.host_values.items()
            if key not in item.context.supplied
        )
        new = _build(item, after, parsed_after, registry, {**old.host_values})
        diff = unified_diff(old.prompt, new.prompt, max_chars=max_diff_chars, deadline=deadline)
        where = (item.context.provider, item.context.model)
        if where not in lints:
            lints[where] = tuple(
                library_lint(
                    after.template,
                    library=after.library,
                    provider=where[0],
                    model=where[1],
                    registry=registry,
                )
            )
        problems = [
            f"{side}: {built.problem}"
            for side, built in (("before", old), ("after", new))
            if built.problem is not None
        ]
        rows.append(
            ContextImpact(
                key=item.key,
                conversations=item.conversations,
                prompt_before=old.prompt,
                prompt_after=new.prompt,
                diff=diff.text,
                diff_truncated=diff.truncated,
                diff_too_large=diff.too_large.summary if diff.too_large else None,
                shared_prefix_before=old.shared_prefix,
                shared_prefix_after=new.shared_prefix,
                diagnostics=lints[where],
                problem="; ".join(problems) or None,
                provider=where[0],
                model=where[1],
                token_ratio=ratio_for(token_ratios, where[0]),
            )
        )
    return Impact(tuple(rows))


_Place = tuple[str | None, str | None, frozenset[str] | None, datetime, object]


def _place(context: ResolveContext) -> _Place:
    """Where a context's host-local values are read: what they depend on."""
    return (context.cwd, context.directory, context.server_resolves, context.now, context.options)


def _parsed(side: Side) -> engine.Template:
    source = compress(side.template) if side.compress else side.template
    return side.library.compile(source)


def _build(
    item: ImpactContext,
    side: Side,
    parsed: engine.Template,
    registry: Registry,
    supplied: Mapping[str, str | None],
) -> _Built:
    """The layered prompt of one context on one side, and the host-local values its
    resolution read, fragments included (to be supplied to the other side)."""
    context = dataclasses.replace(item.context, library=side.library, supplied=supplied)
    try:
        resolution = resolve_prompt(parsed, context, registry)
    except engine.PromptTooLarge as exc:
        return _Built(None, 0, dict(supplied), problem=str(exc))
    layered = layered_prompt(
        resolution.prompt,
        [item.instance, item.thread],
        context,
        registry,
        base_prefix=resolution.shared_prefix,
    )
    read = {
        key: None if isinstance(value, Missing) else value
        for key, value in resolution.values.state.shared.items()
        if is_host_local(key)
    }
    return _Built(layered.prompt, layered.shared_prefix_chars, {**supplied, **read})
