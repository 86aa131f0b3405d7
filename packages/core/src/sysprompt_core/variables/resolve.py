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

One resolution, many renders: a fragment (``fragment:<name>``) is a template rendered
inside the resolution that includes it (:func:`render_nested`), with the same context.
What the renders share is the :class:`ResolutionState` that ``LazyValues`` puts in the
context as its ``reads``: the read account (a file read by the root template and by a
fragment is read once), the registry, the values resolved so far (a variable is
resolved once, whichever render reaches it first; ``fragment:`` values are the
exception, as they depend on which fragments include them), the fragment variants
used, and what a resolver keeps for the resolution (:meth:`ResolutionState.local`).
Nothing is kept from one resolution to the next.

Host-local values (``scope``, ``supplied``): a key the host supplied
(``ResolveContext.supplied``) is its value, as it is, and its resolver is not called; a
host-local key it did not supply, whose type ``server_resolves`` leaves out, does not
exist, and its resolver is not called either. Every render of the resolution sees
the same (one context).

The shared prefix (agent-hosts §1): every render of a resolution measures, in its
walk, how much of its text is the same for every conversation of the agent host,
provider and model (``template.prefix``), the per-conversation keys being
``scope.is_per_conversation``. A fragment's value carries its own
(a :class:`~sysprompt_core.template.Prefixed` string, made by the ``fragment:``
resolver), so the render that includes it carries the prefix on into it.
:class:`Resolution` gives the prompt's: ``shared_prefix_chars`` and ``prefix_end``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, overload

from sysprompt_core import template as engine
from sysprompt_core.variables.context import ReadAccount
from sysprompt_core.variables.registry import (
    Busy,
    Missing,
    Registry,
    ResolveContext,
    Resolver,
    Value,
    default_registry,
)
from sysprompt_core.variables.scope import is_host_local, is_per_conversation
from sysprompt_core.variables.supplied import SERVER_RESOLVES_SETTING

if TYPE_CHECKING:
    from sysprompt_core.library.source import FragmentUse

__all__ = [
    "PROMPT_LIMIT_SETTING",
    "SUPPLIED_ABSENT",
    "UNSHARED_TYPES",
    "LazyValues",
    "Resolution",
    "ResolutionState",
    "busy_keys",
    "host_value",
    "render_nested",
    "resolution_state",
    "resolve_prompt",
    "shared_chars",
]

PROMPT_LIMIT_SETTING = "SYSPROMPT_MAX_PROMPT_BYTES"
UNSHARED_TYPES = frozenset({"fragment"})
"""Types whose value depends on where it is rendered, not only on the context (a
fragment's on the fragments that include it): never shared between renders."""

SUPPLIED_ABSENT = Missing("the host supplied it as not existing")
UNKNOWN_NAME = Missing("unknown variable")
NO_VALUE_GIVEN = Missing("the resolver gave no value")

_Local = TypeVar("_Local")
_Default = TypeVar("_Default")


class ResolutionState(ReadAccount):
    """What one resolution shares between its root render and the fragments it
    includes. It is the context's ``reads`` (so every resolver reaches it), hence a
    :class:`ReadAccount`.

    Besides the read account: ``registry``; ``shared``, the values resolved so far by
    key (``fragment:`` keys excepted); ``fragments``, the fragment variants used, in
    first-use order; and one object per kind that a resolver keeps for the resolution
    (:meth:`local`).
    """

    __slots__ = ("_locals", "fragments", "registry", "shared")

    def __init__(self, registry: Registry) -> None:
        super().__init__()
        self.registry = registry
        self.shared: dict[str, Value] = {}
        self.fragments: dict[FragmentUse, None] = {}
        self._locals: dict[type, object] = {}

    def __repr__(self) -> str:
        return (
            f"ResolutionState(used={self.used}, files={len(self.files)}, "
            f"shared={len(self.shared)}, fragments={len(self.fragments)})"
        )

    def local(self, kind: type[_Local]) -> _Local:
        """The resolution's one instance of ``kind``, made with ``kind()`` when first
        asked for: where a resolver keeps what lasts one resolution."""
        found = self._locals.get(kind)
        if found is None:
            found = self._locals[kind] = kind()
        assert isinstance(found, kind)
        return found


def resolution_state(
    context: ResolveContext, registry: Registry | None = None
) -> tuple[ResolveContext, ResolutionState]:
    """``context`` and the resolution it belongs to; a context outside any resolution
    (a resolver called directly) gets a fresh one, with ``registry`` (default: the
    built-in one)."""
    if isinstance(context.reads, ResolutionState):
        return context, context.reads
    state = ResolutionState(default_registry() if registry is None else registry)
    return dataclasses.replace(context, reads=state), state


