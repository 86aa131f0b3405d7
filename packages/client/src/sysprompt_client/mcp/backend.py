"""What the MCP server asks of the place it serves from: the :class:`Backend` protocol.

The MCP prompts and tools (``sysprompt_client.mcp.server``) are declared once and
answered through a backend. The ``sysprompt-mcp`` command (stdio) supplies one over the
client (:class:`sysprompt_client.mcp.client_backend.ClientBackend`: the client's cache,
fallback and host-local values); the server's ``/mcp`` endpoint supplies one over its
own services for the calling user. This module imports nothing of the ``mcp`` SDK.

A backend is synchronous (the builder calls it in a worker thread) and raises the
client's exceptions (:mod:`sysprompt_client.errors`: ``NotFound``, ``Forbidden``,
``InvalidRequest``, ``ServerError``…) with the API's own sentence as ``message``; the
MCP layer turns them into MCP errors carrying that sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sysprompt_client.results import CompactResult, PromptResult

__all__ = ["Backend", "FragmentSummary", "FragmentText", "PromptSummary", "Variant"]


@dataclass(frozen=True, slots=True)
class Variant:
    """A variant's key: ``provider`` and ``model`` as the API shows them (``None``:
    any)."""

    provider: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FragmentSummary:
    """A fragment of the library: its name and its live variants."""

    name: str
    variants: tuple[Variant, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FragmentText:
    """A fragment rendered for a provider and model: ``text`` is what the template
    including it would get; ``provider``, ``model`` and ``version`` name the variant
    chosen (resolution falls back: (P, M), then (P, —), then (—, —))."""

    name: str
    text: str
    provider: str | None = None
    model: str | None = None
    version: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSummary:
    """A named prompt the caller may use: its name (``support/triage``), description
    and tags."""

    name: str
    description: str = ""
    tags: tuple[str, ...] = ()


@runtime_checkable
class Backend(Protocol):
    """The calls the MCP prompts and tools make. Every method may raise a
    :class:`sysprompt_client.errors.SyspromptError` (its ``message`` is shown to the MCP
    client as it is).

    ``cwd`` ``None`` is the backend's default working directory (the stdio command's
    ``SYSPROMPT_CWD``); a backend that has none raises ``InvalidRequest`` naming
    ``cwd``. ``label`` ``None``: the backend's default label (the agent host's, else
    production). ``prompt`` ``None``: the backend's default named prompt (the stdio
    command's ``SYSPROMPT_PROMPT``, else the agent host's default, else ``default``).
    """

    # Read -----------------------------------------------------------------------------

    def system_prompt(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> PromptResult:
        """The conversation's frozen prompt: built and stored on the first call (as the
        API's ``resolve``), the same bytes on every later one."""
        ...

    def compact(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
        prompt: str | None = None,
    ) -> CompactResult:
        """A compaction turn (the API's ``compact``): later calls answer the new
        prompt. An argument left out (``None``, ``cwd`` too) keeps the conversation's
        frozen context, which ``CompactResult.context_kept`` names."""
        ...

    def named_prompts(self) -> Sequence[PromptSummary] | None:
        """The named prompts the caller may use (not archived; for an agent host, those
        it is allowed), by name; ``None`` when the backend cannot say (a server without
        named prompts): ``prompts/list`` then lists what it listed before."""
        ...

    def fragments(self) -> Sequence[FragmentSummary]:
        """Every fragment of the library, by name (all pages)."""
        ...

    def fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> FragmentText:
        """The fragment ``name`` rendered as the variant ``provider`` and ``model`` get
        (``NotFound``/``InvalidRequest`` with the API's message when there is none)."""
        ...

    def permissions(self) -> frozenset[str]:
        """What the caller may do beyond reading prompts and fragments, named as the
        API's ``GET /api/me`` names it (``library``, ``releases``, ``publish``…): the
        tools that need one of them are listed only to a caller that has it. A
        ``ServerError`` (the server cannot be asked) lists none of them."""
        ...

    def labels(self) -> Sequence[Mapping[str, Any]]:
        """The labels the caller may read, as the API's ``/api/labels`` shows each
        (``name``, ``target``, ``protected``…); ``Forbidden`` for a caller that may read
        none (agent hosts)."""
        ...

    # Write (declared only when the operator enables them) ------------------------------

    def save_fragment(
        self,
        name: str,
        *,
        text: str,
        provider: str | None = None,
        model: str | None = None,
    ) -> Mapping[str, Any]:
        """Save a new version of the variant in the working copy; the API's answer
        (``name``, ``provider``, ``model``, ``version``…)."""
        ...

    def delete_fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> Mapping[str, Any]:
        """Delete the variant in the working copy (a deleted version); the API's
        answer."""
        ...

    def create_release(self, *, message: str | None = None) -> Mapping[str, Any]:
        """Release the working copy; the API's answer (``number``…)."""
        ...

    def set_label(self, name: str, *, target: Any, message: str | None = None) -> Mapping[str, Any]:
        """Create or move the label ``name`` to ``target`` (``"latest"``,
        ``{"release": N}`` or a split, as the API takes it); the API's answer."""
        ...
