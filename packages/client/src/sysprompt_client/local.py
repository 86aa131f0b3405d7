"""Host-local values: what only the agent host's machine knows, resolved there.

The working directory, its repository and files, and the host's clock and name live
on the host. The client asks the server which references the template can reach and
which host-local types the server leaves to the host (``GET
/api/system-prompt/references``: ``references`` and ``host_resolves``), resolves those
on the host with the same resolvers the server uses (``sysprompt_core``), and sends
them as ``values`` (``{"type:name": text or None}``, ``None`` = does not exist).
:func:`host_keys` picks which: by default (``resolve_locally=None``) the references of
the types the server leaves to the host; with ``resolve_locally=True`` every host-local
reference.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from sysprompt_core.variables import LazyValues, Missing, ResolveContext, ResolverOptions

__all__ = [
    "HOST_LOCAL_KEYS",
    "HOST_LOCAL_TYPES",
    "host_keys",
    "is_host_local",
    "resolve_host_values",
]

HOST_LOCAL_TYPES = frozenset({"git", "file", "system"})
"""Types whose every name is host-local."""
HOST_LOCAL_KEYS = frozenset({"prompt:cwd"})
"""Single host-local names of other types."""


def is_host_local(key: str) -> bool:
    """Whether ``"type:name"`` is a value the host resolves (``prompt:cwd``, ``git:``,
    ``file:``, ``system:``)."""
    kind, colon, name = key.partition(":")
    return bool(colon and name) and (kind in HOST_LOCAL_TYPES or key in HOST_LOCAL_KEYS)


def references_from_json(data: Any) -> tuple[str, ...]:
    """The ``"type:name"`` keys of a references answer: ``{"references": [...]}`` whose
    items are keys or ``{"type", "name"}`` objects (a bare list is taken too)."""
    items = data.get("references") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("the answer has no 'references' list")
    keys: list[str] = []
    for item in items:
        if isinstance(item, str):
            keys.append(item)
        elif isinstance(item, dict) and isinstance(item.get("key"), str):
            keys.append(item["key"])
        elif isinstance(item, dict) and isinstance(item.get("type"), str):
            keys.append(f"{item['type']}:{item.get('name', '')}")
    return tuple(dict.fromkeys(keys))


def host_resolves_from_json(data: Any) -> frozenset[str] | None:
    """The types of a references answer's ``host_resolves`` (the host-local types the
    server leaves to the host); ``None`` when the answer does not say (a server from
    before the field)."""
    items = data.get("host_resolves") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    return frozenset(item for item in items if isinstance(item, str))


def host_keys(
    references: Iterable[str], host_resolves: frozenset[str] | None, *, everything: bool = False
) -> list[str]:
    """The references the host resolves itself: those of the types in ``host_resolves``
    (what the server leaves to the host); every host-local one with ``everything``, or
    when the server did not say (``None``: sending a value the server could have read is
    harmless, leaving one out that it cannot read loses it)."""
    local = [key for key in dict.fromkeys(references) if is_host_local(key)]
    if everything or host_resolves is None:
        return local
    return [key for key in local if key.partition(":")[0] in host_resolves]


def resolve_host_values(
    references: Iterable[str],
    *,
    cwd: str,
    model: str | None = None,
    conversation_id: str | None = None,
    allowed_roots: Sequence[str | os.PathLike[str]] | None = None,
    options: ResolverOptions | None = None,
) -> dict[str, str | None]:
    """The values of the host-local ``references``, resolved on this machine.

    Files and repositories are read only inside ``allowed_roots`` (default: ``cwd``
    alone); ``options`` sets the resolvers' other limits (default: the core's).
    """
    keys = [key for key in dict.fromkeys(references) if is_host_local(key)]
    if not keys:
        return {}
    roots = (cwd,) if allowed_roots is None else tuple(os.fspath(r) for r in allowed_roots)
    limits = replace(options or ResolverOptions(), allowed_roots=roots)
    context = ResolveContext(cwd=cwd, model=model, conversation_id=conversation_id, options=limits)
    values = LazyValues(keys, context).resolve_all()
    return {key: None if isinstance(v, Missing) else v for key, v in values.items()}
