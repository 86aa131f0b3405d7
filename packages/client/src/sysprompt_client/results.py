"""What the client answers: immutable values, shared as they are (never copied)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

__all__ = ["Caller", "CompactResult", "PromptResult", "Template"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptResult:
    """A conversation's frozen system prompt.

    ``text`` is the prompt (``None``: send no system prompt), ``sha256`` the hex SHA-256
    of its UTF-8 bytes (``None`` with ``text``). ``template_version`` and
    ``constructed_at`` say what it was built from and when (``None`` for a fallback).
    ``shared_prefix_chars`` is how many leading characters every conversation of this
    host, provider and model shares (``None`` when the server does not say).
    ``label``, ``release`` and ``arm`` say what the server built it from: the label, the
    release that label served (``None``: latest, the working copy) and the arm of its
    split (``None``: no split); all ``None`` for a fallback or a server without labels.
    ``prompt`` is the named prompt the conversation is frozen from, as the server names
    it (``None``: a server without named prompts); for a fallback, the prompt asked for.
    ``is_fallback``: the server could not be asked and this is the configured fallback.
    ``from_cache``: answered by the client's cache without a request.

    ``cwd``, ``model`` and ``provider`` are the context the prompt was built for (the
    conversation's frozen context; ``None`` for a fallback or a server that does not
    say). ``context_mismatch`` names those of them this turn's arguments differ from
    (``("cwd",)``, ``("model", "provider")``…; a ``model`` or ``provider`` not given is
    no difference): the turn still gets the frozen prompt, as it must; ``construct`` or
    ``compact`` rebuilds it for the new context. The client logs one warning per
    conversation when it happens.
    """

    text: str | None
    sha256: str | None = None
    template_version: int | None = None
    constructed_at: datetime | None = None
    shared_prefix_chars: int | None = None
    is_fallback: bool = False
    from_cache: bool = False
    conversation_id: str | None = None
    label: str | None = None
    release: int | None = None
    arm: int | None = None
    cwd: str | None = None
    model: str | None = None
    provider: str | None = None
    context_mismatch: tuple[str, ...] = ()
    prompt: str | None = None


CONTEXT_FIELDS = ("cwd", "model", "provider")
"""The frozen context a turn is compared with, in the order ``context_mismatch`` lists."""


def context_mismatch(
    result: PromptResult, *, cwd: str, model: str | None, provider: str | None
) -> tuple[str, ...]:
    """Which of ``cwd``, ``model`` and ``provider`` differ from the context ``result``
    was built for, as the server compares them (``cwd`` normalised; ``None``: not
    given, no difference; a result that does not say its context: none)."""
    if result.cwd is None:
        return ()
    differs = []
    if cwd != result.cwd and os.path.normpath(cwd) != result.cwd:
        differs.append("cwd")
    if model is not None and result.model is not None and model != result.model:
        differs.append("model")
    if provider is not None and result.provider is not None and provider != result.provider:
        differs.append("provider")
    return tuple(differs)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactResult:
    """The answer of a compaction: ``compaction_prompt`` is the system prompt for the
    compaction turn itself (the fresh prompt followed by the server's compaction
    instructions); ``prompt`` is the new frozen prompt, which later turns answer.
    ``context_kept`` names the fields of the frozen context the call left out and the
    server kept (``("model", "provider", …)``, from ``cwd``, ``model``, ``provider``,
    ``tools``, ``variables``, ``override``)."""

    compaction_prompt: str | None
    prompt: PromptResult
    context_kept: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Caller:
    """Who the client's token is (``GET /api/me``): ``permissions`` names what it may
    do beyond resolving its conversations and reading the template and the library
    (``template``, ``library``, ``releases``, ``publish``, ``evaluations``)."""

    username: str
    agent_host: bool
    permissions: frozenset[str]


def caller_from_json(data: Any) -> Caller:
    """A :class:`Caller` from ``GET /api/me``'s answer; ``ValueError`` when the answer
    does not have that shape."""
    if not isinstance(data, dict) or not isinstance(data.get("username"), str):
        raise ValueError("the answer has no 'username'")
    given = data.get("permissions")
    if not isinstance(given, dict):
        raise ValueError("the answer has no 'permissions' object")
    return Caller(
        username=data["username"],
        agent_host=data.get("agent_host") is True,
        permissions=frozenset(name for name, may in given.items() if may is True),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Template:
    """The global template: ``version`` 0 and ``is_default`` for the built-in default;
    ``etag`` is what ``save_template(if_match=...)`` takes to refuse a lost update;
    ``compress``: the source is compressed before it is parsed."""

    text: str
    version: int
    updated_at: datetime | None
    is_default: bool
    etag: str | None
    compress: bool = False


def template_from_response(data: Any, etag: str | None) -> Template:
    if not isinstance(data, dict) or not isinstance(data.get("template"), str):
        raise ValueError("the answer has no 'template'")
    return Template(
        text=data["template"],
        version=_int(data.get("version")) or 0,
        updated_at=_datetime(data.get("updated_at")),
        is_default=data.get("is_default") is True,
        etag=etag,
        compress=data.get("compress") is True,
    )


def text_sha256(text: str | None) -> str | None:
    """The hex SHA-256 of ``text``'s UTF-8 bytes, ``None`` for ``None``."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _datetime(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def prompt_from_json(
    data: Any,
    conversation_id: str,
    *,
    text_key: str = "system_prompt",
    from_cache: bool = False,
) -> PromptResult:
    """A :class:`PromptResult` from a prompt answer of the API; ``ValueError`` when the
    answer does not have that shape."""
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    text = data.get(text_key)
    sha = data.get("sha256")
    if not (text is None or isinstance(text, str)) or not (sha is None or isinstance(sha, str)):
        raise ValueError(f"the answer has no valid {text_key!r} and 'sha256'")
    return PromptResult(
        text=text,
        sha256=sha,
        template_version=_int(data.get("template_version")),
        constructed_at=_datetime(data.get("constructed_at")),
        shared_prefix_chars=_int(data.get("shared_prefix_chars")),
        from_cache=from_cache,
        conversation_id=conversation_id,
        label=label if isinstance(label := data.get("label"), str) else None,
        release=_int(data.get("release")),
        arm=_int(data.get("arm")),
        cwd=_str(data.get("cwd")),
        model=_str(data.get("model")),
        provider=_str(data.get("provider")),
        context_mismatch=_names(data.get("context_mismatch")),
        prompt=_str(data.get("prompt")),
    )


