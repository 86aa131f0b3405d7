"""The variable types a template can use, and the resolvers that give them values.

Each resolver module exposes ``register(builder)`` and adds its resolver there;
:func:`build_registry` imports the modules and freezes what they registered. Nothing
is kept at module level: two registries never share state.
"""

from __future__ import annotations

import abc
import functools
import importlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, NoReturn

from sysprompt_core.errors import RegistryError
from sysprompt_core.variables.context import ResolveContext, ResolverOptions

__all__ = [
    "BUILTIN_MODULES",
    "Busy",
    "Missing",
    "Registry",
    "RegistryBuilder",
    "RegistryError",
    "ResolveContext",
    "Resolver",
    "ResolverOptions",
    "Value",
    "VariableInfo",
    "build_registry",
    "default_registry",
]

BUILTIN_MODULES: tuple[str, ...] = (
    "sysprompt_core.variables.system",
    "sysprompt_core.variables.prompt",
    "sysprompt_core.variables.git",
    "sysprompt_core.variables.file",
    "sysprompt_core.variables.host",
    "sysprompt_core.variables.fragment",
)

_TYPE = re.compile(r"[a-z][a-z0-9_-]*\Z")


@dataclass(frozen=True)
class VariableInfo:
    """One entry of the variable catalog; a dynamic entry stands for any name."""

    type: str
    name: str
    description: str
    dynamic: bool = False

    @property
    def key(self) -> str:
        return f"{self.type}:{self.name}"


@dataclass(frozen=True)
class Missing:
    """A value that does not exist, and why (for people: the preview shows it)."""

    reason: str


@dataclass(frozen=True)
class Busy(Missing):
    """A value that does not exist *now* because the machinery was busy, not because of
    anything about the conversation (every git reader stayed busy as long as a read may queue):
    asking again in about ``retry_after`` seconds may give it. Rendering treats it as
    any other :class:`Missing`; a server should not freeze a prompt built without it
    (``Resolution.busy`` lists such keys)."""

    retry_after: float = 1.0


Value = str | Missing


class Resolver(abc.ABC):
    """Gives values to the names of one variable type.

    ``resolve`` never raises: a value that cannot be had is :class:`Missing`. With
    ``batch`` set, every referenced name of the type is resolved in one call, as soon as
    the first of them is needed.
    """

    type: ClassVar[str]
    batch: ClassVar[bool] = False

    @abc.abstractmethod
    def variables(self) -> Sequence[VariableInfo]:
        """The catalog entries of this type."""

    def names(self) -> frozenset[str] | None:
        """The valid names, or None when any name is valid (a dynamic type)."""
        return frozenset(info.name for info in self.variables() if not info.dynamic)

    def resolve(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        """A value for each of ``names`` (keyed by name, without the type).

        By default one ``value`` call per name; a batch resolver overrides this.
        """
        return {name: self.value(name, context) for name in names}

    def value(self, name: str, context: ResolveContext) -> Value:
        """The value of one name; override this or ``resolve``."""
        raise NotImplementedError(f"{type(self).__name__} resolves nothing")


class Registry:
    """An immutable table of resolvers by type."""

    __slots__ = ("_resolvers",)
    _resolvers: Mapping[str, Resolver]

    def __init__(self, resolvers: Iterable[Resolver] = ()) -> None:
        table: dict[str, Resolver] = {}
        for resolver in resolvers:
            _check_type(resolver, table)
            table[resolver.type] = resolver
        object.__setattr__(self, "_resolvers", MappingProxyType(table))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"Registry({', '.join(self._resolvers)})"

    def get(self, type: str) -> Resolver | None:
        return self._resolvers.get(type)

    def types(self) -> tuple[str, ...]:
        return tuple(self._resolvers)

    def catalog(self) -> tuple[VariableInfo, ...]:
        return tuple(info for r in self._resolvers.values() for info in r.variables())

    def vocabulary(self) -> Mapping[str, frozenset[str] | None]:
        """Type -> its fixed names, or None for a dynamic type (what lint checks against)."""
        return MappingProxyType({t: r.names() for t, r in self._resolvers.items()})


class RegistryBuilder:
    """Collects resolvers while the modules register; :meth:`build` freezes them."""

    def __init__(self) -> None:
        self._resolvers: dict[str, Resolver] = {}

    def register(self, resolver: Resolver) -> None:
        _check_type(resolver, self._resolvers)
        self._resolvers[resolver.type] = resolver

    def build(self) -> Registry:
        return Registry(self._resolvers.values())


def _check_type(resolver: Resolver, known: Mapping[str, Resolver]) -> None:
    kind = getattr(resolver, "type", None)
    if not isinstance(kind, str) or not _TYPE.match(kind):
        raise RegistryError(f"{resolver!r} has no valid type (lowercase, like 'git'): {kind!r}")
    if kind in known:
        raise RegistryError(f"variable type {kind!r} is registered twice")


def build_registry(modules: Iterable[str] = BUILTIN_MODULES) -> Registry:
    """Import each module and let its ``register(builder)`` add its resolvers."""
    builder = RegistryBuilder()
    for name in modules:
        register = getattr(importlib.import_module(name), "register", None)
        if not callable(register):
            raise RegistryError(f"module {name!r} has no register(builder) function")
        register(builder)
    return builder.build()


@functools.cache
def default_registry() -> Registry:
    """The registry of the built-in types, built once."""
    return build_registry()
