"""Services: every write of the events app, and the one other apps call.

* :func:`event_record` — called by every other app's services inside the transaction of
  their change: the audit record, and when the change is a webhook event type, the
  event in the outbox naming each active subscription that wants it — the worker fans
  it out into deliveries and sends them (``queue.event_enqueue``). A change that rolls
  back writes and sends nothing; one that commits has its deliveries, whatever happens next.
* :func:`webhook_create`, :func:`webhook_update`, :func:`webhook_delete`,
  :func:`webhook_test` — subscriptions, each audited; the secret is made here and
  returned once, by :func:`webhook_create`.

Keyword-only, typed, atomic (joining the caller's transaction).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.utils import timezone

from sysprompt.errors import InvalidInput, WebhookNotFound
from sysprompt.events import queue, signing
from sysprompt.events.catalog import (
    ACTION_MAX_LENGTH,
    AUDIT_OBJECT_MAX_LENGTH,
    AUDIT_SUMMARY_MAX_LENGTH,
    PENDING,
    PING,
)
from sysprompt.events.models import AuditRecord, Delivery, Event, Webhook
from sysprompt.events.selectors import WebhookState, webhook_id_valid, webhook_state
from sysprompt.events.validation import (
    webhook_events_valid,
    webhook_prompts_valid,
    webhook_url_valid,
)
from sysprompt_core.prompt_names import in_folder

Actor = AbstractBaseUser | AnonymousUser | None


def event_record(
    *,
    actor: Actor,
    action: str,
    object: str,
    summary: str,
    event_type: str | None = None,
    data: Mapping[str, Any] | None = None,
    text: Mapping[str, Any] | None = None,
    prompt: str = "",
) -> None:
    """Record a change in the audit log and, for a webhook ``event_type``, enqueue it.

    ``actor`` made the change (``None``: the system, e.g. the installer or a command);
    ``action`` names it (``fragment.deleted``), ``object`` what it changed (``fragment
    core (default variant)``), ``summary`` says it in one line — never a secret or a
    token. The event's payload data is ``{"actor": <user name or null>, **data}``;
    ``text`` holds the fields (prompt text) added only for subscriptions that include
    text. ``prompt``: the name of the prompt the change concerns (``""``: none, a
    deployment-wide change such as a fragment's): kept with the record, put in the
    event's data as ``"prompt"``, and the event goes only to subscriptions whose
    ``prompts`` match it (:func:`webhook_wants`). Joins the caller's transaction (no
    savepoint of its own).
    """
    now = timezone.now()
    actor_id, actor_name = _actor(actor)
    with transaction.atomic(savepoint=False):
        AuditRecord.objects.create(
            at=now,
            actor_id=actor_id,
            actor=actor_name,
            action=action[:ACTION_MAX_LENGTH],
            object=_one_line(object, AUDIT_OBJECT_MAX_LENGTH),
            summary=_one_line(summary, AUDIT_SUMMARY_MAX_LENGTH),
            prompt=prompt,
        )
        if event_type is None:
            return
        wanting = [
            webhook_id
            for webhook_id, events, prompts in Webhook.objects.filter(active=True).values_list(
                "id", "events", "prompts"
            )
            if event_type in events and webhook_wants(prompts, prompt)
        ]
        if wanting:
            named = {"prompt": prompt} if prompt else {}
            _event_enqueue(
                type=event_type,
                data={"actor": actor_name or None, **named, **(data or {})},
                text=text,
                webhook_ids=wanting,
                now=now,
            )


def webhook_wants(prompts: object, prompt: str) -> bool:
    """Whether a subscription filtered on ``prompts`` (names, or folders ending in
    ``/``; empty: all) receives an event of ``prompt`` (``""``: an event of no prompt,
    which every subscription receives)."""
    if not prompt or not prompts or not isinstance(prompts, list):
        return True
    return any(
        isinstance(wanted, str)
        and (prompt == wanted or (wanted.endswith("/") and in_folder(prompt, wanted)))
        for wanted in prompts
    )


def _event_enqueue(
    *,
    type: str,
    data: Mapping[str, Any],
    text: Mapping[str, Any] | None,
    webhook_ids: list[int],
    now: datetime,
) -> Event:
    event = Event.objects.create(
        message_id=signing.message_id_new(),
        type=type,
        data=dict(data),
        text=dict(text) if text else None,
        webhook_ids=webhook_ids,
        created_at=now,
    )
    queue.event_enqueue(event_id=event.pk)
    return event


def _actor(actor: Actor) -> tuple[int | None, str]:
    if actor is None or not actor.is_authenticated:
        return None, ""
    return int(actor.pk), actor.get_username()


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def origin(url: str) -> str:
    """``https://host[:port]`` of a webhook URL: what the audit log says of it (a path or
    query may hold a receiver's token)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


# --- subscriptions ------------------------------------------------------------------------


@dataclass(frozen=True)
class WebhookCreated:
    """A new subscription, and its secret: the only time anything shows the secret."""

    webhook: WebhookState
    secret: str


