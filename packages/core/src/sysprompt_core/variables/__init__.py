"""Variables: the values a template's ``[type:name]`` references stand for.

Pure Python, no Django. One module per variable type (``system``, ``prompt``, ``git``,
``file``), each adding its resolver to a :class:`Registry` through ``register(builder)``.
:func:`resolve_prompt` renders a template with :class:`LazyValues`, which resolves a
variable only when the rendering reaches it (spec §6: a template without ``git:``
variables starts no process; an unreferenced file is never opened).
"""

from __future__ import annotations

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
from sysprompt_core.variables.resolve import LazyValues, Resolution, resolve_prompt

__all__ = [
    "BUILTIN_MODULES",
    "CatalogEntry",
    "LazyValues",
    "Missing",
    "Registry",
    "RegistryBuilder",
    "RegistryError",
    "Resolution",
    "ResolveContext",
    "Resolver",
    "ResolverOptions",
    "Value",
    "VariableInfo",
    "build_registry",
    "default_registry",
    "resolve_prompt",
    "variable_catalog",
]
