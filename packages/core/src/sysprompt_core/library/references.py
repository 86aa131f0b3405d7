"""The references a template can reach: what an agent host resolves on its side.

A host that supplies host-local values (agent-hosts §0) must know which the rendering
may need before it renders; it cannot know which branches will be taken, so the answer
is every ``"type:name"`` the template refers to, in every branch, and the same for
every fragment it can include for the provider and model, and for the presets of the
overrides. The walk, breadth first::

    template text ──compress (when asked)──▶ parse ──▶ its references
      ──fragment:x references and the overrides' presets (depth 1)──▶
    each fragment, once: its variant for provider and model (compressed when the
    version has it) ──parse──▶ its references ──its fragment:y (depth + 1)──▶ …

A fragment is walked once, at the least depth it is reached at; one deeper than
``FRAGMENT_MAX_DEPTH`` is not (the renderer never renders it), and a cycle stops where
the fragment has been walked already. So the walk is deterministic and linear in the
library text it reaches. Literal text that looks like a tag is no reference.

The answer holds every key but the ``fragment:`` ones: those are the library's own
business, resolved on the server; the host needs the values inside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sysprompt_core import template as engine
from sysprompt_core.library.compression import compress as compress_text
from sysprompt_core.library.names import is_fragment_name
from sysprompt_core.library.overrides import Override
from sysprompt_core.library.source import FragmentSource
from sysprompt_core.library.variants import choose_variant
from sysprompt_core.limits import FRAGMENT_MAX_DEPTH

__all__ = ["reachable_references"]

_FRAGMENT = "fragment:"


def reachable_references(
    template_text: str,
    *,
    library: FragmentSource | None,
    provider: str | None,
    model: str | None,
    overrides: Sequence[Override | None] = (),
    compress: bool = False,
) -> frozenset[str]:
    """Every ``"type:name"`` but ``fragment:`` ones that ``template_text`` (compressed
    first with ``compress``) can reach for ``provider`` and ``model``, through the
    fragments of ``library`` and the presets of ``overrides`` (see the module
    docstring)."""
    source = compress_text(template_text) if compress else template_text
    keys = set(engine.compile(source).references)
    if library is not None:
        presets = [o.preset for o in overrides if o is not None and o.preset is not None]
        level = [*_fragments(keys), *presets]  # the fragments at depth 1
        seen: set[str] = set()
        for _ in range(FRAGMENT_MAX_DEPTH):
            level = [name for name in dict.fromkeys(level) if name not in seen]
            seen.update(level)
            deeper: list[str] = []
            for name in level:
                found = _fragment_references(name, library, provider, model)
                keys.update(found)
                deeper += _fragments(found)
            level = deeper
    return frozenset(key for key in keys if not key.startswith(_FRAGMENT))


def _fragments(keys: Iterable[str]) -> list[str]:
    """The fragment names among ``keys``."""
    return [key.removeprefix(_FRAGMENT) for key in keys if key.startswith(_FRAGMENT)]


def _fragment_references(
    name: str, library: FragmentSource, provider: str | None, model: str | None
) -> frozenset[str]:
    """The references of fragment ``name``'s variant for ``provider`` and ``model``
    (none when it has none)."""
    if not is_fragment_name(name):
        return frozenset()
    variants = library.variants(name)
    chosen = choose_variant(variants.keys(), provider, model)
    if chosen is None:
        return frozenset()
    variant = variants[chosen]
    source = compress_text(variant.text) if variant.compress else variant.text
    return engine.compile(source).references
