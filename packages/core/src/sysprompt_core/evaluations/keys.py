"""The response cache's key: one sha256 over everything that decides a model's answer.

A cached answer is reused only for exactly the same call::

    sha256(canonical JSON of [endpoint, model, params, messages, tools, repetition])

(with the structured output's schema appended when the call asks for one, a judge's).

Canonical JSON sorts keys, has no insignificant whitespace and keeps non-ASCII text as
it is, so equal inputs give equal keys on every machine. The repetition index is part of
the key: ``repeat: 3`` asks for three answers, and a cached run gives back the same three.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

__all__ = ["canonical_json", "response_key"]


def canonical_json(value: object) -> str:
    """``value`` as canonical JSON text (sorted keys, compact, UTF-8 kept)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def response_key(
    *,
    endpoint: str,
    model: str,
    params: Mapping[str, object],
    messages: Sequence[Mapping[str, object]],
    tools: Sequence[Mapping[str, object]],
    repetition: int,
    output_schema: Mapping[str, object] | None = None,
) -> str:
    """The hex sha256 that names one model call's answer in the response cache."""
    parts: list[object] = [endpoint, model, dict(params), list(messages), list(tools), repetition]
    if output_schema is not None:
        parts.append(dict(output_schema))
    payload = canonical_json(parts)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()
