"""Layered resolution: overrides rendered and merged onto the rendered root template.

The pipeline (library spec §4)::

    base (the rendered root template, with its shared prefix)
      ──for each override, in order (instance, thread, call; None skipped)──▶
        render_override ──▶ LayerText(text, strategy, used, shared_prefix)
      ──merge(prompt, text, strategy), _joined(prefixes)──▶
    Layered(prompt, used, shared_prefix)

:func:`render_override` turns one checked :class:`~sysprompt_core.library.overrides.Override`
into text:

* ``content`` — the text as it is (never a template), with the override's strategy,
  else ``append``;
* ``preset`` — the preset fragment's variant for the provider and model, rendered as
  it would be where a template includes it (``[fragment:<name>]``: compression when the
  version has it, its includes, one trailing line ending removed), with ``var:`` values
  = the version's ``defaults``, overlaid by the override's ``variables``, overlaid by
  the request's (``context.variables``; later wins); every other variable resolves as
  usual. The strategy is the override's, else the version's. A preset that does not
  exist for the provider and model gives no text (the server refuses unknown presets
  before it gets here).

``used`` lists the fragment variants a layer used (the preset's, then its includes),
in first-use order. :func:`preset_exists` is the check the server makes first.

The shared prefix (agent-hosts §1) goes through the layers with the text: each part
is a text and how much of it is the same for every conversation of the agent host
(``None``: all of it, including whether it is there at all). The base brings its own
(``base_prefix``, the root resolution's ``shared_prefix``); the instance override —
the first ``shared_overrides`` of them — is shared except for its preset's own
per-conversation values (content: all of it; a preset: its rendering's prefix); any
later override (thread, call) is per conversation: none of it is shared. Merging two
parts (:func:`_joined`) keeps the first part's prefix when the first part is only
partly shared; when it is all shared, the prefix goes on through the separator into
the second part, if that part is there in every conversation (its shared part holds
more than whitespace), else it ends where the first part ends. So a thread override
placed before the base ends the prefix at 0, one placed after it changes nothing, and
an instance override placed before it moves it on by its own length and the separator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from sysprompt_core import template as engine
from sysprompt_core.library.names import is_fragment_name
from sysprompt_core.library.overrides import SEPARATOR, Override, Strategy, merge
from sysprompt_core.library.source import FragmentSource, FragmentUse
from sysprompt_core.library.variants import choose_variant
from sysprompt_core.variables.registry import Registry, ResolveContext
from sysprompt_core.variables.resolve import resolve_prompt, shared_chars

__all__ = ["LayerText", "Layered", "layered_prompt", "preset_exists", "render_override"]


@dataclass(frozen=True)
class LayerText:
    """One override rendered: its text (None: nothing to add), how it merges, the
    fragment variants it used, and its shared prefix as an instance override (``None``:
    all of it; a preset's is its rendering's). The prefix is a measure of the text, not
    part of the layer's identity: it takes no part in equality."""

    text: str | None
    strategy: Strategy
    used: tuple[FragmentUse, ...] = ()
    shared_prefix: int | None = field(default=None, compare=False)
    busy: frozenset[str] = field(default=frozenset(), compare=False)
    """The keys its rendering read that were busy (``Resolution.busy``)."""


@dataclass(frozen=True)
class Layered:
    """The prompt with every override merged on (None: no prompt), the fragment
    variants the overrides used, in first-use order, and its shared prefix
    (``None``: all of it; :attr:`shared_prefix_chars` as a number; like a layer's, no
    part of equality)."""

    prompt: str | None
    used: tuple[FragmentUse, ...] = ()
    shared_prefix: int | None = field(default=0, compare=False)
    busy: frozenset[str] = field(default=frozenset(), compare=False)
    """The keys the overrides' renderings read that were busy (``Resolution.busy``)."""

    @property
    def shared_prefix_chars(self) -> int:
        """How many leading code points of the prompt are the same in every
        conversation of the agent host, provider and model (0 for no prompt)."""
        return shared_chars(self.prompt, self.shared_prefix)


# A text and its shared prefix (None: all of it, and whether it is there at all).
_Part = tuple["str | None", "int | None"]


