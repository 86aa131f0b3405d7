"""The client and named prompts (issue 33): ``prompt=`` on the client and per call,
sent as the body's ``prompt`` on resolve, construct and compact (never when none is
named: today's requests, byte for byte), the references of that prompt, part of the
memory and directory cache keys (the same conversation id under two prompts is two
entries), and a fallback per prompt. Against the live server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from sysprompt.prompts.models import Prompt
from sysprompt_client import Client, Conflict, Gone, NotFound, Unavailable
from sysprompt_client.cache import cache_key
from tests.client.conftest import MakeClient, Server, async_client
from tests.client.isolated import run_isolated

TRIAGE = "support/triage"
RESOLVE = "/api/conversations/{}/system-prompt/resolve"
DOWN = "http://127.0.0.1:9"
"""Nothing listens there: every request fails to connect."""


def prompt_make(server: Server, name: str, template: str, *, archived: bool = False) -> None:
    now = timezone.now()
    Prompt.objects.create(name=name, created_at=now, updated_at=now)
    server.api(
        "PUT",
        f"/api/prompts/{name}/-/system-prompt",
        author=True,
        json={"template": template},
    )
    if archived:
        Prompt.objects.filter(name=name).update(archived=True)


@pytest.fixture
def named(server: Server) -> Server:
    """``default`` serves the tests' template; ``support/triage`` its own."""
    prompt_make(server, TRIAGE, "Triage tickets in [prompt:cwd].")
    return server


def bodies(counting: Any) -> list[dict[str, Any]]:
    return [json.loads(r.content) for r in counting.sent if r.content]


def test_client_without_prompt_sends_no_prompt_key(server: Server, make_client: MakeClient) -> None:
    client, counting = make_client(resolve_locally=True)

    client.system_prompt("conv-plain", cwd=server.cwd)
    client.construct("conv-plain", cwd=server.cwd)
    client.compact("conv-plain", cwd=server.cwd)

    assert all("prompt" not in body for body in bodies(counting))
    references = {r.url.path for r in counting.sent if r.url.path.endswith("/references")}
    assert references == {"/api/system-prompt/references"}
    assert "conv-plain" in client.cache