@transaction.atomic
def webhook_create(
    *,
    url: str,
    events: list[str],
    include_text: bool = False,
    active: bool = True,
    prompts: object = None,
    author: Actor,
) -> WebhookCreated:
    """A new subscription with a fresh secret. ``InvalidInput`` names ``url`` or
    ``events`` when they are refused (see ``validation``)."""
    checked_url = webhook_url_valid(url)
    checked_events = webhook_events_valid(events)
    checked_prompts = webhook_prompts_valid([] if prompts is None else prompts)
    now = timezone.now()
    secret = signing.secret_new()
    actor_id, _ = _actor(author)
    webhook = Webhook.objects.create(
        url=checked_url,
        events=checked_events,
        prompts=checked_prompts,
        include_text=_flag("include_text", include_text),
        active=_flag("active", active),
        secret=secret,
        created_by_id=actor_id,
        created_at=now,
        updated_at=now,
    )
    event_record(
        actor=author,
        action="webhook.created",
        object=f"webhook {webhook.pk}",
        summary=(
            f"created webhook {webhook.pk} to {origin(checked_url)} for "
            f"{', '.join(checked_events)}{' with prompt text' if webhook.include_text else ''}"
            f"{_prompts_said(checked_prompts)}"
        ),
    )
    return WebhookCreated(webhook=webhook_state(webhook), secret=secret)


@transaction.atomic
def webhook_update(
    *,
    webhook_id: int,
    url: str | None = None,
    events: list[str] | None = None,
    include_text: bool | None = None,
    active: bool | None = None,
    prompts: object = None,
    author: Actor,
) -> WebhookState:
    """Change what is given (``None``: kept). Making a paused or switched-off
    subscription active again clears the pause and sends its pending deliveries now,
    each with a fresh series of retries."""
    webhook = _locked(webhook_id)
    now = timezone.now()
    changes: list[str] = []
    if url is not None and (checked := webhook_url_valid(url)) != webhook.url:
        webhook.url = checked
        changes.append(f"URL to {origin(checked)}")
    if events is not None and (wanted := webhook_events_valid(events)) != webhook.events:
        webhook.events = wanted
        changes.append(f"events to {', '.join(wanted)}")
    if prompts is not None and (chosen := webhook_prompts_valid(prompts)) != webhook.prompts:
        webhook.prompts = chosen
        changes.append("prompts to " + (", ".join(chosen) or "all"))
    if include_text is not None and _flag("include_text", include_text) != webhook.include_text:
        webhook.include_text = include_text
        changes.append("prompt text " + ("included" if include_text else "left out"))
    resumed = False
    if active is not None and _flag("active", active) != webhook.active:
        if active:
            changes.append("resumed" if webhook.paused_reason else "switched on")
        else:
            changes.append("switched off")
        webhook.active = resumed = active
        webhook.paused_reason, webhook.paused_at = "", None
    if not changes:
        return webhook_state(webhook)
    webhook.updated_at = now
    webhook.save()
    if resumed:
        _held_send(webhook.pk, now)
    event_record(
        actor=author,
        action="webhook.updated",
        object=f"webhook {webhook.pk}",
        summary=f"changed webhook {webhook.pk}: {'; '.join(changes)}",
    )
    return webhook_state(webhook)


def _prompts_said(prompts: list[str]) -> str:
    return f" of prompts {', '.join(prompts)}" if prompts else ""


def _held_send(webhook_id: int, now: datetime) -> None:
    held = Delivery.objects.filter(webhook_id=webhook_id, state=PENDING)
    ids = list(held.order_by("pk").values_list("pk", flat=True))
    held.update(next_attempt_at=now, failures=0)
    for start in range(0, len(ids), 50):
        queue.send_soon(delivery_ids=ids[start : start + 50])


@transaction.atomic
def webhook_delete(*, webhook_id: int, author: Actor) -> None:
    """Delete the subscription with its pending deliveries and its delivery log."""
    webhook = _locked(webhook_id)
    where = origin(webhook.url)
    webhook.delete()
    event_record(
        actor=author,
        action="webhook.deleted",
        object=f"webhook {webhook_id}",
        summary=f"deleted webhook {webhook_id} to {where}",
    )


@transaction.atomic
def webhook_test(*, webhook_id: int, author: Actor) -> str:
    """Enqueue a ``ping`` to this subscription alone (whatever its state: one attempt,
    never retried, never pausing it); its ``webhook-id``."""
    webhook = _locked(webhook_id)
    _, name = _actor(author)
    event = _event_enqueue(
        type=PING,
        data={
            "actor": name or None,
            "webhook": webhook.pk,
            "message": "A test event from sysprompt: the signature checks out if you read this.",
        },
        text=None,
        webhook_ids=[webhook.pk],
        now=timezone.now(),
    )
    return event.message_id


def _locked(webhook_id: int) -> Webhook:
    webhook = Webhook.objects.select_for_update().filter(pk=webhook_id_valid(webhook_id)).first()
    if webhook is None:
        raise WebhookNotFound(webhook_id)
    return webhook


def _flag(field: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(field, f"{field} is true or false, not {value!r}.")
    return value
