"""Agent hosts §3 against the real ``anthropic`` SDK: the exact JSON body it sends, to a
fake upstream on 127.0.0.1, for the Messages shape (``system`` blocks with
``cache_control``, split at the shared prefix)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from sysprompt_client import PromptResult
from sysprompt_core.messages import DEFAULT_MIN_SPLIT_CHARS, anthropic_messages, lock
from tests.client.isolated import run_isolated
from tests.client.test_sdk_fake_upstream import FakeUpstream

SHARED = "You are the coding agent of ACME. Follow the house rules.\n" * 80
REST = "Working directory: /srv/app\nToday is 2026-01-27.\n"
PROMPT = SHARED + REST
RESULT = PromptResult(text=PROMPT, shared_prefix_chars=len(SHARED))
PLANNER = lock({"role": "system", "content": "You are the planner. Plan, do not act."})


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


def client(upstream: FakeUpstream) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=upstream.url, api_key="sk-ant-test", max_retries=0)


def test_two_cached_blocks_at_the_shared_prefix(upstream: FakeUpstream) -> None:
    assert len(SHARED) >= DEFAULT_MIN_SPLIT_CHARS
    history: list[Any] = [{"role": "user", "content": "Fix the build."}]
    with client(upstream) as sdk:
        answer = sdk.messages.create(
            model="claude-fake", max_tokens=100, **anthropic_messages(history, RESULT)
        )
    assert answer.content[0].type == "text" and answer.content[0].text == "fake answer"
    assert upstream.last_body() == {
        "model": "claude-fake",
        "max_tokens": 100,
        "system": [
            {"type": "text", "text": SHARED, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": REST, "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [{"role": "user", "content": "Fix the build."}],
    }
    assert history == [{"role": "user", "content": "Fix the build."}]


def test_ttl_and_the_hosts_system_messages_merged_after_the_prompt(
    upstream: FakeUpstream,
) -> None:
    history: list[Any] = [
        PLANNER,
        {"role": "user", "content": "Plan the release."},
        {"role": "assistant", "content": "Step one."},
        {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": "Go on."},
    ]
    before = copy.deepcopy(history)
    with client(upstream) as sdk:
        sdk.messages.create(
            model="claude-fake", max_tokens=100, **anthropic_messages(history, RESULT, ttl="1h")
        )
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    assert upstream.last_body() == {
        "model": "claude-fake",
        "max_tokens": 100,
        "system": [
            {"type": "text", "text": SHARED, "cache_control": one_hour},
            {"type": "text", "text": REST, "cache_control": one_hour},
            {"type": "text", "text": "You are the planner. Plan, do not act."},
            {"type": "text", "text": "Be brief."},
        ],
        "messages": [
            {"role": "user", "content": "Plan the release."},
            {"role": "assistant", "content": "Step one."},
            {"role": "user", "content": "Go on."},
        ],
    }
    assert history == before


def test_a_short_prompt_is_one_cached_block_replacing_the_stored_system_message(
    upstream: FakeUpstream,
) -> None:
    history: list[Any] = [
        {"role": "system", "content": "an old prompt the host stored"},
        {"role": "user", "content": "hi"},
    ]
    with client(upstream) as sdk:
        sdk.messages.create(
            model="claude-fake",
            max_tokens=10,
            **anthropic_messages(history, "Be helpful.", shared_prefix_chars=3),
        )
    assert upstream.last_body() == {
        "model": "claude-fake",
        "max_tokens": 10,
        "system": [{"type": "text", "text": "Be helpful.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_no_prompt_and_no_system_message_sends_no_system(upstream: FakeUpstream) -> None:
    with client(upstream) as sdk:
        sdk.messages.create(
            model="claude-fake",
            max_tokens=10,
            **anthropic_messages([{"role": "user", "content": "hi"}], PromptResult(text=None)),
        )
    assert upstream.last_body() == {
        "model": "claude-fake",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_every_turn_sends_the_same_system_blocks(upstream: FakeUpstream) -> None:
    history: list[Any] = []
    with client(upstream) as sdk:
        for turn in ("one", "two", "three"):
            history.append({"role": "user", "content": turn})
            sdk.messages.create(
                model="claude-fake", max_tokens=10, **anthropic_messages(history, RESULT)
            )
            history.append({"role": "assistant", "content": turn.upper()})
    systems = [request.body["system"] for request in upstream.requests]
    assert systems[0] == systems[1] == systems[2]
    assert [len(request.body["messages"]) for request in upstream.requests] == [1, 3, 5]


def test_async_client(upstream: FakeUpstream) -> None:
    async def call() -> None:
        async with anthropic.AsyncAnthropic(
            base_url=upstream.url, api_key="sk-ant-test", max_retries=0
        ) as sdk:
            await sdk.messages.create(
                model="claude-fake",
                max_tokens=10,
                **anthropic_messages(
                    [PLANNER, {"role": "user", "content": "hi"}], RESULT, locked_policy="omit"
                ),
            )

    run_isolated(call())
    assert upstream.last_body() == {
        "model": "claude-fake",
        "max_tokens": 10,
        "system": [{"type": "text", "text": "You are the planner. Plan, do not act."}],
        "messages": [{"role": "user", "content": "hi"}],
    }
