"""The prompt library's rules, as pure functions: no Django, no I/O.

* ``names``       — fragment names (``core``, ``env/git-repository``) and the
  normalised keys of providers and models (``Claude Sonnet 4.5`` → ``claude-sonnet-4-5``);
* ``variants``    — :class:`VariantKey` and :func:`choose_variant`: (P, M), then (P, —),
  then the default;
* ``compression`` — :func:`compress`, the opt-in compression of a version's source text;
* ``overrides``   — :func:`parse_override` (instance, thread and call overrides, checked),
  :func:`merge` and :func:`apply_layers` (append or prepend, never replace);
* ``tree``        — the export/import file tree (``system-prompt.md``, ``<name>.md``,
  ``providers/<p>/[models/<m>/]<name>.md``, ``sysprompt.json``): :func:`parse_tree`,
  which collects every refusal, and its inverse :func:`render_tree`;
* ``source``      — :class:`FragmentSource`, the interface through which a resolution
  reads the library (the server backs it with its tables; :class:`MemorySource` holds
  variants in memory), :class:`FragmentVariant` and :class:`FragmentUse`;
* ``layers``      — :func:`render_override` (content as written, or a preset rendered
  with its defaults) and :func:`layered_prompt` (every override merged onto the base,
  with the shared prefix carried through the layers);
* ``references``  — :func:`reachable_references`: every ``type:name`` a template can
  reach through its fragments and the overrides' presets (what a host resolves);
* ``lint``        — :func:`library_lint`: the engine's lint with the library's fragment
  names, and include cycles and depths with their chains.

The ``fragment:`` resolver itself (variant choice, includes with their cycle and depth
checks and bounds) is a variable type: ``sysprompt_core.variables.fragment``.
"""

from sysprompt_core.errors import InvalidFragmentName, InvalidOverride, InvalidVariantKey
from sysprompt_core.library.compression import compress
from sysprompt_core.library.layers import (
    Layered,
    LayerText,
    layered_prompt,
    preset_exists,
    render_override,
)
from sysprompt_core.library.lint import library_lint
from sysprompt_core.library.names import (
    FRAGMENT_NAME_MAX_LENGTH,
    fragment_name_check,
    is_fragment_name,
    is_variable_name,
    normalize_key,
)
from sysprompt_core.library.overrides import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    Override,
    Strategy,
    apply_layers,
    check_strategy,
    check_variables,
    merge,
    parse_override,
)
from sysprompt_core.library.references import reachable_references
from sysprompt_core.library.source import (
    FragmentSource,
    FragmentUse,
    FragmentVariant,
    MemorySource,
)
from sysprompt_core.library.tree import (
    ROOT_TEMPLATE_PATH,
    SETTINGS_PATH,
    ParsedTree,
    Refusal,
    TreeEntry,
    TreeRecord,
    parse_tree,
    render_tree,
    tree_settings,
)
from sysprompt_core.library.variants import (
    DEFAULT,
    VariantKey,
    choose_variant,
    variant_candidates,
)

__all__ = [
    "DEFAULT",
    "DEFAULT_STRATEGY",
    "FRAGMENT_NAME_MAX_LENGTH",
    "ROOT_TEMPLATE_PATH",
    "SETTINGS_PATH",
    "STRATEGIES",
    "InvalidFragmentName",
    "InvalidOverride",
    "InvalidVariantKey",
    "FragmentSource",
    "FragmentUse",
    "FragmentVariant",
    "LayerText",
    "Layered",
    "MemorySource",
    "Override",
    "ParsedTree",
    "Refusal",
    "Strategy",
    "TreeEntry",
    "TreeRecord",
    "VariantKey",
    "apply_layers",
    "check_strategy",
    "check_variables",
    "choose_variant",
    "compress",
    "fragment_name_check",
    "is_fragment_name",
    "is_variable_name",
    "layered_prompt",
    "library_lint",
    "merge",
    "normalize_key",
    "parse_override",
    "parse_tree",
    "preset_exists",
    "reachable_references",
    "render_override",
    "render_tree",
    "tree_settings",
    "variant_candidates",
]
