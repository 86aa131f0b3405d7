"""Agent hosts §3, the OpenAI Agents SDK adapter: ``instructions(get_prompt)`` and
``model_settings(prompt)``, driven through a real ``Runner.run`` against a fake OpenAI
upstream on 127.0.0.1 (tracing disabled for the run; no network)."""

from __future__ import annotations

import asyncio
import copy
import inspect
import subprocess
import sys
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Any

import pytest
from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    RunContextWrapper,
    Runner,
    function_tool,
)
from openai import AsyncOpenAI

from sysprompt_client import PromptResult
from sysprompt_client.adapters.openai_agents import instructions, model_settings
from tests.client.isolated import run_isolated
from tests.client.test_sdk_fake_upstream import CANNED, CHAT_COMPLETION, RESPONSE, FakeUpstream

SHARED = "You are the coding agent of ACME.\n"
REST = "Conversation: {conversation}\n"
SHARED_KEY = "sysprompt-" + sha256(SHARED.encode()).hexdigest()[:54]

TOOL_CALL_COMPLETION: dict[str, Any] = {
    **CHAT_COMPLETION,
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": "{}"},
                    }
                ],
            },
            "finish_reason": "tool_calls",
            "logprobs": None,
        }
    ],
}
TOOL_CALL_RESPONSE: dict[str, Any] = {
    **RESPONSE,
    "output": [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": "{}",
            "status": "completed",
        }
    ],
}


@dataclass
class Host:
    """The host's own run context: what ``get_prompt`` looks the prompt up by."""

    conversation_id: str
    asked: list[tuple[object, object]] = field(default_factory=list)


def result_for(conversation_id: str) -> PromptResult:
    text = SHARED + REST.format(conversation=conversation_id)
    return PromptResult(text=text, shared_prefix_chars=len(SHARED))


@function_tool
def lookup() -> str:
    """Look the answer up."""
    return "42"


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    answers = {
        **CANNED,
        "/v1/chat/completions": [TOOL_CALL_COMPLETION, CHAT_COMPLETION],
        "/v1/responses": [TOOL_CALL_RESPONSE, RESPONSE],
    }
    with FakeUpstream(answers) as fake:
        yield fake


async def get_prompt_async(context: RunContextWrapper[Host], agent: Agent[Host]) -> PromptResult:
    context.context.asked.append((context, agent))
    await asyncio.sleep(0)
    return result_for(context.context.conversation_id)


def get_prompt_sync(context: RunContextWrapper[Host], agent: Agent[Host]) -> PromptResult:
    context.context.asked.append((context, agent))
    return result_for(context.context.conversation_id)


async def run(upstream: FakeUpstream, api: str, host: Host, *, sync: bool) -> str:
    async with AsyncOpenAI(
        base_url=upstream.url + "/v1", api_key="sk-test", max_retries=0
    ) as openai_client:
        model = (
            OpenAIChatCompletionsModel(model="gpt-fake", openai_client=openai_client)
            if api == "chat"
            else OpenAIResponsesModel(model="gpt-fake", openai_client=openai_client)
        )
        agent = Agent[Host](
            name="host",
            instructions=instructions(get_prompt_sync if sync else get_prompt_async),
            model=model,
            tools=[lookup],
        )
        result = await Runner.run(
            agent,
            "What is the answer?",
            context=host,
            run_config=RunConfig(
                tracing_disabled=True,
                model_settings=model_settings(result_for(host.conversation_id)),
            ),
        )
        for context, asked_agent in host.asked:
            assert isinstance(context, RunContextWrapper) and context.context is host
            assert asked_agent is agent
        return str(result.final_output)


@pytest.mark.parametrize("sync", [False, True], ids=["async get_prompt", "sync get_prompt"])
def test_runner_chat_completions_sends_the_prompt_on_every_model_call(
    upstream: FakeUpstream, sync: bool
) -> None:
    host = Host("conv-1")
    assert run_isolated(run(upstream, "chat", host, sync=sync)) == "fake answer"
    bodies = [request.body for request in upstream.requests]
    assert len(bodies) == 2 and len(host.asked) == 2  # the tool call, then the answer
    system = {"role": "system", "content": SHARED + "Conversation: conv-1\n"}
    for body in bodies:
        assert body["messages"][0] == system
        assert body["prompt_cache_key"] == SHARED_KEY
        assert [m["role"] for m in body["messages"]].count("system") == 1
    assert bodies[0]["messages"][1:] == [{"role": "user", "content": "What is the answer?"}]
    assert bodies[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "42"}


