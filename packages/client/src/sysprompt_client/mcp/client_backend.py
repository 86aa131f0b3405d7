"""The backend of the ``sysprompt-mcp`` command: the prompts and tools answered by a
:class:`sysprompt_client.Client`, so an MCP host gets what every agent host gets from
the client: the conversation's prompt from the cache on every later turn (no request),
the fallback when the server cannot answer a first turn, and the host-local values
(git, files, system) resolved here, on the host, never by the server."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from sysprompt_client.client import Client
from sysprompt_client.errors import ServerError
from sysprompt_client.mcp.backend import FragmentSummary, FragmentText, Variant
from sysprompt_client.results import CompactResult, PromptResult

__all__ = ["ClientBackend"]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _variants(item: Mapping[str, Any]) -> tuple[Variant, ...]:
    variants = item.get("variants")
    if not isinstance(variants, list):
        return ()
    return tuple(
        Variant(_str(variant.get("provider")), _str(variant.get("model")))
        for variant in variants
        if isinstance(variant, dict) and variant.get("deleted") is not True
    )


class ClientBackend:
    """A :class:`~sysprompt_client.mcp.backend.Backend` over ``client``; ``cwd`` is
    the working directory of a call that names none (``SYSPROMPT_CWD``)."""

    def __init__(self, client: Client, *, cwd: str) -> None:
        self.client = client
        self.cwd = os.path.abspath(cwd)

    def system_prompt(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
    ) -> PromptResult:
        return self.client.system_prompt(
            conversation_id, cwd=cwd or self.cwd, model=model, provider=provider, label=label
        )

    def compact(
        self,
        conversation_id: str,
        *,
        cwd: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        label: str | None = None,
    ) -> CompactResult:
        return self.client.compact(
            conversation_id, cwd=cwd or self.cwd, model=model, provider=provider, label=label
        )

    def fragments(self) -> Sequence[FragmentSummary]:
        """The fragments with a live variant (one whose every variant is deleted is
        gone: its prompt is not listed)."""
        summaries = []
        for item in self.client.library():
            name = item.get("name")
            variants = _variants(item)
            if isinstance(name, str) and variants:
                summaries.append(FragmentSummary(name=name, variants=variants))
        return summaries

    def fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> FragmentText:
        data = self.client.preview_fragment(name, cwd=self.cwd, provider=provider, model=model)
        text = data.get("system_prompt")
        if not isinstance(text, str):
            raise ServerError("unexpected answer from the server: no rendered text")
        used = data.get("fragments_used")
        first = used[0] if isinstance(used, list) and used and isinstance(used[0], dict) else {}
        version = first.get("version")
        return FragmentText(
            name=name,
            text=text,
            provider=_str(first.get("provider")),
            model=_str(first.get("model")),
            version=version if isinstance(version, int) else None,
        )

    def labels(self) -> Sequence[Mapping[str, Any]]:
        return self.client.labels()

    def save_fragment(
        self,
        name: str,
        *,
        text: str,
        provider: str | None = None,
        model: str | None = None,
    ) -> Mapping[str, Any]:
        return self.client.save_fragment(name, text, provider=provider, model=model)

    def delete_fragment(
        self, name: str, *, provider: str | None = None, model: str | None = None
    ) -> Mapping[str, Any]:
        return self.client.delete_fragment(name, provider=provider, model=model)

    def create_release(self, *, message: str | None = None) -> Mapping[str, Any]:
        return self.client.create_release(message=message)

    def set_label(self, name: str, *, target: Any, message: str | None = None) -> Mapping[str, Any]:
        return self.client.set_label(name, target, message=message)
