"""The worker's batches: a change writes its event and no task; the worker fans it out
to each subscription (its own delivery and log, the event's webhook-id), sends many
events in chunks on kept connections and in order, and a kept connection never outlives the allow
list it was checked against."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django_tasks_db.models import DBTaskResult
from pytest_django import Settings

from sysprompt.events import services
from sysprompt.events.delivery import CHUNK
from sysprompt.events.models import Attempt, Delivery, Event
from sysprompt.events.sending import UNREACHED
from sysprompt.prompts.services import template_save
from tests.events.support import ALLOW_LOCAL, receiving, run_queued


@pytest.fixture(autouse=True)
def allow_local(settings: Settings) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)


def test_one_event_fans_out_to_each_subscription_with_its_own_log(author: User) -> None:
    with receiving() as first, receiving() as second, receiving() as third:
        receivers = [first, second, third]
        webhooks = []
        for receiver in receivers:
            created = services.webhook_create(
                url=receiver.url, events=["template.saved"], author=author
            )
            receiver.secret = created.secret
            webhooks.append(created.webhook.id)

        template_save(text="one", author=author)
        assert not DBTaskResult.objects.exists()  # the outbox row is the queue entry
        run_queued()

        items = [receiver.wait_for(1)[0] for receiver in receivers]
    event = Event.objects.get()
    assert all(item.verified is not None for item in items)
    assert {item.message_id for item in items} == {event.message_id}
    deliveries = list(Delivery.objects.order_by("webhook_id"))
    assert [d.webhook_id for d in deliveries] == sorted(webhooks)
    assert all(d.state == "delivered" and d.attempts == 1 for d in deliveries)
    for delivery in deliveries:
        [attempt] = Attempt.objects.filter(delivery=delivery)
        assert (attempt.webhook_id, attempt.number, attempt.status_code) == (
            delivery.webhook_id,
            1,
            200,
        )


def test_batch_sends_every_event_once_in_order_over_kept_connections(author: User) -> None:
    count = 2 * CHUNK + 3  # more than one chunk
    with receiving() as receiver:
        receiver.secret = services.webhook_create(
            url=receiver.url, events=["template.saved"], author=author
        ).secret
        for n in range(count):
            template_save(text=f"version {n}", author=author)
        run_queued()
        received = receiver.wait_for(count)

    versions = [item.verified["data"]["version"] for item in received if item.verified]
    assert versions == list(range(1, count + 1))  # once each, in the order of the saves
    assert Attempt.objects.count() == count
    assert not Delivery.objects.exclude(state="delivered").exists()
    connections = {item.client for item in received}
    assert len(connections) <= CHUNK < count  # kept, not one per delivery


def test_kept_connection_is_dropped_when_the_allow_list_changes(
    author: User, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SYSPROMPT = {**ALLOW_LOCAL, "WEBHOOK_ALLOW_PRIVATE": ["localhost"]}
    with receiving() as receiver:
        receiver.secret = services.webhook_create(
            url=f"http://localhost:{receiver.port}/hooks",
            events=["template.saved"],
            author=author,
        ).secret
        template_save(text="one", author=author)
        run_queued()
        receiver.wait_for(1)

        settings.SYSPROMPT = {**ALLOW_LOCAL, "WEBHOOK_ALLOW_PRIVATE": []}
        template_save(text="two", author=author)
        run_queued()

        assert len(receiver.received) == 1
    last = Attempt.objects.order_by("-id").first()
    assert last is not None and last.status_code is None
    assert last.error == UNREACHED  # the author's one sentence; the operator's log says why
    assert "Refused: localhost resolves to 127.0.0.1" in caplog.text and "loopback" in caplog.text
