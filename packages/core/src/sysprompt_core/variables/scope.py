"""Where a value comes from, and how widely it is the same: the two vocabularies.

* **Host-local** (agent-hosts §0): what only the machine of the agent host knows — the
  working directory as a value (``prompt:cwd``) and every ``git:``, ``file:`` and
  ``system:`` value. Only these may be supplied by the host
  (``ResolveContext.supplied``, checked by ``supplied.check_supplied``), and only the
  types of :data:`HOST_LOCAL_TYPES` are ever read from the machine a resolution runs
  on, so only they are what ``ResolveContext.server_resolves`` allows or not.
  ``prompt:cwd`` is what the request says, never read from the machine: listed or not
  in ``server_resolves``, it is the request's ``cwd`` unless the host supplies it.
* **Per conversation** (agent-hosts §1): what may differ between two conversations of
  the same agent host, provider and model — ``prompt:cwd``,
  ``prompt:conversation_id``, ``system:time``, ``system:date``, ``system:hostname``,
  and every ``git:``, ``file:``, ``var:`` and ``tool:`` value. The shared prefix of a
  rendering ends at the first of them it reaches (``template.prefix``). Everything
  else is the same for the host, provider and model: ``prompt:model``,
  ``prompt:provider``, ``system:os``, and which fragments and variants exist.

Each rule is a type set, a key set and a predicate on ``"type:name"``.
"""

from __future__ import annotations

__all__ = [
    "HOST_LOCAL_KEYS",
    "HOST_LOCAL_TYPES",
    "PER_CONVERSATION_KEYS",
    "PER_CONVERSATION_TYPES",
    "SERVER_RESOLVES_CHOICES",
    "is_host_local",
    "is_per_conversation",
]

HOST_LOCAL_TYPES = frozenset({"git", "file", "system"})
"""Types whose every name is host-local: read from the machine the resolver runs on."""
HOST_LOCAL_KEYS = frozenset({"prompt:cwd"})
"""Host-local names of other types: said by the host, never read from a machine."""
SERVER_RESOLVES_CHOICES = frozenset({"prompt", *HOST_LOCAL_TYPES})
"""What ``server_resolves`` may list: the types with host-local keys (``prompt`` is
accepted and changes nothing, see the module docstring)."""

PER_CONVERSATION_TYPES = frozenset({"git", "file", "var", "tool"})
"""Types whose every name may differ between conversations of one host and model."""
PER_CONVERSATION_KEYS = frozenset(
    {"prompt:cwd", "prompt:conversation_id", "system:time", "system:date", "system:hostname"}
)
"""Names of other types that may differ between conversations."""


def is_host_local(key: str) -> bool:
    """Whether ``"type:name"`` is host-local: ``prompt:cwd``, ``git:``, ``file:`` or
    ``system:`` (a value the host may supply)."""
    kind, colon, name = key.partition(":")
    return bool(colon and name) and (kind in HOST_LOCAL_TYPES or key in HOST_LOCAL_KEYS)


def is_per_conversation(key: str) -> bool:
    """Whether ``"type:name"`` may differ between conversations of one agent host,
    provider and model (where the shared prefix ends)."""
    return key in PER_CONVERSATION_KEYS or key.partition(":")[0] in PER_CONVERSATION_TYPES
