"""Retries: at least once, the same ``webhook-id`` on every attempt, exponential backoff
over the retry window, and a subscription that keeps failing paused with its reason."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.events import services
from sysprompt.events.delivery import retry_delay
from sysprompt.events.models import Attempt, AuditRecord, Delivery, Webhook
from sysprompt.prompts.services import template_save
from tests.events.support import (
    ALLOW_LOCAL,
    Received,
    receiving,
    run_queued,
    run_until_settled,
)


@pytest.fixture(autouse=True)
def fast_retries(settings: Settings) -> None:
    settings.SYSPROMPT = {**ALLOW_LOCAL, "WEBHOOK_RETRY_WINDOW": 0.3}


def failing(times: int, status: int = 500):  # type: ignore[no-untyped-def]
    calls = {"n": 0}

    def respond(received: Received) -> tuple[int, dict[str, str], bytes]:
        calls["n"] += 1
        return (status, {}, b"down") if calls["n"] <= times else (204, {}, b"")

    return respond


def test_retry_delays_double_and_fill_the_window() -> None:
    day = 86_400.0
    delays = [retry_delay(k, day) for k in range(1, 13)]

    assert round(delays[0].total_seconds(), 1) == 21.1
    ratios = [later / earlier for earlier, later in zip(delays, delays[1:], strict=False)]
    assert all(abs(ratio - 2) < 1e-6 for ratio in ratios)
    assert round(delays[-1] / timedelta(hours=1), 2) == 12.0
    assert abs(sum(delays, timedelta()).total_seconds() - day) < 1e-3


def test_failing_twice_then_delivered_with_the_same_webhook_id(author: User) -> None:
    with receiving(failing(2)) as receiver:
        receiver.secret = services.webhook_create(
            url=receiver.url, events=["template.saved"], author=author
        ).secret
        template_save(text="x", author=author)

        run_until_settled()
        received = receiver.wait_for(3)

    assert len({item.message_id for item in received}) == 1
    assert all(item.verified is not None for item in received)  # each signed afresh
    assert len({item.body for item in received}) == 1
    log = list(Attempt.objects.order_by("number").values_list("number", "status_code"))
    assert log == [(1, 500), (2, 500), (3, 204)]
    assert Delivery.objects.get().state == "delivered"
    assert Webhook.objects.get().active


def test_failing_every_attempt_gives_up_and_pauses(author: User) -> None:
    with receiving(failing(99)) as receiver:
        webhook = services.webhook_create(
            url=receiver.url, events=["template.saved"], author=author
        ).webhook
        template_save(text="x", author=author)

        run_until_settled()

    assert len(receiver.received) == 13
    delivery = Delivery.objects.get()
    assert (delivery.state, delivery.attempts) == ("failed", 13)
    paused = Webhook.objects.get(pk=webhook.id)
    assert not paused.active
    assert "failed all 13 attempts" in paused.paused_reason
    assert "the answer was 500" in paused.paused_reason
    assert AuditRecord.objects.filter(action="webhook.paused", actor="").count() == 1


def test_gone_pauses_at_once_and_resume_sends_what_waited(author: User) -> None:
    with receiving(failing(1, status=410)) as receiver:
        webhook = services.webhook_create(
            url=receiver.url, events=["template.saved"], author=author
        ).webhook
        template_save(text="first", author=author)
        run_until_settled()
        template_save(text="while paused", author=author)  # not sent to a paused one
        run_until_settled()

        assert len(receiver.received) == 1
        assert "410 Gone" in Webhook.objects.get(pk=webhook.id).paused_reason
        assert Delivery.objects.get().state == "pending"

        services.webhook_update(webhook_id=webhook.id, active=True, author=author)
        run_until_settled()
        received = receiver.wait_for(2)

    assert received[0].message_id == received[1].message_id
    state = Webhook.objects.get(pk=webhook.id)
    assert (state.active, state.paused_reason) == (True, "")
    assert AuditRecord.objects.filter(action="webhook.updated").last() is not None


def test_ping_is_one_attempt_and_never_pauses(author: User) -> None:
    with receiving(failing(99)) as receiver:
        webhook = services.webhook_create(
            url=receiver.url, events=["template.saved"], author=author
        ).webhook
        services.webhook_update(webhook_id=webhook.id, active=False, author=author)

        services.webhook_test(webhook_id=webhook.id, author=author)  # switched off: sent anyway
        run_queued()

    assert len(receiver.received) == 1
    assert Delivery.objects.get().state == "failed"
    assert Webhook.objects.get(pk=webhook.id).paused_reason == ""
