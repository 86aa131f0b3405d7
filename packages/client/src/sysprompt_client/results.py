"""What the client answers: immutable values, shared as they are (never copied)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

__all__ = ["CompactResult", "PromptResult", "Template"]


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
    ``is_fallback``: the server could not be asked and this is the configured fallback.
    ``from_cache``: answered by the client's cache without a request.
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


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactResult:
    """The answer of a compaction: ``compaction_prompt`` is the system prompt for the
    compaction turn itself (the fresh prompt followed by the server's compaction
    instructions); ``prompt`` is the new frozen prompt, which later turns answer."""

    compaction_prompt: str | None
    prompt: PromptResult


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
    )


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
