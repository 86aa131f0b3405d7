"""The names the events app knows: webhook event types and delivery states.

The event types a subscription can ask for are :data:`EVENT_TYPES`; ``ping`` is sent
only by "send a test event", to one subscription. Audit actions are free-form
``<object>.<verb>`` names chosen by the service that records them (docs/events.md
lists them).
"""

from __future__ import annotations

from typing import Final

EVENT_TYPES: Final = (
    "release.created",
    "label.moved",
    "template.saved",
    "fragment.saved",
    "host.changed",
    "library.imported",
    "evaluation.finished",
)
"""Every event type a webhook subscription may ask for, in the order pages show them."""

PING: Final = "ping"
"""The test event: one attempt to one subscription, whatever its state."""
SENT_TYPES: Final = (*EVENT_TYPES, PING)
"""Every type an event sent to a receiver may have."""

PENDING: Final = "pending"
DELIVERED: Final = "delivered"
FAILED: Final = "failed"
DELIVERY_STATES: Final = (PENDING, DELIVERED, FAILED)

RETRIES: Final = 12
"""Retries after the first attempt: 13 attempts in all, spread over the retry window."""

MAX_RESPONSE_BYTES: Final = 64 * 1024
"""The most of a receiver's answer ever read."""
RESPONSE_EXCERPT_CHARS: Final = 1000
"""How much of that answer the delivery log keeps."""

URL_MAX_LENGTH: Final = 2000
AUDIT_OBJECT_MAX_LENGTH: Final = 300
AUDIT_SUMMARY_MAX_LENGTH: Final = 500
ACTION_MAX_LENGTH: Final = 64
