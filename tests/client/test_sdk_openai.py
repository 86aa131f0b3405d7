"""Agent hosts §3 against the real ``openai`` SDK: the exact JSON body it sends, to a fake
upstream on 127.0.0.1, for the Chat Completions and Responses shapes."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from hashlib import sha256
from typing import Any

import openai
import pytest

from sysprompt_core.messages import (
    LOCK_KEY,
    apply_system_prompt,
    lock,
    openai_chat,
    openai_responses,
    with_system_prompt,
)
from tests.client.isolated import run_isolated
from tests.client.test_sdk_fake_upstream import FakeUpstream
from tests.core.messages.support import Result

PROMPT = "You are the coding agent of ACME.\nWorking directory: /srv/app"
SHARED = len("You are the coding agent of ACME.\n")
PROMPT_KEY = "sysprompt-" + sha256(PROMPT.encode()).hexdigest()[:54]
SHARED_KEY = "sysprompt-" + sha256(PROMPT[:SHARED].encode()).hexdigest()[:54]
PLANNER = lock({"role": "system", "content": "You are the planner. Plan, do not act."})


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


def client(upstream: FakeUpstream) -> openai.OpenAI:
    return openai.OpenAI(base_url=upstream.url + "/v1", api_key="sk-test", max_retries=0)


def test_chat_system_message_and_prompt_cache_key(upstream: FakeUpstream) -> None:
    history: list[Any] = [{"role": "user", "content": "Fix the build."}]
    with client(upstream) as sdk:
        answer = sdk.chat.completions.create(model="gpt-fake", **openai_chat(history, PROMPT))
    assert answer.choices[0].message.content == "fake answer"
    assert upstream.last_body() == {
        "model": "gpt-fake",
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": "Fix the build."},
        ],
        "prompt_cache_key": PROMPT_KEY,
    }
    assert history == [{"role": "user", "content": "Fix the build."}]


def test_chat_developer_role_locked_planner_and_key_from_the_shared_prefix(
    upstream: FakeUpstream,
) -> None:
    history: list[Any] = [
        {"role": "system", "content": "an old prompt the host stored"},
        {"role": "user", "content": "Plan the release."},
    ]
    before = copy.deepcopy(history)
    with client(upstream) as sdk:
        sdk.chat.completions.create(
            model="gpt-fake",
            temperature=0,
            **openai_chat([PLANNER, *history], Result(PROMPT, SHARED), role="developer"),
        )
    assert upstream.last_body() == {
        "model": "gpt-fake",
        "temperature": 0,
        "messages": [
            {"role": "developer", "content": PROMPT},
            {"role": "system", "content": "You are the planner. Plan, do not act."},
            {"role": "system", "content": "an old prompt the host stored"},
            {"role": "user", "content": "Plan the release."},
        ],
        "prompt_cache_key": SHARED_KEY,
    }
    assert history == before
    assert PLANNER[LOCK_KEY] is True


def test_chat_locked_prompt_left_out(upstream: FakeUpstream) -> None:
    messages: list[Any] = [PLANNER, {"role": "user", "content": "Go."}]
    with client(upstream) as sdk:
        sdk.chat.completions.create(
            model="gpt-fake",
            **openai_chat(messages, PROMPT, locked_policy="omit", prompt_cache_key=False),
        )
    assert upstream.last_body() == {
        "model": "gpt-fake",
        "messages": [
            {"role": "system", "content": "You are the planner. Plan, do not act."},
            {"role": "user", "content": "Go."},
        ],
    }


def test_chat_every_turn_sends_the_same_prompt_and_the_history_never_holds_it(
    upstream: FakeUpstream,
) -> None:
    history: list[Any] = []
    with client(upstream) as sdk:
        for turn in ("one", "two", "three"):
            history.append({"role": "user", "content": turn})
            answer = sdk.chat.completions.create(
                model="gpt-fake", messages=with_system_prompt(history, PROMPT)
            )
            history.append({"role": "assistant", "content": answer.choices[0].message.content})
    bodies = [request.body for request in upstream.requests]
    assert [body["messages"][0] for body in bodies] == [{"role": "system", "content": PROMPT}] * 3
    assert [len(body["messages"]) for body in bodies] == [2, 4, 6]
    assert all(message["role"] != "system" for message in history)


def test_chat_without_a_prompt_sends_the_messages_as_they_are(upstream: FakeUpstream) -> None:
    with client(upstream) as sdk:
        sdk.chat.completions.create(
            model="gpt-fake", **openai_chat([{"role": "user", "content": "hi"}], None)
        )
    assert upstream.last_body() == {
        "model": "gpt-fake",
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_the_sdk_would_send_the_marker_which_is_why_the_shapes_strip_it(
    upstream: FakeUpstream,
) -> None:
    # The SDK forwards unknown keys: a list straight from apply_system_prompt (which keeps
    # the marker so a second application stays the same) must be stripped first.
    with client(upstream) as sdk:
        sdk.chat.completions.create(
            model="gpt-fake", messages=apply_system_prompt([PLANNER], PROMPT)
        )
        sdk.chat.completions.create(model="gpt-fake", **openai_chat([PLANNER], PROMPT))
    leaked, stripped = (request.body["messages"] for request in upstream.requests)
    assert leaked[1][LOCK_KEY] is True
    assert LOCK_KEY not in stripped[1]


def test_responses_instructions_on_every_call(upstream: FakeUpstream) -> None:
    with client(upstream) as sdk:
        first = sdk.responses.create(
            model="gpt-fake", **openai_responses("Fix the build.", Result(PROMPT, SHARED))
        )
        sdk.responses.create(
            model="gpt-fake",
            previous_response_id=first.id,
            **openai_responses(
                [{"role": "user", "content": "And the tests.", LOCK_KEY: True}],
                Result(PROMPT, SHARED),
            ),
        )
    assert [request.body for request in upstream.requests] == [
        {
            "model": "gpt-fake",
            "instructions": PROMPT,
            "input": "Fix the build.",
            "prompt_cache_key": SHARED_KEY,
        },
        {
            "model": "gpt-fake",
            "instructions": PROMPT,
            "input": [{"role": "user", "content": "And the tests."}],
            "previous_response_id": "resp_fake",
            "prompt_cache_key": SHARED_KEY,
        },
    ]


def test_responses_without_a_prompt(upstream: FakeUpstream) -> None:
    with client(upstream) as sdk:
        sdk.responses.create(model="gpt-fake", **openai_responses("hi", Result(None, 0)))
    assert upstream.last_body() == {"model": "gpt-fake", "input": "hi"}


def test_async_client_chat(upstream: FakeUpstream) -> None:
    async def call() -> None:
        async with openai.AsyncOpenAI(
            base_url=upstream.url + "/v1", api_key="sk-test", max_retries=0
        ) as sdk:
            await sdk.chat.completions.create(
                model="gpt-fake",
                **openai_chat([{"role": "user", "content": "hi"}], PROMPT, role="developer"),
            )

    run_isolated(call())
    assert upstream.last_body() == {
        "model": "gpt-fake",
        "messages": [
            {"role": "developer", "content": PROMPT},
            {"role": "user", "content": "hi"},
        ],
        "prompt_cache_key": PROMPT_KEY,
    }


def test_chat_a_reasoning_models_developer_message_stays_developer(
    upstream: FakeUpstream,
) -> None:
    """The host's history holds a developer message (as OpenAI's reasoning models want):
    the prompt replaces its content and the role the SDK sends stays ``developer``."""
    history: list[Any] = [
        {"role": "developer", "content": "an old prompt"},
        {"role": "user", "content": "Fix the build."},
    ]
    with client(upstream) as sdk:
        sdk.chat.completions.create(model="o-fake", **openai_chat(history, PROMPT))
    assert upstream.last_body()["messages"] == [
        {"role": "developer", "content": PROMPT},
        {"role": "user", "content": "Fix the build."},
    ]
