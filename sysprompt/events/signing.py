"""Payloads and their signatures, per the Standard Webhooks specification.

event → :func:`payload` (``{"type", "timestamp", "data"}``, the data with the event's
text fields only for a subscription that includes text) → :func:`body` (compact JSON,
UTF-8; the same bytes on every attempt) → :func:`signed_headers` (``webhook-id``: the
event's message id, the same on every retry; ``webhook-timestamp``: now, so a receiver's
five-minute tolerance holds for a retry a day later; ``webhook-signature``: ``v1,`` and
the HMAC-SHA256 the ``standardwebhooks`` library makes with the subscription's secret).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from standardwebhooks import Webhook

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def secret_new() -> str:
    """A fresh signing secret: ``whsec_`` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def timestamp_text(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and ``Z``: ``2026-11-22T09:15:03.123Z``."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def payload(
    *,
    type: str,
    created_at: datetime,
    data: Mapping[str, Any],
    text: Mapping[str, Any] | None,
    include_text: bool,
) -> dict[str, Any]:
    """The event as its receiver gets it; the data's keys sorted, so the bytes are the
    same whichever database stored it (PostgreSQL's jsonb keeps no order)."""
    shown = dict(data)
    if include_text and text:
        shown.update(text)
    return {
        "type": type,
        "timestamp": timestamp_text(created_at),
        "data": dict(sorted(shown.items())),
    }


def body(content: Mapping[str, Any]) -> bytes:
    """Compact JSON in UTF-8: what is signed and sent."""
    return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def signed_headers(
    *, secret: str, message_id: str, content: bytes, now: datetime | None = None
) -> dict[str, str]:
    """The three Standard Webhooks headers for one attempt."""
    moment = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    signature = Webhook(secret).sign(message_id, moment, content.decode("utf-8"))
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signature,
    }


def message_id_new() -> str:
    """A fresh, unique ``webhook-id``: ``msg_`` and 32 hex digits."""
    return "msg_" + secrets.token_hex(16)
