"""Resolve what a template references, lazily, and render the system prompt.

:class:`LazyValues` is the mapping the engine renders with: a value is resolved the
first time the rendering reaches it, and only if the template references it. A
variable in a branch that is not taken is never resolved, a file that is not
referenced is never opened, and a template without ``git:`` variables starts no process.

Bounds (``ResolverOptions``): each resolution gets a fresh read account, so the files
of one resolution read at most ``max_read_bytes`` together (a file reached by many
names is read once); and :func:`resolve_prompt` renders within ``max_prompt_bytes``
UTF-8 bytes. A variable whose value would take the prompt past that limit does not
exist: it is :class:`Missing` with the reason, blocks testing it take their other
branch, and no value is ever cut. A template whose literal text alone is over the
limit raises :class:`~sysprompt_core.template.PromptTooLarge`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from sysprompt_core import template as engine
from sysprompt_core.variables.context import ReadAccount
from sysprompt_core.variables.registry import (
    Missing,
    Registry,
    ResolveContext,
    Resolver,
    Value,
    default_registry,
)

__all__ = ["PROMPT_LIMIT_SETTING", "LazyValues", "Resolution", "resolve_prompt"]

PROMPT_LIMIT_SETTING = "SYSPROMPT_MAX_PROMPT_BYTES"


class LazyValues(Mapping[str, "str | None"]):
    """``"type:name"`` -> value (``None`` when it does not exist), resolved on first use.

    The resolvers see ``context`` with a fresh read account: one ``LazyValues`` is one
    resolution, whose reads share one budget.
    """

    def __init__(
        self,
        references: Iterable[str],
        context: ResolveContext,
        registry: Registry | None = None,
    ) -> None:
        self._references = tuple(dict.fromkeys(references))
        self._referenced = frozenset(self._references)
        self._context = dataclasses.replace(context, reads=ReadAccount())
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

    def drop(self, key: str, reason: str) -> None:
        """Make a referenced key not exist from now on, for ``reason``."""
        if key not in self._referenced:
            raise KeyError(key)
        self._resolved[key] = Missing(reason)

    @property
    def bytes_read(self) -> int:
        """What the resolvers have read so far in this resolution."""
        return self._context.reads.used

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
    except Exception as exc:  # a resolver must not break rendering
        return dict.fromkeys(names, Missing(f"the {resolver.type} resolver failed: {exc}"))


@dataclass(frozen=True)
class Resolution:
    """A rendered system prompt (None = no prompt) and the values it was built from.

    ``dropped``: the keys that do not exist because their value would have taken the
    prompt past ``max_prompt_bytes`` (their values are :class:`Missing` with why).
    """

    prompt: str | None
    values: LazyValues
    dropped: frozenset[str] = frozenset()


def resolve_prompt(
    template: str | engine.Template,
    context: ResolveContext,
    registry: Registry | None = None,
) -> Resolution:
    """Render ``template`` for ``context``, resolving only what the rendering reaches,
    within ``context.options.max_prompt_bytes`` (see the module docstring).

    Raises :class:`~sysprompt_core.template.PromptTooLarge` when the template's literal text
    alone is over the limit.
    """
    compiled = engine.compile(template) if isinstance(template, str) else template
    values = LazyValues(compiled.references, context, registry)
    limit = context.options.max_prompt_bytes
    try:
        text, dropped = compiled.render_within(values, limit)
    except engine.PromptTooLarge as exc:
        raise engine.PromptTooLarge(exc.size, limit, PROMPT_LIMIT_SETTING) from None
    reason = f"would make the prompt larger than {limit:,} bytes ({PROMPT_LIMIT_SETTING})"
    for key in dropped:
        values.drop(key, reason)
    prompt = None if text.isspace() or not text else text
    return Resolution(prompt=prompt, values=values, dropped=dropped)