def preset_exists(
    name: str, source: FragmentSource, provider: str | None, model: str | None
) -> bool:
    """Whether the fragment ``name`` has a variant for ``provider`` and ``model``."""
    if not is_fragment_name(name):
        return False
    return choose_variant(source.variants(name).keys(), provider, model) is not None


def render_override(
    override: Override, context: ResolveContext, registry: Registry | None = None
) -> LayerText:
    """The text one override adds (see the module docstring)."""
    if override.content is not None:
        return LayerText(override.content, override.strategy_or())
    name = override.preset
    library = context.library
    assert name is not None  # an Override has content or a preset
    if library is None or not is_fragment_name(name):
        return LayerText(None, override.strategy_or())
    variants = library.variants(name)
    key = choose_variant(variants.keys(), context.provider, context.model)
    if key is None:
        return LayerText(None, override.strategy_or())
    variant = variants[key]
    variables = {**variant.defaults, **override.variables, **context.variables}
    preset_context = dataclasses.replace(context, variables=variables)
    resolution = resolve_prompt(engine.compile(f"[fragment:{name}]"), preset_context, registry)
    used = dict.fromkeys((FragmentUse.of(variant), *resolution.fragments_used))
    return LayerText(
        resolution.prompt,
        override.strategy_or(variant.strategy),
        tuple(used),
        resolution.shared_prefix,
        resolution.busy,
    )


def layered_prompt(
    base: str | None,
    overrides: Sequence[Override | None],
    context: ResolveContext,
    registry: Registry | None = None,
    *,
    base_prefix: int | None = 0,
    shared_overrides: int = 1,
) -> Layered:
    """``base`` with each override (``None`` skipped) rendered and merged on in order;
    a prompt that ends up empty or only whitespace is ``None``.

    With the shared prefix (see the module docstring): ``base_prefix`` is the base's
    (``Resolution.shared_prefix``; ``None``: all of it; by default 0, none, as nothing
    is known); ``shared_overrides`` how many of the first ``overrides`` (``None``
    included) are the agent host's own, the same for all its conversations (by
    default 1, the instance override: the levels go instance, thread, call)."""
    rendered = [
        (index < shared_overrides, render_override(override, context, registry))
        for index, override in enumerate(overrides)
        if override is not None
    ]
    used = dict.fromkeys(use for _, layer in rendered for use in layer.used)
    part = _base_part(base, base_prefix)
    for shared, layer in rendered:
        text = merge(part[0], layer.text, layer.strategy)
        if not shared and not _kept(layer.text):
            part = (text, part[1])  # a per-conversation layer that adds nothing here
            continue
        addition: _Part = (layer.text, layer.shared_prefix if shared else 0)
        first, second = (part, addition) if layer.strategy == "append" else (addition, part)
        part = (text, _joined(first, second))
    busy = frozenset(key for _, layer in rendered for key in layer.busy)
    return Layered(part[0], tuple(used), part[1], busy)


def _base_part(base: str | None, prefix: int | None) -> _Part:
    """The base as ``apply_layers`` starts from it, with its shared prefix."""
    if not _kept(base):
        return (None, None if prefix is None else 0)
    assert base is not None
    return (base, None if prefix is None else max(0, min(prefix, len(base))))


def _kept(text: str | None) -> bool:
    """Whether ``merge`` keeps a side (not None, not empty or only whitespace)."""
    return text is not None and bool(text.strip())


def _always_there(part: _Part) -> bool | None:
    """Whether ``merge`` keeps the part in every conversation (True), in none (False),
    or in some (None)."""
    text, prefix = part
    if prefix is None:
        return _kept(text)
    return True if text is not None and _kept(text[:prefix]) else None


def _joined(first: _Part, second: _Part) -> int | None:
    """The shared prefix of ``merge`` of ``first`` and ``second``, in that order."""
    first_text, first_prefix = first
    second_text, second_prefix = second
    if not _kept(first_text):
        if _always_there(first) is not False:
            return 0  # elsewhere ``first`` may come before what is here
        if _kept(second_text) or second_prefix is None:
            return second_prefix
        return 0
    assert first_text is not None
    if first_prefix is not None:
        return first_prefix
    second_there = _always_there(second)
    if second_there is None:
        return len(first_text)  # whether the separator and ``second`` follow depends
    if second_there is False or second_prefix is None:
        return None
    return len(first_text) + len(SEPARATOR) + second_prefix