def test_runner_responses_sends_instructions_on_every_model_call(upstream: FakeUpstream) -> None:
    host = Host("conv-2")
    assert run_isolated(run(upstream, "responses", host, sync=False)) == "fake answer"
    bodies = [request.body for request in upstream.requests]
    assert len(bodies) == 2
    for body in bodies:
        assert body["instructions"] == SHARED + "Conversation: conv-2\n"
        assert body["prompt_cache_key"] == SHARED_KEY
        assert all(item.get("role") not in ("system", "developer") for item in body["input"])
    assert bodies[0]["input"] == [{"role": "user", "content": "What is the answer?"}]


def test_conversations_sharing_the_prefix_share_the_key(upstream: FakeUpstream) -> None:
    run_isolated(run(upstream, "chat", Host("conv-a"), sync=True))
    run_isolated(run(upstream, "chat", Host("conv-b"), sync=True))
    bodies = [request.body for request in upstream.requests]
    assert len({body["prompt_cache_key"] for body in bodies}) == 1
    assert len({body["messages"][0]["content"] for body in bodies}) == 2


# --- the callable's contract --------------------------------------------------------------


def wrapper(host: Host | None = None) -> RunContextWrapper[Host]:
    return RunContextWrapper(context=host or Host("conv-x"))


AGENT = Agent[Host](name="contract")


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("a prompt", "a prompt"),
        ("", ""),
        (None, ""),
        (PromptResult(text="from the result", shared_prefix_chars=4), "from the result"),
        (PromptResult(text=None), ""),
    ],
)
def test_instructions_answers_the_text(answer: Any, text: str) -> None:
    sync = instructions(lambda context, agent: answer)
    assert sync(wrapper(), AGENT) == text  # a synchronous answer is no coroutine

    async def later() -> Any:
        return answer

    deferred = instructions(lambda context, agent: later())
    awaitable = deferred(wrapper(), AGENT)
    assert inspect.isawaitable(awaitable)
    assert run_isolated(_await(awaitable)) == text


async def _await(awaitable: str | Awaitable[str]) -> str:
    assert not isinstance(awaitable, str)
    return await awaitable


def test_instructions_has_the_two_parameters_the_sdk_requires() -> None:
    callable_ = instructions(get_prompt_sync)
    assert len(inspect.signature(callable_).parameters) == 2


@pytest.mark.parametrize("get_prompt", [get_prompt_sync, get_prompt_async])
def test_the_sdks_own_get_system_prompt_uses_it(get_prompt: Any) -> None:
    host = Host("conv-9")
    agent = Agent[Host](name="host", instructions=instructions(get_prompt))
    text = run_isolated(agent.get_system_prompt(RunContextWrapper(context=host)))
    assert text == SHARED + "Conversation: conv-9\n"
    assert host.asked and host.asked[0][1] is agent


def test_instructions_refuses_a_prompt_of_another_type() -> None:
    with pytest.raises(TypeError, match="A prompt is a string"):
        instructions(lambda context, agent: 42)(wrapper(), AGENT)  # type: ignore[arg-type,return-value]


# --- model_settings -----------------------------------------------------------------------


def test_model_settings_key_from_the_shared_prefix() -> None:
    settings = model_settings(result_for("c"))
    assert settings == ModelSettings(extra_args={"prompt_cache_key": SHARED_KEY})
    explicit = model_settings(SHARED + "x", shared_prefix_chars=len(SHARED))
    assert explicit.extra_args == {"prompt_cache_key": SHARED_KEY}
    whole = model_settings("abc")
    assert whole.extra_args == {"prompt_cache_key": "sysprompt-" + sha256(b"abc").hexdigest()[:54]}


def test_model_settings_keeps_the_base_and_never_mutates_it() -> None:
    base = ModelSettings(temperature=0.2, extra_args={"user": "u-1"})
    before = copy.deepcopy(base)
    settings = model_settings(result_for("c"), base=base)
    assert settings.temperature == 0.2
    assert settings.extra_args == {"user": "u-1", "prompt_cache_key": SHARED_KEY}
    assert base == before


@pytest.mark.parametrize(
    "base",
    [
        ModelSettings(extra_args={"prompt_cache_key": "the host's"}),
        ModelSettings(extra_body={"prompt_cache_key": "the host's"}),
    ],
)
def test_model_settings_leaves_the_hosts_own_key(base: ModelSettings) -> None:
    assert model_settings(result_for("c"), base=base) is base


def test_model_settings_without_a_prompt() -> None:
    assert model_settings(None) == ModelSettings()
    base = ModelSettings(temperature=1.0)
    assert model_settings(PromptResult(text=None), base=base) is base


def test_importing_the_adapter_imports_no_sdk() -> None:
    code = (
        "import sys, sysprompt_client.adapters.openai_agents\n"
        "print(sorted(m for m in ('agents', 'openai', 'anthropic') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stderr
