"""The async client: the same turns, awaited, never blocking the loop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from sysprompt_client import AsyncClient, Forbidden, InvalidRequest, NotFound
from tests.client.conftest import REFERENCES, Server, async_client, expected_prompt
from tests.client.isolated import run_isolated
from tests.client.test_errors import closed_port


async def until(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not await condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_turns_revalidation_and_compaction(server: Server) -> None:
    async def main() -> None:
        client, counting = async_client(server, max_age=0.05)
        async with client:
            first = await client.system_prompt("conv-1", cwd=server.cwd)
            assert first.text == expected_prompt(server) and not first.from_cache
            later = await client.system_prompt("conv-1", cwd=server.cwd)
            assert later.from_cache and later.sha256 == first.sha256
            assert await client.system_prompt("conv-1", cwd=server.cwd) is later
            assert counting.requests == [
                REFERENCES,
                ("POST", "/api/conversations/conv-1/system-prompt/resolve"),
            ]

            await asyncio.to_thread(server.set_template, "Elsewhere.\n")
            await asyncio.to_thread(
                server.api,
                "POST",
                "/api/conversations/conv-1/system-prompt/construct",
                json={"cwd": server.cwd},
            )
            await asyncio.sleep(0.06)
            assert (await client.system_prompt("conv-1", cwd=server.cwd)).text == first.text

            async def arrived() -> bool:
                turn = await client.system_prompt("conv-1", cwd=server.cwd)
                return turn.text == "Elsewhere.\n"

            await until(arrived)

            await asyncio.to_thread(server.set_template, "Compacted.\n")
            compacted = await client.compact("conv-1", cwd=server.cwd)
            assert compacted.prompt.text == "Compacted.\n"
            assert (await client.system_prompt("conv-1", cwd=server.cwd)).text == "Compacted.\n"
            assert (await client.get("conv-1")).sha256 == compacted.prompt.sha256
            assert (await client.construct("conv-1", cwd=server.cwd)).text == "Compacted.\n"
            assert await client.forget("conv-1")
            with pytest.raises(NotFound):
                await client.get("conv-1")
            with pytest.raises(InvalidRequest, match="allowed roots"):
                await client.system_prompt("conv-2", cwd="/")

    run_isolated(main())


def test_directory_cache_and_fallback(server: Server, tmp_path: Path) -> None:
    async def main() -> None:
        client, _ = async_client(server, cache_dir=tmp_path)
        async with client:
            original = await client.system_prompt("conv-d", cwd=server.cwd)
        again, counting = async_client(server, cache_dir=tmp_path)
        async with again:
            assert (await again.system_prompt("conv-d", cwd=server.cwd)).text == original.text
        assert counting.requests == []

        down = AsyncClient(f"http://127.0.0.1:{closed_port()}", "t", fallback="F.", backoff=0)
        async with down:
            results = await asyncio.gather(
                *(down.system_prompt("conv-f", cwd="/tmp") for _ in range(4))
            )
            assert {(r.text, r.is_fallback) for r in results} == {("F.", True)}
            assert (await down.system_prompt("conv-f", cwd="/tmp")).from_cache

    run_isolated(main())


def test_a_cached_turn_awaits_nothing(server: Server) -> None:
    async def main() -> None:
        client, _ = async_client(server)
        async with client:
            await client.system_prompt("conv-n", cwd=server.cwd)
            turn = client.system_prompt("conv-n", cwd=server.cwd)
            # The coroutine finishes on its first step: it never yields to the loop.
            with pytest.raises(StopIteration) as done:
                turn.send(None)
            assert done.value.value.from_cache

    run_isolated(main())


def test_library_and_labels_async_as_sync(server: Server) -> None:
    """The async client sends the library's and the labels' calls as the sync one."""
    editor = User.objects.create_superuser("async-editor")
    token = Token.objects.create(user=editor).key

    async def main() -> None:
        async with AsyncClient(server.url, token) as client:
            saved = await client.save_fragment("tone", "Be brief.\n")
            assert saved["text"] == "Be brief.\n"
            await client.save_fragment("tone", "Be terse.\n", provider="anthropic")
            library = await client.library()
            assert [item["name"] for item in library] == ["tone"]
            shown = await client.preview_fragment("tone", cwd=server.cwd, provider="anthropic")
            assert shown["system_prompt"] == "Be terse.\n"
            await client.delete_fragment("tone", provider="anthropic")
            shown = await client.preview_fragment("tone", cwd=server.cwd, provider="anthropic")
            assert shown["system_prompt"] == "Be brief.\n"
            release = await client.create_release(message="async")
            moved = await client.set_label("staging", {"release": release["number"]})
            assert moved["target"] == {"release": release["number"]}
            names = {label["name"] for label in await client.labels()}
            assert {"production", "staging"} <= names
        async with AsyncClient(server.url, server.token) as host:
            with pytest.raises(Forbidden):
                await host.labels()

    run_isolated(main())
