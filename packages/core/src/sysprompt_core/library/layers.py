"""Layered resolution: overrides rendered and merged onto the rendered root template.

The pipeline (library spec §4)::

    base (the rendered root template)
      ──for each override, in order (instance, thread, call; None skipped)──▶
        render_override ──▶ LayerText(text, strategy, used)
      ──merge(prompt, text, strategy)──▶ Layered(prompt, used)

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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from sysprompt_core import template as engine
from sysprompt_core.library.names import is_fragment_name
from sysprompt_core.library.overrides import Override, Strategy, apply_layers
from sysprompt_core.library.source import FragmentSource, FragmentUse
from sysprompt_core.library.variants import choose_variant
from sysprompt_core.variables.registry import Registry, ResolveContext
from sysprompt_core.variables.resolve import resolve_prompt

__all__ = ["LayerText", "Layered", "layered_prompt", "preset_exists", "render_override"]


@dataclass(frozen=True)
class LayerText:
    """One override rendered: its text (None: nothing to add), how it merges, and the
    fragment variants it used."""

    text: str | None
    strategy: Strategy
    used: tuple[FragmentUse, ...] = ()


@dataclass(frozen=True)
class Layered:
    """The prompt with every override merged on (None: no prompt), and the fragment
    variants the overrides used, in first-use order."""

    prompt: str | None
    used: tuple[FragmentUse, ...] = ()


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
    return LayerText(resolution.prompt, override.strategy_or(variant.strategy), tuple(used))


def layered_prompt(
    base: str | None,
    overrides: Sequence[Override | None],
    context: ResolveContext,
    registry: Registry | None = None,
) -> Layered:
    """``base`` with each override (``None`` skipped) rendered and merged on in order;
    a prompt that ends up empty or only whitespace is ``None``."""
    layers = [
        render_override(override, context, registry)
        for override in overrides
        if override is not None
    ]
    used = dict.fromkeys(use for layer in layers for use in layer.used)
    prompt = apply_layers(base, [(layer.text, layer.strategy) for layer in layers])
    return Layered(prompt, tuple(used))