class LazyValues(Mapping[str, "str | None"]):
    """``"type:name"`` -> value (``None`` when it does not exist), resolved on first use.

    The resolvers see ``context`` with a fresh :class:`ResolutionState` as its read
    account: one ``LazyValues`` is one resolution, whose reads share one budget.
    :meth:`nested` makes the values of a template rendered inside that resolution.
    """

    def __init__(
        self,
        references: Iterable[str],
        context: ResolveContext,
        registry: Registry | None = None,
    ) -> None:
        state = ResolutionState(default_registry() if registry is None else registry)
        self._start(references, dataclasses.replace(context, reads=state), state)

    @classmethod
    def nested(cls, references: Iterable[str], context: ResolveContext) -> LazyValues:
        """The values of a template rendered inside the resolution of ``context`` (a
        fragment): the same context and :class:`ResolutionState`, so what the
        resolution already resolved or read is not resolved or read again (it is
        there from the start)."""
        values = cls.__new__(cls)
        context, state = resolution_state(context)
        values._start(references, context, state)
        shared = state.shared
        values._resolved = {key: shared[key] for key in values._referenced if key in shared}
        return values

    def _start(
        self, references: Iterable[str], context: ResolveContext, state: ResolutionState
    ) -> None:
        if isinstance(references, frozenset):  # a parsed template's: unique already
            self._references = tuple(references)
            self._referenced = references
        else:
            self._references = tuple(dict.fromkeys(references))
            self._referenced = frozenset(self._references)
        self._context = context
        self._state = state
        self._registry = state.registry
        self._resolved: dict[str, Value] = {}

    def __getitem__(self, key: str) -> str | None:
        value = self.value(key)
        return None if isinstance(value, Missing) else value

    @overload
    def get(self, key: str, /) -> str | None: ...

    @overload
    def get(self, key: str, /, default: str | None) -> str | None: ...

    @overload
    def get(self, key: str, /, default: _Default) -> str | None | _Default: ...

    def get(self, key: str, /, default: object = None) -> object:
        """``self[key]``, or ``default`` for a key that is not referenced (what
        ``Mapping.get`` does, without its detour through an exception: the renderer
        looks every key up this way)."""
        value = self._resolved.get(key)
        if value is None:
            if key not in self._referenced:
                return default
            value = self._first(key)
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
        value = self._resolved.get(key)
        if value is None:
            if key not in self._referenced:
                raise KeyError(key)
            value = self._first(key)
        return value

    def _first(self, key: str) -> Value:
        """A referenced key's value the first time this mapping is asked: what another
        render of the resolution resolved, or resolved now."""
        value = self._state.shared.get(key)
        if value is None:
            self._resolve(key)
            return self._resolved[key]
        self._resolved[key] = value
        return value

    def reason(self, key: str) -> str | None:
        """Why a referenced variable does not exist, or None when it does."""
        value = self.value(key)
        return value.reason if isinstance(value, Missing) else None

    def drop(self, key: str, reason: str) -> None:
        """Make a referenced key not exist from now on, for ``reason`` (here only: the
        other renders of the resolution keep its value)."""
        if key not in self._referenced:
            raise KeyError(key)
        self._resolved[key] = Missing(reason)

    @property
    def state(self) -> ResolutionState:
        """The resolution this mapping belongs to (shared with the fragments' renders)."""
        return self._state

    @property
    def bytes_read(self) -> int:
        """What the resolvers have read so far in this resolution."""
        return self._state.used

    @property
    def fragments_used(self) -> tuple[FragmentUse, ...]:
        """The fragment variants the resolution has used so far, in first-use order."""
        return tuple(self._state.fragments)

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
        elif (given := host_value(key, self._context)) is not None:
            self._resolved[key] = self._state.shared[key] = given
        elif resolver is None:
            self._resolved[key] = Missing(f"unknown variable type '{kind}'")
        elif resolver.batch:
            values = _run(resolver, kind, self._pending_names(kind), self._context)
            self._resolved.update(values)
            if kind not in UNSHARED_TYPES:
                self._state.shared.update(values)
        else:
            value = self._resolved[key] = _run_one(resolver, name, self._context)
            if kind not in UNSHARED_TYPES:
                self._state.shared[key] = value

    def _pending_names(self, kind: str) -> list[str]:
        prefix = f"{kind}:"
        shared = self._state.shared
        supplied = self._context.supplied
        return [
            key.removeprefix(prefix)
            for key in self._references
            if key.startswith(prefix)
            and key not in self._resolved
            and key not in shared
            and key not in supplied
        ]


def host_value(key: str, context: ResolveContext) -> Value | None:
    """The value of ``key`` when it is host-local and not for a resolver to give: what
    the host supplied, or :class:`Missing` when it did not supply it and
    ``context.server_resolves`` leaves its type out. ``None``: ask the resolver."""
    if not is_host_local(key):
        return None
    if key in context.supplied:
        value = context.supplied[key]
        return SUPPLIED_ABSENT if value is None else value
    kind = key.partition(":")[0]
    if context.resolves(kind):
        return None
    return Missing(
        f"the server does not resolve {kind}: ({SERVER_RESOLVES_SETTING}); "
        "the host did not supply it"
    )


