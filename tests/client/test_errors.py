"""Errors, fallback, timeouts and retries."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from sysprompt.accounts.services import agent_host_ensure
from sysprompt_client import (
    Client,
    InvalidRequest,
    ServerError,
    SyspromptError,
    Unauthorized,
    Unavailable,
)
from sysprompt_client._base import retry_after
from tests.client.conftest import REFERENCES, MakeClient, Server


def test_bad_cwd_is_raised_with_the_servers_message(
    server: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(fallback="never used for a 4xx")
    with pytest.raises(InvalidRequest) as raised:
        client.system_prompt("conv-e", cwd="/")
    assert raised.value.status == 400
    assert "allowed roots" in " ".join(raised.value.errors["cwd"])
    assert "allowed roots" in str(raised.value)
    assert "conv-e" not in client.cache
    # A 4xx is not retried (before it, the new client asked for the references once).
    assert counting.requests == [
        REFERENCES,
        ("POST", "/api/conversations/conv-e/system-prompt/resolve"),
    ]


def test_bad_conversation_id(server: Server, make_client: MakeClient) -> None:
    client, _ = make_client()
    with pytest.raises(InvalidRequest) as raised:
        client.system_prompt("no spaces/allowed", cwd=server.cwd)
    assert "conversation_id" in raised.value.errors


def test_unknown_token(server: Server, make_client: MakeClient) -> None:
    client, _ = make_client(token="0" * 40, fallback="not for a 401")
    with pytest.raises(Unauthorized) as raised:
        client.system_prompt("conv-t", cwd=server.cwd)
    assert raised.value.status == 401 and raised.value.message


def test_another_hosts_conversation_id_is_this_hosts_own(
    server: Server, make_client: MakeClient
) -> None:
    other = agent_host_ensure(name="other-host")

    def theirs() -> httpx.Response:
        return httpx.post(
            f"{server.url}/api/conversations/theirs/system-prompt/resolve",
            headers={"Authorization": f"Token {other.token}"},
            json={"cwd": server.cwd},
        )

    first = theirs()
    assert first.status_code == 201
    client, _ = make_client()

    mine = client.system_prompt("theirs", cwd=server.cwd)  # ids are scoped to the host

    assert mine.text == first.json()["system_prompt"]
    again = theirs()
    assert (again.status_code, again.json()) == (200, first.json())


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_unreachable_server_answers_the_fallback_and_keeps_it() -> None:
    calls: list[str] = []

    def fallback(conversation_id: str) -> str:
        calls.append(conversation_id)
        return f"Fallback for {conversation_id}, call {len(calls)}."

    url = f"http://127.0.0.1:{closed_port()}"
    with Client(url, "token", fallback=fallback, backoff=0) as client:
        first = client.system_prompt("conv-x", cwd="/tmp")
        assert first.is_fallback and not first.from_cache
        assert first.text == "Fallback for conv-x, call 1."
        assert first.template_version is None and first.constructed_at is None
        later = client.system_prompt("conv-x", cwd="/tmp")
        assert later.text == first.text and later.is_fallback and later.from_cache
        assert calls == ["conv-x"]  # kept: the bytes never change mid-conversation
    with Client(url, "token", retries=0) as client, pytest.raises(Unavailable) as raised:
        client.system_prompt("conv-x", cwd="/tmp")
    assert raised.value.status is None and "could not be reached" in str(raised.value)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A socket that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_timeout_answers_the_fallback(silent_server: str) -> None:
    client = Client(silent_server, "t", fallback=None, timeout=0.2, retries=0)
    with client, pytest.raises(Unavailable, match="in time"):
        client.system_prompt("conv-slow", cwd="/tmp")
    with Client(silent_server, "t", fallback="Be brief.", timeout=0.2, retries=0) as client:
        result = client.system_prompt("conv-slow", cwd="/tmp")
        assert (result.text, result.is_fallback) == ("Be brief.", True)


def scripted(*answers: httpx.Response) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport answering ``answers`` in turn (retry logic alone; no server needed)."""
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[min(len(seen), len(answers)) - 1]

    return httpx.MockTransport(handle), seen


PROMPT = {
    "conversation_id": "c",
    "system_prompt": "Hi.",
    "template_version": 3,
    "constructed_at": "2026-01-02T03:04:05.000006Z",
    "sha256": "a" * 64,
    "shared_prefix_chars": 2,
}


def test_idempotent_calls_are_retried_honouring_retry_after() -> None:
    busy = httpx.Response(503, headers={"Retry-After": "0"}, json={"detail": "busy"})
    transport, seen = scripted(busy, busy, httpx.Response(201, json=PROMPT))
    client = Client(
        "http://sysprompt.test", "t", transport=transport, retries=2, resolve_locally=False
    )
    with client:
        result = client.system_prompt("c", cwd="/tmp")
    assert len(seen) == 3 and result.text == "Hi." and result.shared_prefix_chars == 2
    assert result.constructed_at == datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert seen[0].headers["Authorization"] == "Token t"
    assert json.loads(seen[0].content) == {"cwd": "/tmp"}


def test_construct_and_compact_are_never_retried() -> None:
    busy = httpx.Response(503, headers={"Retry-After": "0"}, json={"detail": "busy"})
    transport, seen = scripted(busy)
    client = Client(
        "http://sysprompt.test", "t", transport=transport, retries=2, resolve_locally=False
    )
    with client:
        with pytest.raises(Unavailable, match="busy") as raised:
            client.construct("c", cwd="/tmp")
        assert raised.value.status == 503 and len(seen) == 1
        with pytest.raises(Unavailable):
            client.compact("c", cwd="/tmp")
        assert len(seen) == 2
        with pytest.raises(Unavailable):
            client.get("c")  # idempotent: sent three times
        assert len(seen) == 5


def test_long_retry_after_is_not_waited_for() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    busy = httpx.Response(503, headers={"Retry-After": later}, json={"detail": "later"})
    assert 3590 < (retry_after(busy) or 0) <= 3600
    transport, seen = scripted(busy)
    client = Client("http://sysprompt.test", "t", transport=transport, max_retry_wait=1)
    with client, pytest.raises(Unavailable):
        client.get("c")
    assert len(seen) == 1


def test_a_500_is_a_server_error_and_not_retried() -> None:
    transport, seen = scripted(httpx.Response(500, json={"detail": "boom"}))
    client = Client("http://sysprompt.test", "t", transport=transport)
    with client, pytest.raises(ServerError, match="boom") as raised:
        client.get("c")
    assert raised.value.status == 500 and not isinstance(raised.value, Unavailable)
    assert len(seen) == 1
    assert isinstance(raised.value, SyspromptError)
