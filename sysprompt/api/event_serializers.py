"""Serializers of the events' endpoints: webhook subscriptions, their delivery log, the
test event and the audit log.

Input serializers check the shape; ``sysprompt.events.validation`` checks the URL and
the event types and names the field in its 400.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from sysprompt.api.serializers import JsonValueField, StrictBooleanField, StrictCharField
from sysprompt.events.catalog import ACTION_MAX_LENGTH, EVENT_TYPES, SENT_TYPES, URL_MAX_LENGTH
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH

EVENTS_HELP = f"Event types among {', '.join(EVENT_TYPES)}; at least one."


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "enum": list(EVENT_TYPES)},
        "minItems": 1,
        "uniqueItems": True,
    }
)
class EventsField(JsonValueField):
    """The event types, checked by ``sysprompt.events.validation`` (400 naming events)."""


def _events_field(**kwargs: Any) -> EventsField:
    return EventsField(help_text=EVENTS_HELP, **kwargs)


PROMPTS_HELP = (
    'Prompt names or folders ending in "/" (support/triage, support/) whose events it '
    "receives; [] (the default): every prompt's. Events of no prompt (a fragment's, a "
    "host's) go to every subscription."
)


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "maxLength": PROMPT_NAME_MAX_LENGTH + 1},
        "uniqueItems": True,
    }
)
class PromptsField(JsonValueField):
    """The prompts' names or folders, checked by ``sysprompt.events.validation`` (400
    naming prompts)."""


@extend_schema_serializer(component_name="WebhookInput")
class WebhookInputSerializer(serializers.Serializer[Any]):
    url = StrictCharField(
        max_length=URL_MAX_LENGTH,
        help_text="The receiver: https (http only for hosts the operator allows), a public "
        "address unless the operator allows a private one.",
    )
    events = _events_field()
    prompts = PromptsField(required=False, help_text=PROMPTS_HELP)
    include_text = StrictBooleanField(
        required=False, help_text="Payloads carry prompt text. Left out: false."
    )
    active = StrictBooleanField(required=False, help_text="Left out: true.")


@extend_schema_serializer(component_name="WebhookUpdateInput")
class WebhookUpdateInputSerializer(serializers.Serializer[Any]):
    """Every field optional: what is left out keeps its value."""

    url = StrictCharField(max_length=URL_MAX_LENGTH, required=False)
    events = _events_field(required=False)
    prompts = PromptsField(required=False, help_text=PROMPTS_HELP)
    include_text = StrictBooleanField(required=False)
    active = StrictBooleanField(
        required=False,
        help_text="true resumes a paused subscription and sends what waited for it.",
    )


@extend_schema_serializer(component_name="Webhook")
class WebhookOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField(), help_text=EVENTS_HELP)
    prompts = serializers.ListField(child=serializers.CharField(), help_text=PROMPTS_HELP)
    include_text = serializers.BooleanField()
    active = serializers.BooleanField()
    paused_reason = serializers.CharField(
        allow_blank=True, help_text="Why the worker paused it; empty unless it did."
    )
    paused_at = serializers.DateTimeField(allow_null=True)
    pending = serializers.IntegerField(help_text="Deliveries waiting to be sent.")
    last_attempt_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="WebhookCreated")
class WebhookCreatedOutputSerializer(WebhookOutputSerializer):
    secret = serializers.CharField(
        help_text="The signing secret (whsec_…): shown in this answer only, never again."
    )


@extend_schema_serializer(component_name="WebhookDelivery")
class AttemptOutputSerializer(serializers.Serializer[Any]):
    event_id = serializers.CharField(
        source="delivery.event.message_id", help_text="The webhook-id header it was sent with."
    )
    type = serializers.ChoiceField(source="delivery.event.type", choices=list(SENT_TYPES))
    attempt = serializers.IntegerField(source="number")
    status_code = serializers.IntegerField(allow_null=True, help_text="Null when none came.")
    error = serializers.CharField(allow_blank=True, help_text="Why no answer came; or empty.")
    response = serializers.CharField(
        allow_blank=True, help_text="The start of the answer (at most 1,000 characters)."
    )
    at = serializers.DateTimeField()
    duration_ms = serializers.IntegerField()


@extend_schema_serializer(component_name="WebhookDeliveryPage")
class AttemptPageOutputSerializer(serializers.Serializer[Any]):
    """One page of ``GET /api/webhooks/{id}/deliveries`` (cursor pagination)."""

    next = serializers.URLField(allow_null=True, help_text="The next page; null on the last.")
    previous = serializers.URLField(
        allow_null=True, help_text="The previous page; null on the first."
    )
    results = AttemptOutputSerializer(many=True)


@extend_schema_serializer(component_name="WebhookTest")
class WebhookTestOutputSerializer(serializers.Serializer[Any]):
    event_id = serializers.CharField(help_text="The ping's webhook-id.")


class AuditQuerySerializer(serializers.Serializer[Any]):
    actor = StrictCharField(required=False, allow_blank=True, max_length=150)
    action = StrictCharField(required=False, allow_blank=True, max_length=ACTION_MAX_LENGTH)
    prompt = StrictCharField(required=False, allow_blank=True, max_length=PROMPT_NAME_MAX_LENGTH)


@extend_schema_serializer(component_name="AuditRecord")
class AuditRecordOutputSerializer(serializers.Serializer[Any]):
    at = serializers.DateTimeField()
    actor = serializers.SerializerMethodField(help_text="The user name; null: the system.")
    action = serializers.CharField()
    object = serializers.CharField()
    summary = serializers.CharField()
    prompt = serializers.SerializerMethodField(
        help_text="The name of the prompt the change concerned, as it was then; null: a "
        "deployment-wide change (a fragment, a user, a webhook)."
    )

    def get_actor(self, record: Any) -> str | None:
        return str(record.actor) or None

    def get_prompt(self, record: Any) -> str | None:
        return str(record.prompt) or None


@extend_schema_serializer(component_name="AuditPage")
class AuditPageOutputSerializer(serializers.Serializer[Any]):
    """One page of ``GET /api/audit`` (cursor pagination)."""

    next = serializers.URLField(allow_null=True, help_text="The next page; null on the last.")
    previous = serializers.URLField(
        allow_null=True, help_text="The previous page; null on the first."
    )
    results = AuditRecordOutputSerializer(many=True)
