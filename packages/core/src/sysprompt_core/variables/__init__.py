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
"""

from __future__ import annotations

from sysprompt_core.template import Diagnostic
from sysprompt_core.template import lint as engine_lint
from sysprompt_core.variables.catalog import CatalogEntry, variable_catalog
from sysprompt_core.variables.registry import (
    BUILTIN_MODULES,
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


def lint(source: str, registry: Registry | None = None) -> list[Diagnostic]:
    """The diagnostics of ``source`` with ``registry``'s vocabulary (default: the
    built-in variables)."""
    return engine_lint(source, (registry or default_registry()).vocabulary())


__all__ = [
    "BUILTIN_MODULES",
    "CatalogEntry",
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
    "default_registry",
    "lint",
    "render_nested",
    "resolve_prompt",
    "variable_catalog",
]
