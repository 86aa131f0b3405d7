"""The backend of the ``sysprompt-mcp`` command: the prompts and tools answered by a
:class:`sysprompt_client.Client`, so an MCP host gets what every agent host gets from
the client: the conversation's prompt from the cache on every later turn (no request),
the fallback when the server cannot answer a first turn, and the host-local values
(git, files, system) resolved here, on the host, never by the server.

The caller of a tool is the agent's model, which a template or a document it read can
steer: a call's ``cwd`` must lie inside the command's roots (``SYSPROMPT_ROOTS``, by
default ``SYSPROMPT_CWD`` alone), checked on the directory actually opened, and the
client reads host-local values inside those roots only."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence
from typing import Any

from sysprompt_client.client import Client
from sysprompt_client.errors import Forbidden, InvalidRequest, NotFound, ServerError
from sysprompt_client.mcp.backend import FragmentSummary, FragmentText, PromptSummary, Variant
from sysprompt_client.results import CompactResult, PromptResult
from sysprompt_core.paths import directory_real_path, is_inside, real_roots

__all__ = ["PROMPTS_LISTED", "ClientBackend"]

PROMPTS_LISTED = 1_000
"""The most named prompts ``prompts/list`` shows (by name), as ``/mcp`` lists them."""


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


def _refused(cwd: str, why: str) -> InvalidRequest:
    message = f"{cwd!r} {why}"
    return InvalidRequest(f"cwd: {message}", status=400, errors={"cwd": [message]})


def cwd_inside(cwd: str, roots: Sequence[str]) -> str:
    """``cwd`` normalised, when it is an absolute path to a directory inside one of
    ``roots``: the directory is opened once and the path of what was opened is what
    must lie inside (a symlink out of the roots is refused); :class:`InvalidRequest`
    naming ``cwd`` otherwise."""
    if "\0" in cwd or not os.path.isabs(cwd):
        raise _refused(cwd, "is not an absolute path; pass the full path.")
    real = real_roots(roots)
    outside = _refused(
        cwd,
        f"is outside this MCP server's roots ({', '.join(roots)}); its operator sets "
        "them with SYSPROMPT_ROOTS.",
    )
    try:
        if not any(is_inside(os.path.realpath(cwd), root) for root in real):
            raise outside  # nothing outside is opened
        opened = directory_real_path(cwd)
    except OSError as error:
        if error.errno == errno.ENOTSUP:
            raise _refused(cwd, f"cannot be checked: {error.strerror}.") from None
        raise _refused(cwd, "is not an existing directory.") from None
    if not any(is_inside(opened, root) for root in real):
        raise outside
    return os.path.normpath(cwd)


class ClientBackend:
    """A :class:`~sysprompt_client.mcp.backend.Backend` over ``client``; ``cwd`` is
    the working directory of a call that names none (``SYSPROMPT_CWD``), ``roots`` the
    directories a call's ``cwd`` must lie in (default: ``cwd`` alone). The client
    should be made with the same ``allowed_roots``, so values are read there only."""

    def __init__(self, client: Client, *, cwd: str, roots: Sequence[str] | None = None) -> None:
        self.client = client
        self.cwd = os.path.abspath(cwd)
        self.roots = (self.cwd,) if not roots else tuple(os.path.abspath(r) for r in roots)
        self._permissions: frozenset[str] | None = None

    def _cwd(self, cwd: str | None) -> str | None:
        return None if cwd is None else cwd_inside(cwd, self.roots)

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
        checked = self._cwd(cwd) or self.cwd
        return self.client.system_prompt(
            conversation_id,
            cwd=checked,
            model=model,
            provider=provider,
            label=label,
            prompt=prompt,
        )

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
        """A compaction: what the call leaves out is the conversation's frozen context
        (the server keeps it; the client resolves the host's values there); a
        conversation the server stores no prompt of (never asked, or a fallback) is
        built for ``SYSPROMPT_CWD``."""
        checked = self._cwd(cwd)
        if (
            checked is None
            and self.client.frozen(conversation_id, label=label, prompt=prompt) is None
        ):
            checked = self.cwd
        return self.client.compact(
            conversation_id,
            cwd=checked,
            model=model,
            provider=provider,
            label=label,
            prompt=prompt,
        )

    def named_prompts(self) -> Sequence[PromptSummary] | None:
        """The named prompts the server lists to this token (``GET /api/prompts``: for an
        agent host, those it may use; the first :data:`PROMPTS_LISTED`); ``None`` from a
        server without the list or one that does not show it to this token."""
        try:
            items = self.client.prompts(limit=PROMPTS_LISTED)
        except (NotFound, Forbidden):
            return None
        summaries = []
        for item in items:
            name = item.get("name")
            if isinstance(name, str):
                tags = item.get("tags")
                summaries.append(
                    PromptSummary(
                        name=name,
                        description=_str(item.get("description")) or "",
                        tags=tuple(t for t in tags if isinstance(t, str))
                        if isinstance(tags, list)
                        else (),
                    )
                )
        return summaries

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

    def permissions(self) -> frozenset[str]:
        """What the token may do, as the server says it (``GET /api/me``), asked once
        and kept for the life of the command; none from a server without the endpoint."""
        if self._permissions is None:
            try:
                self._permissions = self.client.me().permissions
            except NotFound:
                self._permissions = frozenset()
        return self._permissions

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