KEPT_FIELDS = ("cwd", "model", "provider", "tools", "variables", "override")
"""The frozen context a compaction keeps for each field it does not give."""


def kept_from_json(data: Any) -> tuple[str, ...]:
    """The ``context_kept`` of a construct or compact answer (empty when it does not say)."""
    value = data.get("context_kept") if isinstance(data, dict) else None
    if not isinstance(value, list):
        return ()
    return tuple(name for name in KEPT_FIELDS if name in value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(name for name in CONTEXT_FIELDS if name in value)


def prompt_to_json(result: PromptResult) -> dict[str, Any]:
    """What the directory cache stores of a result (``from_cache`` is not stored)."""
    return {
        "conversation_id": result.conversation_id,
        "text": result.text,
        "sha256": result.sha256,
        "template_version": result.template_version,
        "constructed_at": (
            None if result.constructed_at is None else result.constructed_at.isoformat()
        ),
        "shared_prefix_chars": result.shared_prefix_chars,
        "is_fallback": result.is_fallback,
        "label": result.label,
        "release": result.release,
        "arm": result.arm,
        "cwd": result.cwd,
        "model": result.model,
        "provider": result.provider,
        "prompt": result.prompt,
    }


def prompt_from_stored(data: Any) -> PromptResult:
    """The inverse of :func:`prompt_to_json`, as answered from the cache; ``ValueError``
    when the data is not such an entry or its ``sha256`` does not match its text."""
    if not isinstance(data, dict):
        raise ValueError("not an object")
    cid = data.get("conversation_id")
    if not isinstance(cid, str):
        raise ValueError("no conversation id")
    result = prompt_from_json(data, cid, text_key="text", from_cache=True)
    if text_sha256(result.text) != result.sha256:
        raise ValueError("the text does not match its sha256")
    if data.get("is_fallback") is True:
        result = replace(result, is_fallback=True)
    return result
