"""A saved template reaches a real receiver, signed per Standard Webhooks: the receiver
verifies every request with the ``standardwebhooks`` library and the subscription's
secret; prompt text only for subscriptions that ask for it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from pytest_django import Settings

from sysprompt.events import services
from sysprompt.events.models import Attempt, Delivery, Event
from sysprompt.prompts.services import template_save
from tests.events.support import ALLOW_LOCAL, receiving, run_queued


@pytest.fixture(autouse=True)
def allow_local(settings: Settings) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)


def test_template_save_reaches_receiver_signed_when_subscribed(author: User) -> None:
    with receiving() as receiver:
        created = services.webhook_create(
            url=receiver.url, events=["template.saved"], author=author
        )
        receiver.secret = created.secret

        template_save(text="Hello [prompt:cwd]\n", author=author)
        run_queued()

        [item] = receiver.wait_for(1)
    assert item.error is None
    assert item.verified == {
        "type": "template.saved",
        "timestamp": item.verified["timestamp"] if item.verified else None,
        "data": {"actor": "author", "version": 1, "compress": False, "prompt": "default"},
    }
    assert item.message_id.startswith("msg_")
    assert item.headers["content-type"] == "application/json"
    assert item.path == "/hooks"
    [attempt] = Attempt.objects.all()
    assert (attempt.number, attempt.status_code, attempt.error) == (1, 200, "")
    assert Delivery.objects.get().state == "delivered"


def test_payload_carries_text_only_when_include_text(author: User) -> None:
    with receiving() as with_text, receiving() as without:
        secrets: dict[str, Any] = {}
        for receiver, include in ((with_text, True), (without, False)):
            created = services.webhook_create(
                url=receiver.url, events=["template.saved"], include_text=include, author=author
            )
            receiver.secret = secrets[receiver.url] = created.secret

        template_save(text="Secret sauce\n", author=author)
        run_queued()

        [texted] = with_text.wait_for(1)
        [plain] = without.wait_for(1)
    assert texted.verified is not None and plain.verified is not None
    assert texted.verified["data"]["text"] == "Secret sauce\n"
    assert "text" not in plain.verified["data"]
    assert b"Secret sauce" not in plain.body
    assert texted.message_id == plain.message_id  # one event, the same webhook-id


def test_signature_fails_with_another_secret(author: User) -> None:
    with receiving() as receiver:
        services.webhook_create(url=receiver.url, events=["template.saved"], author=author)
        receiver.secret = services.webhook_create(
            url=receiver.url + "/other", events=["fragment.saved"], author=author
        ).secret

        template_save(text="x", author=author)
        run_queued()

        [item] = receiver.wait_for(1)
    assert item.verified is None
    assert item.error == "No matching signature found"


def test_rolled_back_save_sends_nothing(author: User) -> None:
    with receiving() as receiver:
        services.webhook_create(url=receiver.url, events=["template.saved"], author=author)

        with pytest.raises(RuntimeError), transaction.atomic():
            template_save(text="never", author=author)
            raise RuntimeError("the change fails after the save")
        run_queued()

    assert receiver.received == []
    assert not Delivery.objects.exists() and not Event.objects.exists()