def _run(
    resolver: Resolver, kind: str, names: list[str], context: ResolveContext
) -> dict[str, Value]:
    """Values keyed ``"type:name"``; unknown names never reach the resolver."""
    fixed = resolver.names()
    values: dict[str, Value] = (
        {} if fixed is None else {name: UNKNOWN_NAME for name in names if name not in fixed}
    )
    wanted = [name for name in names if name not in values]
    if wanted:
        values.update(_call(resolver, wanted, context))
    return {f"{kind}:{name}": values.get(name, NO_VALUE_GIVEN) for name in names}


def _run_one(resolver: Resolver, name: str, context: ResolveContext) -> Value:
    """:func:`_run` for one name (a resolver that is not a batch one): its ``value``
    asked directly when it keeps the default ``resolve``, which only asks that."""
    fixed = resolver.names()
    if fixed is not None and name not in fixed:
        return UNKNOWN_NAME
    if type(resolver).resolve is not Resolver.resolve:
        return _call(resolver, [name], context).get(name, NO_VALUE_GIVEN)
    try:
        return resolver.value(name, context)
    except Exception as exc:  # a resolver must not break rendering
        return _failed(resolver, exc)


def _call(resolver: Resolver, names: list[str], context: ResolveContext) -> Mapping[str, Value]:
    try:
        return resolver.resolve(names, context)
    except Exception as exc:  # a resolver must not break rendering
        return dict.fromkeys(names, _failed(resolver, exc))


def _failed(resolver: Resolver, exc: Exception) -> Missing:
    return Missing(f"the {resolver.type} resolver failed: {exc}")


def render_nested(template: engine.Template, context: ResolveContext) -> engine.Bounded:
    """Render ``template`` inside the resolution of ``context`` (see the module
    docstring), within ``max_prompt_bytes``, with its shared prefix; raises
    :class:`~sysprompt_core.template.PromptTooLarge` when its literal text alone is
    over that limit."""
    values = LazyValues.nested(template.references, context)
    return template.render_within(values, context.options.max_prompt_bytes, is_per_conversation)


@dataclass(frozen=True)
class Resolution:
    """A rendered system prompt (None = no prompt) and the values it was built from.

    ``dropped``: the keys that do not exist because their value would have taken the
    prompt past ``max_prompt_bytes`` (their values are :class:`Missing` with why).
    ``busy``: the keys, among those the resolution read (in fragments too), that do
    not exist only because a resolver was busy (:class:`Busy`): asked again later,
    they may; a server should not freeze this prompt.
    ``fragments_used``: the fragment variants whose rendering the resolution reached
    (included ones too), each once, in first-use order.

    The shared prefix (see the module docstring): ``shared_prefix`` is its length in
    code points, ``None`` when the prompt depends on nothing per conversation (what
    ``layered_prompt`` takes as ``base_prefix``); :attr:`shared_prefix_chars` the same
    as a number. ``prefix_end`` is the tag of the template that ended it (for a
    fragment that ended it inside, the ``[fragment:…]`` tag), with its line and column
    in the template's source as compiled (after compression, when the version has it).
    """

    prompt: str | None
    values: LazyValues
    dropped: frozenset[str] = frozenset()
    fragments_used: tuple[FragmentUse, ...] = ()
    shared_prefix: int | None = None
    prefix_end: engine.PrefixEnd | None = None
    busy: frozenset[str] = frozenset()

    @property
    def shared_prefix_chars(self) -> int:
        """How many leading code points of the prompt are the same in every
        conversation of the agent host, provider and model (0 for no prompt)."""
        return shared_chars(self.prompt, self.shared_prefix)


def shared_chars(prompt: str | None, prefix: int | None) -> int:
    """The shared prefix of ``prompt`` as a number: ``prefix`` (``None``: all of it)
    within the prompt's length; 0 for no prompt."""
    if prompt is None:
        return 0
    return len(prompt) if prefix is None else min(prefix, len(prompt))


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
        rendered = compiled.render_within(values, limit, is_per_conversation)
    except engine.PromptTooLarge as exc:
        raise engine.PromptTooLarge(exc.size, limit, PROMPT_LIMIT_SETTING) from None
    text, dropped = rendered.text, rendered.dropped
    end = compiled.prefix_end(rendered, values)
    reason = f"would make the prompt larger than {limit:,} bytes ({PROMPT_LIMIT_SETTING})"
    for key in dropped:
        values.drop(key, reason)
    prompt = None if text.isspace() or not text else text
    prefix = rendered.prefix
    if prefix is not None:
        prefix = 0 if prompt is None else min(prefix, len(prompt))
    return Resolution(
        prompt=prompt,
        values=values,
        dropped=dropped,
        fragments_used=values.fragments_used,
        shared_prefix=prefix,
        prefix_end=end,
        busy=busy_keys(values.state.shared),
    )


def busy_keys(values: Mapping[str, Value]) -> frozenset[str]:
    """The keys of ``values`` that are :class:`Busy`."""
    return frozenset(key for key, value in values.items() if isinstance(value, Busy))
