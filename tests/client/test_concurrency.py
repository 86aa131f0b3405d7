"""Concurrent first turns of one conversation: one stored prompt, identical bytes."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from sysprompt.prompts.models import ConversationPrompt
from sysprompt_client import Client, PromptResult
from tests.client.conftest import REFERENCES, MakeClient, Server, async_client, expected_prompt
from tests.client.isolated import run_isolated

THREADS = 8


def run_together(count: int, turn: object) -> list[PromptResult]:
    barrier = threading.Barrier(count)

    def one(index: int) -> PromptResult:
        barrier.wait()
        return turn(index)  # type: ignore[operator,no-any-return]

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def test_threads_sharing_one_client_send_one_request(
    server: Server, make_client: MakeClient
) -> None:
    client, counting = make_client()
    results = run_together(THREADS, lambda _: client.system_prompt("conv-t", cwd=server.cwd))
    assert {r.text for r in results} == {expected_prompt(server)}
    assert len({id(r) for r in results}) == 1
    assert counting.requests == [
        REFERENCES,
        ("POST", "/api/conversations/conv-t/system-prompt/resolve"),
    ]
    assert ConversationPrompt.objects.filter(conversation_id="conv-t").count() == 1


def test_threads_with_a_client_each_get_the_one_stored_prompt(server: Server) -> None:
    clients = [Client(server.url, server.token) for _ in range(THREADS)]
    try:
        results = run_together(
            THREADS, lambda i: clients[i].system_prompt("conv-m", cwd=server.cwd)
        )
    finally:
        for client in clients:
            client.close()
    assert len({(r.text, r.sha256, r.constructed_at) for r in results}) == 1
    assert ConversationPrompt.objects.filter(conversation_id="conv-m").count() == 1


def test_asyncio_turns_share_one_request(server: Server) -> None:
    async def main() -> tuple[list[PromptResult], list[tuple[str, str]]]:
        client, counting = async_client(server)
        async with client:
            results = await asyncio.gather(
                *(client.system_prompt("conv-a", cwd=server.cwd) for _ in range(THREADS))
            )
            later = await client.system_prompt("conv-a", cwd=server.cwd)
            assert later.from_cache and later.text == results[0].text
        return list(results), counting.requests

    results, requests = run_isolated(main())
    assert {r.text for r in results} == {expected_prompt(server)}
    assert len({id(r) for r in results}) == 1
    assert requests == [REFERENCES, ("POST", "/api/conversations/conv-a/system-prompt/resolve")]
    assert ConversationPrompt.objects.filter(conversation_id="conv-a").count() == 1


def test_asyncio_clients_each_get_the_one_stored_prompt(server: Server) -> None:
    async def main() -> list[PromptResult]:
        clients = [async_client(server)[0] for _ in range(THREADS)]
        try:
            return list(
                await asyncio.gather(*(c.system_prompt("conv-b", cwd=server.cwd) for c in clients))
            )
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))

    results = run_isolated(main())
    assert len({(r.text, r.sha256) for r in results}) == 1
    assert ConversationPrompt.objects.filter(conversation_id="conv-b").count() == 1
