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
  which collects every refusal, and its inverse :func:`render_tree`.

Still to come here: the fragment resolver (``fragment:`` — variant choice, includes
with cycle and depth checks, through an interface the server provides) and the
installer's rules (which shipped default to create, upgrade, flag or leave alone).
"""

from sysprompt_core.errors import InvalidFragmentName, InvalidOverride, InvalidVariantKey
from sysprompt_core.library.compression import compress
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
from sysprompt_core.library.tree import (
    ROOT_TEMPLATE_PATH,
    SETTINGS_PATH,
    ParsedTree,
    Refusal,
    TreeEntry,
    TreeRecord,
    parse_tree,
    render_tree,
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
    "merge",
    "normalize_key",
    "parse_override",
    "parse_tree",
    "render_tree",
    "variant_candidates",
]
