"""The example receiver of docs/events.md (``examples/webhook_receiver.py``, the same
code the page shows) runs as its own process: it accepts the worker's signed events,
once each although a retry repeats one, and refuses a request signed with another
secret."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.conf import app_settings
from sysprompt.events import services, signing
from sysprompt.events.models import Event
from sysprompt.events.sending import post
from sysprompt.library import services as library
from tests.client.served import free_port
from tests.events.support import ALLOW_LOCAL, run_queued
from tests.events.workers import REPO

EXAMPLE = REPO / "examples" / "webhook_receiver.py"


def test_docs_show_the_example_as_it_is() -> None:
    page = (REPO / "docs" / "events.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)

    assert EXAMPLE.read_text() in blocks


class Running:
    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}/hooks"

    def lines(self, count: int, timeout: float = 20) -> list[str]:
        assert self.process.stdout is not None
        found: list[str] = []
        deadline = time.monotonic() + timeout
        while len(found) < count and time.monotonic() < deadline:
            found.append(self.process.stdout.readline().strip())
        return found


@pytest.fixture
def receiver(author: User, settings: Settings, tmp_path: Path) -> Iterator[tuple[Running, str]]:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)
    created = services.webhook_create(
        url="http://127.0.0.1:1/", events=["fragment.saved"], author=author
    )
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), str(port)],
        env={"SYSPROMPT_WEBHOOK_SECRET": created.secret, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    running = Running(process, port)
    assert running.lines(1) == [f"listening on http://127.0.0.1:{port}/"]
    services.webhook_update(webhook_id=created.webhook.id, url=running.url, author=author)
    yield running, created.secret
    process.terminate()
    process.wait(timeout=10)
    if process.stdout is not None:
        process.stdout.close()


def test_example_receiver_prints_each_event_once_and_refuses_a_forgery(
    author: User, receiver: tuple[Running, str]
) -> None:
    running, secret = receiver
    library.variant_save(name="core", text="Core.", author=author)
    run_queued()
    [line] = running.lines(1)
    said, data = line.split(": ", 1)
    assert said == "fragment.saved by author"
    assert json.loads(data)["name"] == "core"

    event = Event.objects.get(type="fragment.saved")
    content = signing.body({"type": "fragment.saved", "timestamp": "x", "data": {}})
    again = signing.signed_headers(secret=secret, message_id=event.message_id, content=content)
    forged = signing.signed_headers(
        secret=signing.secret_new(), message_id="msg_forged", content=content
    )
    conf = app_settings()
    assert post(url=running.url, content=content, headers=again, conf=conf).status_code == 204
    assert post(url=running.url, content=content, headers=forged, conf=conf).status_code == 401
    assert running.lines(1) == ["refused: No matching signature found"]  # the retry: silent