def test_client_prompt_is_sent_answered_and_cached_under_it(
    named: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(prompt=TRIAGE)

    first = client.system_prompt("conv-1", cwd=named.cwd)
    again = client.system_prompt("conv-1", cwd=named.cwd)

    assert first.text == f"Triage tickets in {named.cwd}."
    assert first.prompt == TRIAGE
    assert again is client.cache.get(cache_key("conv-1", None, TRIAGE)).result  # type: ignore[union-attr]
    assert bodies(counting) == [{"cwd": named.cwd, "prompt": TRIAGE}]


def test_call_prompt_overrides_the_client_prompt_and_is_its_own_cache_key(
    named: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(prompt=TRIAGE)

    triage = client.system_prompt("conv-2", cwd=named.cwd)
    plain = client.system_prompt("conv-3", cwd=named.cwd, prompt="default")
    # conv-2 under another prompt is another entry: the server is asked, and it refuses
    # a later turn naming another prompt than the one the conversation is frozen from.
    with pytest.raises(Conflict) as refused:
        client.system_prompt("conv-2", cwd=named.cwd, prompt="default")

    assert plain.text == f"You work in {named.cwd}.\nRun the tests before you commit.\n"
    assert plain.prompt == "default" and triage.prompt == TRIAGE
    assert TRIAGE in refused.value.message and "default" in refused.value.message
    assert [b.get("prompt") for b in bodies(counting)] == [TRIAGE, "default", "default"]
    assert cache_key("conv-2", None, TRIAGE) in client.cache
    assert cache_key("conv-2", None, "default") not in client.cache
    assert client.system_prompt("conv-2", cwd=named.cwd) is not None  # still cached


def test_construct_compact_forget_and_references_take_the_prompt(
    named: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(resolve_locally=True)
    client.system_prompt("conv-4", cwd=named.cwd, prompt=TRIAGE)

    rebuilt = client.construct("conv-4", cwd=named.cwd, prompt=TRIAGE)
    compacted = client.compact("conv-4", prompt=TRIAGE)
    keys = client.references(prompt=TRIAGE)
    forgotten = client.forget("conv-4", prompt=TRIAGE, on_server=False)

    assert rebuilt.prompt == TRIAGE and compacted.prompt.prompt == TRIAGE
    assert compacted.prompt.text == f"Triage tickets in {named.cwd}."
    assert "prompt:cwd" in keys
    assert forgotten and cache_key("conv-4", None, TRIAGE) not in client.cache
    assert [b.get("prompt") for b in bodies(counting)] == [TRIAGE] * 3
    paths = {r.url.path for r in counting.sent if r.url.path.endswith("/references")}
    assert paths == {f"/api/prompts/{TRIAGE}/-/system-prompt/references"}


def test_unknown_prompt_is_not_found_and_caches_nothing(
    named: Server, make_client: MakeClient
) -> None:
    client, _ = make_client(prompt="support/nope", fallback="Fallback.")

    with pytest.raises(NotFound) as refused:
        client.system_prompt("conv-5", cwd=named.cwd)

    assert "support/nope" in refused.value.message
    assert len(client.cache) == 0


def test_archived_prompt_is_gone_for_a_new_conversation(
    named: Server, make_client: MakeClient
) -> None:
    prompt_make(named, "support/old", "Old.", archived=True)
    client, _ = make_client(fallback="Fallback.")

    with pytest.raises(Gone) as refused:
        client.system_prompt("conv-6", cwd=named.cwd, prompt="support/old")

    assert refused.value.status == 410 and "support/old" in refused.value.message
    assert len(client.cache) == 0


def test_invalid_prompt_name_is_refused_by_the_client() -> None:
    with pytest.raises(ValueError, match="prompt"):
        Client(DOWN, "token", prompt="Support//Triage")


def test_fallback_is_per_prompt() -> None:
    fallback = {TRIAGE: "Triage offline.", None: "Plain offline."}
    with Client(DOWN, "token", fallback=fallback, retries=0) as client:
        triage = client.system_prompt("conv-7", cwd="/", prompt=TRIAGE)
        plain = client.system_prompt("conv-7", cwd="/")
        with pytest.raises(Unavailable):
            client.system_prompt("conv-7", cwd="/", prompt="coding/reviewer")

        assert (triage.text, triage.prompt, triage.is_fallback) == ("Triage offline.", TRIAGE, True)
        assert (plain.text, plain.prompt, plain.is_fallback) == ("Plain offline.", None, True)
        assert client.system_prompt("conv-7", cwd="/", prompt=TRIAGE).text == "Triage offline."


def test_directory_cache_keeps_one_file_per_prompt(
    named: Server, make_client: MakeClient, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first, _ = make_client(cache_dir=cache_dir, prompt=TRIAGE)
    first.system_prompt("conv-8", cwd=named.cwd)
    first.system_prompt("conv-9", cwd=named.cwd, prompt="default")
    first.close()

    same, counting_same = make_client(cache_dir=cache_dir, prompt=TRIAGE)
    cached = same.system_prompt("conv-8", cwd=named.cwd)
    cached_default = same.system_prompt("conv-9", cwd=named.cwd, prompt="default")
    unnamed, counting_unnamed = make_client(cache_dir=cache_dir)
    asked = unnamed.system_prompt("conv-9", cwd=named.cwd)

    assert counting_same.requests == [] and cached.from_cache and cached_default.from_cache
    assert cached.prompt == TRIAGE and cached.text == f"Triage tickets in {named.cwd}."
    # No prompt named is its own key (the host's default), asked of the server.
    assert [path for method, path in counting_unnamed.requests if method == "POST"] == [
        RESOLVE.format("conv-9")
    ]
    assert asked.text == cached_default.text
    assert len(os.listdir(cache_dir)) == 3


def test_async_client_prompt(named: Server) -> None:
    async def main() -> None:
        client, counting = async_client(named, prompt=TRIAGE)
        async with client:
            first = await client.system_prompt("conv-10", cwd=named.cwd)
            cached = await client.system_prompt("conv-10", cwd=named.cwd)
            other = await client.system_prompt("conv-11", cwd=named.cwd, prompt="default")
            compacted = await client.compact("conv-10")
            assert (first.prompt, other.prompt) == (TRIAGE, "default")
            assert cached.from_cache and cached.text == first.text
            assert compacted.prompt.prompt == TRIAGE
            assert [path for method, path in counting.requests if method == "POST"] == [
                RESOLVE.format("conv-10"),
                RESOLVE.format("conv-11"),
                "/api/conversations/conv-10/system-prompt/compact",
            ]

    run_isolated(main())
