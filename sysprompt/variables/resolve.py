"""Resolve what a template references, lazily, and render the system prompt.

:class:`LazyValues` is the mapping the engine renders with: a value is resolved the
first time the rendering reaches it, and only if the template references it. A
variable in a branch that is not taken is never resolved, a file that is not
referenced is never opened, and a template without ``git:`` variables starts no process.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from sysprompt import template as engine
from sysprompt.variables.registry import (
    Missing,
    Registry,
    ResolveContext,
    Resolver,
    Value,
    default_registry,
)

__all__ = ["LazyValues", "Resolution", "resolve_prompt"]


class LazyValues(Mapping[str, "str | None"]):
    """``"type:name"`` -> value (``None`` when it does not exist), resolved on first use."""

    def __init__(
        self,
        references: Iterable[str],
        context: ResolveContext,
        registry: Registry | None = None,
    ) -> None:
        self._references = tuple(dict.fromkeys(references))
        self._referenced = frozenset(self._references)
        self._context = context
        self._registry = default_registry() if registry is None else registry
        self._resolved: dict[str, Value] = {}

    def __getitem__(self, key: str) -> str | None:
        value = self.value(key)
        return None if isinstance(value, Missing) else value

    def __contains__(self, key: object) -> bool:
        return key in self._referenced

    def __iter__(self) -> Iterator[str]:
        return iter(self._references)

    def __len__(self) -> int:
        return len(self._references)

    def __repr__(self) -> str:
        return f"LazyValues({self.looked_up()!r}, pending={len(self) - len(self._resolved)})"

    def value(self, key: str) -> Value:
        """The resolved value of a referenced key; :class:`KeyError` for any other key."""
        if key not in self._referenced:
            raise KeyError(key)
        if key not in self._resolved:
            self._resolve(key)
        return self._resolved[key]

    def reason(self, key: str) -> str | None:
        """Why a referenced variable does not exist, or None when it does."""
        value = self.value(key)
        return value.reason if isinstance(value, Missing) else None

    def looked_up(self) -> dict[str, Value]:
        """What has been resolved so far, in reference order."""
        return {key: self._resolved[key] for key in self._references if key in self._resolved}

    def resolve_all(self) -> dict[str, Value]:
        """Resolve every reference (the editor's preview lists them all)."""
        return {key: self.value(key) for key in self._references}

    def _resolve(self, key: str) -> None:
        kind, colon, name = key.partition(":")
        resolver = self._registry.get(kind)
        if not colon or not name:
            self._resolved[key] = Missing("not a variable reference")
        elif resolver is None:
            self._resolved[key] = Missing(f"unknown variable type '{kind}'")
        else:
            names = self._pending_names(kind) if resolver.batch else [name]
            self._resolved.update(_run(resolver, kind, names, self._context))

    def _pending_names(self, kind: str) -> list[str]:
        prefix = f"{kind}:"
        return [
            key.removeprefix(prefix)
            for key in self._references
            if key.startswith(prefix) and key not in self._resolved
        ]


def _run(
    resolver: Resolver, kind: str, names: list[str], context: ResolveContext
) -> dict[str, Value]:
    """Values keyed ``"type:name"``; unknown names never reach the resolver."""
    fixed = resolver.names()
    unknown = Missing("unknown variable")
    values: dict[str, Value] = {
        name: unknown for name in names if fixed is not None and name not in fixed
    }
    wanted = [name for name in names if name not in values]
    if wanted:
        values.update(_call(resolver, wanted, context))
    lost = Missing("the resolver gave no value")
    return {f"{kind}:{name}": values.get(name, lost) for name in names}


def _call(resolver: Resolver, names: list[str], context: ResolveContext) -> Mapping[str, Value]:
    try:
        return resolver.resolve(names, context)
    except Exception as exc:  # a resolver must not break rendering (spec §1)
        return dict.fromkeys(names, Missing(f"the {resolver.type} resolver failed: {exc}"))


@dataclass(frozen=True)
class Resolution:
    """A rendered system prompt (None = no prompt) and the values it was built from."""

    prompt: str | None
    values: LazyValues


def resolve_prompt(
    template: str | engine.Template,
    context: ResolveContext,
    registry: Registry | None = None,
) -> Resolution:
    """Render ``template`` for ``context``, resolving only what the rendering reaches."""
    compiled = engine.compile(template) if isinstance(template, str) else template
    values = LazyValues(compiled.references, context, registry)
    return Resolution(prompt=compiled.render_prompt(values), values=values)
