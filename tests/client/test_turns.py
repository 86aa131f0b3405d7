"""A conversation's turns through the sync client against a live server."""

from __future__ import annotations

import hashlib
import time

import pytest

from sysprompt_client import NotFound
from tests.client.conftest import REFERENCES, MakeClient, Server, expected_prompt


def wait_for(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_first_turn_resolves_and_later_turns_send_nothing(
    server: Server, make_client: MakeClient
) -> None:
    client, counting = make_client()
    first = client.system_prompt("conv-1", cwd=server.cwd, model="m1")
    assert first.text == expected_prompt(server)
    assert first.sha256 == hashlib.sha256(first.text.encode()).hexdigest()
    assert first.template_version == 1
    assert first.constructed_at is not None and first.constructed_at.tzinfo is not None
    assert (first.is_fallback, first.from_cache) == (False, False)
    assert first.conversation_id == "conv-1"
    assert counting.requests == [
        REFERENCES,
        ("POST", "/api/conversations/conv-1/system-prompt/resolve"),
    ]

    later = [client.system_prompt("conv-1", cwd="/elsewhere", model="m2") for _ in range(50)]
    assert len(counting.requests) == 2
    assert all(turn is later[0] for turn in later)  # the same object: nothing copied
    assert later[0].from_cache and later[0].text == first.text
    assert later[0].sha256 == first.sha256
    assert later[0].context_mismatch == ("cwd", "model")  # the frozen prompt, and said so
    assert (later[0].cwd, later[0].model) == (server.cwd, "m1")
    # What the server stores is what the host got.
    stored = server.api("GET", "/api/conversations/conv-1/system-prompt")
    assert stored["system_prompt"] == first.text


def test_shared_prefix_is_none_unless_the_server_sends_it(
    server: Server, make_client: MakeClient
) -> None:
    client, _ = make_client()
    result = client.system_prompt("conv-prefix", cwd=server.cwd)
    stored = server.api("GET", "/api/conversations/conv-prefix/system-prompt")
    assert result.shared_prefix_chars == stored.get("shared_prefix_chars")


def test_reconstruct_elsewhere_reaches_the_host(server: Server, make_client: MakeClient) -> None:
    client, counting = make_client(max_age=0.05)
    old = client.system_prompt("conv-r", cwd=server.cwd)
    server.set_template("Second template.\n")
    new = server.api(
        "POST", "/api/conversations/conv-r/system-prompt/construct", json={"cwd": server.cwd}
    )
    assert new["system_prompt"] == "Second template.\n"
    time.sleep(0.06)
    # Stale: the cached answer at once, the revalidation in the background.
    assert client.system_prompt("conv-r", cwd=server.cwd).text == old.text
    wait_for(lambda: client.system_prompt("conv-r", cwd=server.cwd).text == new["system_prompt"])
    current = client.system_prompt("conv-r", cwd=server.cwd)
    assert current.sha256 == new["sha256"] and current.from_cache
    assert ("GET", "/api/conversations/conv-r/system-prompt") in counting.requests
    assert counting.requests.count(("POST", "/api/conversations/conv-r/system-prompt/resolve")) == 1


def test_unchanged_prompt_revalidates_and_stays_the_same_object(
    server: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(max_age=0.05)
    client.system_prompt("conv-s", cwd=server.cwd)
    built = len(counting.requests)
    cached = client.system_prompt("conv-s", cwd=server.cwd)
    time.sleep(0.06)
    client.system_prompt("conv-s", cwd=server.cwd)
    revalidated = built + 1

    def done() -> bool:
        entry = client.cache.peek("conv-s")
        return (
            len(counting.requests) == revalidated and entry is not None and not entry.revalidating
        )

    wait_for(done)
    assert client.system_prompt("conv-s", cwd=server.cwd) is cached
    # The age was refreshed: no further request while it is fresh.
    client.system_prompt("conv-s", cwd=server.cwd)
    assert len(counting.requests) == revalidated


def test_deleted_elsewhere_is_forgotten_on_revalidation(
    server: Server, make_client: MakeClient
) -> None:
    client, _ = make_client(max_age=0.05)
    client.system_prompt("conv-d", cwd=server.cwd)
    server.api("DELETE", "/api/conversations/conv-d/system-prompt")
    time.sleep(0.06)
    client.system_prompt("conv-d", cwd=server.cwd)
    wait_for(lambda: "conv-d" not in client.cache)


def test_compaction(server: Server, make_client: MakeClient) -> None:
    client, counting = make_client()
    before = client.system_prompt("conv-c", cwd=server.cwd)
    server.set_template("After compaction.\n")
    compacted = client.compact("conv-c", cwd=server.cwd)
    assert compacted.prompt.text == "After compaction.\n"
    assert compacted.compaction_prompt is not None
    assert compacted.compaction_prompt.startswith("After compaction.\n\n\n")
    assert compacted.prompt.template_version == 2 and not compacted.prompt.from_cache
    requests = len(counting.requests)
    later = client.system_prompt("conv-c", cwd=server.cwd)
    assert later.text == "After compaction.\n" != before.text
    assert later.sha256 == compacted.prompt.sha256 and later.from_cache
    assert len(counting.requests) == requests


def test_construct_get_and_forget(server: Server, make_client: MakeClient) -> None:
    client, counting = make_client()
    client.system_prompt("conv-f", cwd=server.cwd)
    server.set_template("Constructed.\n")
    constructed = client.construct("conv-f", cwd=server.cwd)
    assert constructed.text == "Constructed.\n"
    assert client.system_prompt("conv-f", cwd=server.cwd).text == "Constructed.\n"
    assert client.get("conv-f").sha256 == constructed.sha256

    assert client.forget("conv-f") is True
    assert "conv-f" not in client.cache
    with pytest.raises(NotFound, match="conv-f"):
        client.get("conv-f")
    assert client.forget("conv-f") is False  # nothing left anywhere
    # The next turn is a first turn again.
    requests = len(counting.requests)
    assert client.system_prompt("conv-f", cwd=server.cwd).text == "Constructed.\n"
    assert counting.requests[requests][0] == "POST"


def test_host_context_is_sent_on_the_first_turn(server: Server, make_client: MakeClient) -> None:
    server.set_template("[prompt:model] [if tool:shell]shell[endif]\n")
    client, _ = make_client()
    result = client.system_prompt("conv-h", cwd=server.cwd, model="m-9", tools=["shell"])
    assert result.text == "m-9 shell\n"
