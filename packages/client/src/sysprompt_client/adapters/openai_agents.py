"""The OpenAI Agents SDK adapter (agent hosts §3).

    agent = Agent(name="host", instructions=instructions(get_prompt))
    await Runner.run(agent, text, context=ctx,
                     run_config=RunConfig(model_settings=model_settings(prompt)))

* :func:`instructions` turns ``get_prompt(context, agent)`` — the SDK's own signature;
  answering the prompt as a string, an object with ``text`` such as the client's
  result, or ``None``, or an awaitable of one (the async client) — into the callable
  ``Agent(instructions=...)`` takes. The SDK calls it before every model call and sends
  its string as the system message (Chat Completions) or ``instructions`` (Responses),
  so the frozen prompt reaches every call; the client answers later turns from its
  cache without a request. No prompt becomes ``""``, which the SDK's Chat Completions
  model leaves out (its Responses model sends an empty ``instructions``).
* :func:`model_settings` puts the prompt's ``prompt_cache_key`` (derived from the shared
  prefix: :func:`sysprompt_core.messages.prompt_cache_key`) into ``extra_args``, where
  the SDK forwards it to OpenAI instead of generating its own per-conversation key, so
  conversations that share the prefix share a cache.

The SDK is imported only by :func:`model_settings` (for ``ModelSettings``) and for type
checking, so importing this module needs no SDK.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from sysprompt_core.messages import Prompt, prompt_cache_key, prompt_text

if TYPE_CHECKING:
    from agents import Agent, ModelSettings, RunContextWrapper

TContext = TypeVar("TContext")

PromptSource: TypeAlias = Prompt | Awaitable[Prompt]
"""What ``get_prompt`` answers: a prompt (a string, an object with ``text``, ``None``), or
an awaitable of one."""


def instructions(
    get_prompt: Callable[[RunContextWrapper[TContext], Agent[TContext]], PromptSource],
) -> Callable[[RunContextWrapper[TContext], Agent[TContext]], str | Awaitable[str]]:
    """The ``instructions`` callable of an ``Agent``: ``get_prompt(context, agent)``'s
    text, ``""`` for no prompt.

    A synchronous ``get_prompt`` is answered synchronously (no coroutine per turn); an
    awaitable answer is awaited. In an async runner use the async client, whose first
    turn does not block the event loop.
    """

    def sysprompt_instructions(
        context: RunContextWrapper[TContext], agent: Agent[TContext]
    ) -> str | Awaitable[str]:
        answer = get_prompt(context, agent)
        if inspect.isawaitable(answer):
            return _text_of(answer)
        return prompt_text(answer) or ""

    return sysprompt_instructions


async def _text_of(answer: Awaitable[Prompt]) -> str:
    return prompt_text(await answer) or ""


def model_settings(
    prompt: Prompt,
    *,
    shared_prefix_chars: int | None = None,
    base: ModelSettings | None = None,
) -> ModelSettings:
    """``base`` (default: empty ``ModelSettings``) with the prompt's ``prompt_cache_key``
    in ``extra_args``; ``base`` unchanged without a prompt, or when it already carries a
    key of its own (in ``extra_args`` or ``extra_body``)."""
    from agents import ModelSettings

    settings = base if base is not None else ModelSettings()
    text = prompt_text(prompt)
    if text is None or any(
        isinstance(extra, dict) and "prompt_cache_key" in extra
        for extra in (settings.extra_args, settings.extra_body)
    ):
        return settings
    key = prompt_cache_key(
        text,
        shared_prefix_chars
        if shared_prefix_chars is not None
        else getattr(prompt, "shared_prefix_chars", None),
    )
    return replace(settings, extra_args={**(settings.extra_args or {}), "prompt_cache_key": key})
