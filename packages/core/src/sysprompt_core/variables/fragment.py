"""``fragment:<name>`` variables: a library fragment, rendered where it is included.

The pipeline for one ``[fragment:name]``::

    name ──library.variants──▶ variants ──choose_variant(provider, model)──▶ variant
         ──compress (when the version has it)──▶ source ──compile (once per text)──▶
         template ──render_nested (same context, same resolution)──▶ text, shared prefix
         ──one trailing line ending removed──▶ value (``Prefixed`` when only partly shared)

The library is the context's :class:`~sysprompt_core.library.source.FragmentSource`;
without one no fragment exists. A fragment's text is template source rendered with
the same context as the template including it, in the same resolution
(:func:`~sysprompt_core.variables.resolve.render_nested`): what the root template
already resolved or read is not resolved or read again. Its output, like every value,
is never parsed again. A fragment that renders to nothing is the empty string: it
exists (``[if fragment:x]`` tests that the fragment exists for the provider and model,
not that it says something).

The shared prefix: a fragment whose rendering reaches a per-conversation value (or
a block on one) is a :class:`~sysprompt_core.template.Prefixed` string carrying how
much of it is the same in every conversation, so the render that includes it carries
its own shared prefix on into it; a fragment that reaches none is a plain string, all
shared. Its existence (``[if fragment:x]``) is the same in every conversation.

Includes: the fragments being rendered form the include chain. A fragment already on
the chain does not exist at the inner reference (a cycle, ``core → env/git → core``),
nor does one that would be deeper than ``FRAGMENT_MAX_DEPTH`` (8). Each is
:class:`Missing` with the reason; rendering never fails.

Bounds, per resolution (:class:`Fragments`, kept in the resolution's state): a
fragment is rendered once per name, variant and set of fragments including it (a
fragment included 10,000 times is looked up, parsed and rendered once); at most
``FRAGMENT_MAX_RENDERS`` renders; sources and outputs together at most
``FRAGMENT_MAX_BYTES_FACTOR × max_prompt_bytes``; and each render within
``max_prompt_bytes``. Past any of them a fragment does not exist. So no library, not
even a diamond of diamonds of includes, makes a resolution take more than linear time
in those limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sysprompt_core import template as engine
from sysprompt_core.errors import InvalidFragmentName
from sysprompt_core.library.compression import compress
from sysprompt_core.library.names import fragment_name_check
from sysprompt_core.library.source import FragmentSource, FragmentUse, FragmentVariant
from sysprompt_core.library.variants import VariantKey, variant_candidates
from sysprompt_core.limits import (
    FRAGMENT_MAX_BYTES_FACTOR,
    FRAGMENT_MAX_DEPTH,
    FRAGMENT_MAX_RENDERS,
)
from sysprompt_core.template.nodes import utf8_size
from sysprompt_core.variables._text import strip_line_ending
from sysprompt_core.variables.registry import (
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    Value,
    VariableInfo,
)
from sysprompt_core.variables.resolve import render_nested, resolution_state

VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo(
        "fragment",
        "<name>",
        "The library fragment of that name, its variant for the provider and model, "
        "rendered as part of the template (fragments may include fragments).",
        dynamic=True,
    ),
)

NO_LIBRARY = Missing("there is no fragment library")

# A rendered fragment: its name and the provider and model its variant is chosen for
# (in one resolution, they name one variant), and the fragments including it.
RenderKey = tuple[tuple[str, str | None, str | None], frozenset[str]]


def chain_text(chain: Sequence[str]) -> str:
    """An include chain as people read it: ``core → env/git → core``."""
    return " → ".join(chain)


def cycle_reason(chain: Sequence[str], name: str) -> str:
    """Why ``name`` does not exist where ``chain`` (which holds it) includes it."""
    start = chain.index(name)
    return f"fragment '{name}' includes itself: {chain_text([*chain[start:], name])}"


def depth_reason(chain: Sequence[str], name: str) -> str:
    """Why ``name`` does not exist at the end of ``chain``, which is as deep as allowed."""
    return f"fragments nest deeper than {FRAGMENT_MAX_DEPTH} levels: {chain_text([*chain, name])}"


# What a fragment name gives for a provider and model: the variant chosen and the use
# a resolution records for it (or, in ``Fragments.picks``, why there is none).
Picked = tuple[FragmentVariant, FragmentUse]


class Fragments:
    """What the fragment resolver keeps for one resolution: the include chain being
    rendered, the variants seen and what each name gives for a provider and model
    (``picks``: a name is looked up, checked and its variant chosen once, however
    often it is included), the parsed templates, the renders made (memoised by
    :data:`RenderKey`), and how much of the bounds is spent."""

    __slots__ = (
        "candidates",
        "chain",
        "memo",
        "parsed",
        "picks",
        "renders",
        "spent",
        "variants",
    )

    def __init__(self) -> None:
        self.candidates: dict[tuple[str | None, str | None], tuple[VariantKey, ...]] = {}
        self.chain: list[str] = []
        self.memo: dict[RenderKey, Value] = {}
        self.parsed: dict[str, engine.Template] = {}
        self.picks: dict[tuple[str, str | None, str | None], Picked | Missing] = {}
        self.variants: dict[str, Mapping[VariantKey, FragmentVariant]] = {}
        self.renders = 0
        self.spent = 0

    def __repr__(self) -> str:
        return f"Fragments(renders={self.renders}, spent={self.spent}, chain={self.chain})"

    def pick(self, name: str, context: ResolveContext, library: FragmentSource) -> Picked | Missing:
        """The variant of the valid fragment name ``name`` for the provider and model
        of ``context``, and its use (or why there is none); the library is asked once
        per name in a resolution."""
        variants = self.variants.get(name)
        if variants is None:
            variants = self.variants[name] = library.variants(name)
        key = self.choose(variants, context.provider, context.model)
        if key is None:
            return Missing(_absent(name, variants, context))
        variant = variants[key]
        return variant, FragmentUse.of(variant)

    def choose(
        self,
        variants: Mapping[VariantKey, FragmentVariant],
        provider: str | None,
        model: str | None,
    ) -> VariantKey | None:
        """:func:`~sysprompt_core.library.variants.choose_variant`, with the candidates
        of a provider and model normalised once per resolution, not once per include."""
        candidates = self.candidates.get((provider, model))
        if candidates is None:
            candidates = self.candidates[provider, model] = variant_candidates(provider, model)
        for key in candidates:
            if key in variants:
                return key
        return None

    def template(self, source: str, library: FragmentSource) -> engine.Template:
        found = self.parsed.get(source)
        if found is None:
            found = self.parsed[source] = library.compile(source)
        return found


def fragment_value(name: str, context: ResolveContext) -> Value:
    """The value of ``fragment:<name>`` where ``context``'s resolution is now (the
    include chain being rendered); never raises (see the module docstring)."""
    library = context.library
    if library is None:
        return NO_LIBRARY
    context, state = resolution_state(context)
    book = state.local(Fragments)
    lookup = (name, context.provider, context.model)
    picked = book.picks.get(lookup)
    if picked is None:  # the first include of the name for this provider and model
        try:
            fragment_name_check(name)
        except InvalidFragmentName as error:
            return Missing(str(error))
    chain = book.chain
    if name in chain:
        return Missing(cycle_reason(chain, name))
    if len(chain) >= FRAGMENT_MAX_DEPTH:
        return Missing(depth_reason(chain, name))
    if picked is None:
        picked = book.picks[lookup] = book.pick(name, context, library)
    if isinstance(picked, Missing):
        return picked
    variant, use = picked
    state.fragments.setdefault(use)
    memo_key = (lookup, frozenset(chain))
    value = book.memo.get(memo_key)
    if value is None:
        value = book.memo[memo_key] = _render(variant, context, book)
    return value


def _absent(
    name: str, variants: Mapping[VariantKey, FragmentVariant], context: ResolveContext
) -> str:
    if not variants:
        return f"no fragment named '{name}'"
    given = ", ".join(
        f"{what} '{value}'"
        for what, value in (("provider", context.provider), ("model", context.model))
        if value
    )
    return f"no fragment named '{name}' for {given or 'no provider'} (it has only other variants)"


def _render(variant: FragmentVariant, context: ResolveContext, book: Fragments) -> Value:
    """Render ``variant`` one level deeper in the include chain, within the bounds."""
    limit = context.options.max_prompt_bytes
    budget = FRAGMENT_MAX_BYTES_FACTOR * limit
    if book.renders >= FRAGMENT_MAX_RENDERS:
        return Missing(
            f"more than {FRAGMENT_MAX_RENDERS:,} fragment renders in one resolution "
            "(the includes branch too much)"
        )
    book.renders += 1
    source = compress(variant.text) if variant.compress else variant.text
    cost = utf8_size(source)
    if book.spent + cost > budget:
        return _over_budget(budget)
    book.spent += cost
    assert context.library is not None  # fragment_value returns early without one
    template = book.template(source, context.library)
    book.chain.append(variant.name)
    try:
        rendered = render_nested(template, context)
    except engine.PromptTooLarge as exc:
        return Missing(
            f"its text alone renders to {exc.size:,} bytes, more than the prompt limit "
            f"of {limit:,} bytes"
        )
    finally:
        book.chain.pop()
    text = strip_line_ending(rendered.text)
    cost = utf8_size(text)
    if book.spent + cost > budget:
        return _over_budget(budget)
    book.spent += cost
    return text if rendered.prefix is None else engine.Prefixed(text, rendered.prefix)


def _over_budget(budget: int) -> Missing:
    return Missing(
        f"the fragments of one resolution render at most {budget:,} bytes of source and "
        f"output together ({FRAGMENT_MAX_BYTES_FACTOR} × the prompt limit)"
    )


class FragmentResolver(Resolver):
    type = "fragment"

    def variables(self) -> Sequence[VariableInfo]:
        return VARIABLES

    def names(self) -> frozenset[str] | None:
        return None

    def value(self, name: str, context: ResolveContext) -> Value:
        return fragment_value(name, context)


def register(registry_builder: RegistryBuilder) -> None:
    registry_builder.register(FragmentResolver())
