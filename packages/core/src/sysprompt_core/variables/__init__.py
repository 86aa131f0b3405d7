"""Variables: the values a template's ``[type:name]`` references stand for.

Pure Python, no Django. One module per variable type (``system``, ``prompt``, ``git``,
``file``; ``host`` gives ``tool`` and ``var``; ``fragment`` the library's fragments),
each adding its resolver to a :class:`Registry` through ``register(builder)``.
:func:`resolve_prompt` renders a template with :class:`LazyValues`, which resolves a
variable only when the rendering reaches it (a template without ``git:`` variables
reads no repository; an unreferenced file is never opened). A fragment is rendered
inside the same resolution (:class:`ResolutionState`: one read account, each value
resolved once). :func:`lint` is the engine's lint with the registry's vocabulary;
``sysprompt_core.library.library_lint`` adds the library's fragments.

Agent hosts (``scope``, ``supplied``): the host may supply the host-local values
(:func:`is_host_local`; checked by :func:`check_supplied`) and the context says which
host-local types may be resolved on this machine (``server_resolves``); every
resolution measures its prompt's shared prefix, up to the first per-conversation value
(:func:`is_per_conversation`): ``Resolution.shared_prefix_chars`` and ``prefix_end``.
"""

from __future__ import annotations

from sysprompt_core.template import Diagnostic
from sysprompt_core.template import lint as engine_lint
from sysprompt_core.variables.catalog import CatalogEntry, variable_catalog
from sysprompt_core.variables.registry import (
    BUILTIN_MODULES,
    Busy,
    Missing,
    Registry,
    RegistryBuilder,
    RegistryError,
    ResolveContext,
    Resolver,
    ResolverOptions,
    Value,
    VariableInfo,
    build_registry,
    default_registry,
)
from sysprompt_core.variables.resolve import (
    LazyValues,
    Resolution,
    ResolutionState,
    render_nested,
    resolve_prompt,
)
from sysprompt_core.variables.scope import (
    HOST_LOCAL_KEYS,
    HOST_LOCAL_TYPES,
    PER_CONVERSATION_KEYS,
    PER_CONVERSATION_TYPES,
    SERVER_RESOLVES_CHOICES,
    is_host_local,
    is_per_conversation,
)
from sysprompt_core.variables.supplied import (
    SERVER_RESOLVES_SETTING,
    InvalidHostValues,
    check_supplied,
)


def lint(source: str, registry: Registry | None = None) -> list[Diagnostic]:
    """The diagnostics of ``source`` with ``registry``'s vocabulary (default: the
    built-in variables)."""
    return engine_lint(source, (registry or default_registry()).vocabulary())


__all__ = [
    "BUILTIN_MODULES",
    "HOST_LOCAL_KEYS",
    "HOST_LOCAL_TYPES",
    "PER_CONVERSATION_KEYS",
    "PER_CONVERSATION_TYPES",
    "SERVER_RESOLVES_CHOICES",
    "SERVER_RESOLVES_SETTING",
    "Busy",
    "CatalogEntry",
    "InvalidHostValues",
    "LazyValues",
    "Missing",
    "Registry",
    "RegistryBuilder",
    "RegistryError",
    "Resolution",
    "ResolutionState",
    "ResolveContext",
    "Resolver",
    "ResolverOptions",
    "Value",
    "VariableInfo",
    "build_registry",
    "check_supplied",
    "default_registry",
    "is_host_local",
    "is_per_conversation",
    "lint",
    "render_nested",
    "resolve_prompt",
    "variable_catalog",
]
