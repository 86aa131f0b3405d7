"""A later turn with another cwd, model or provider gets the frozen prompt, and the
client says so: ``context_mismatch`` on the answer, and one warning per conversation
(not per turn) — from the cache and from a server that already froze the prompt.
Against the live server."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.client.conftest import MakeClient, Server, async_client
from tests.client.isolated import run_isolated


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "sysprompt_client" and record.levelno == logging.WARNING
    ]


def test_cached_turns_name_what_differs_and_warn_once_per_conversation(
    server: Server, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    client, counting = make_client()
    first = client.system_prompt("conv-1", cwd=server.cwd, model="m1", provider="openai")
    sent = len(counting.requests)

    with caplog.at_level(logging.WARNING, logger="sysprompt_client"):
        moved = [client.system_prompt("conv-1", cwd="/elsewhere", model="m1") for _ in range(5)]
        other = client.system_prompt("conv-1", cwd=server.cwd + "/", provider="anthropic")
        back = client.system_prompt("conv-1", cwd=server.cwd)

    assert len(counting.requests) == sent  # no request, no write
    assert (first.cwd, first.model, first.provider) == (server.cwd, "m1", "openai")
    assert first.context_mismatch == ()
    assert all(turn is moved[0] for turn in moved)
    assert (moved[0].text, moved[0].context_mismatch) == (first.text, ("cwd",))
    assert other.context_mismatch == ("provider",)  # the cwd compares normalised
    assert back.context_mismatch == () and back.text == first.text
    [told] = warnings(caplog)
    assert "'conv-1'" in told and f"cwd='{server.cwd}'" in told and "cwd differ" in told


def test_a_new_client_is_told_by_the_server_and_warns_once(
    server: Server, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    other = Path(server.cwd).parent / "other"
    other.mkdir()
    first, _ = make_client()
    first.system_prompt("conv-2", cwd=server.cwd, model="m1")
    restarted, _ = make_client()

    with caplog.at_level(logging.WARNING, logger="sysprompt_client"):
        answer = restarted.system_prompt("conv-2", cwd=str(other), model="m2")
        again = restarted.system_prompt("conv-2", cwd=str(other), model="m2")

    assert (answer.cwd, answer.model, answer.context_mismatch) == (
        server.cwd,
        "m1",
        ("cwd", "model"),
    )
    assert again.context_mismatch == ("cwd", "model")
    assert len(warnings(caplog)) == 1


def test_async_client_names_what_differs(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    async def turns() -> tuple[tuple[str, ...], tuple[str, ...]]:
        client, _ = async_client(server)
        async with client:
            await client.system_prompt("conv-3", cwd=server.cwd, model="m1")
            later = await client.system_prompt("conv-3", cwd=server.cwd, model="m2")
            same = await client.system_prompt("conv-3", cwd=server.cwd, model="m1")
        return later.context_mismatch, same.context_mismatch

    with caplog.at_level(logging.WARNING, logger="sysprompt_client"):
        assert run_isolated(turns()) == (("model",), ())
    assert len(warnings(caplog)) == 1
