"""A replaced message keeps its role (agent hosts §3): the prompt replaces the *content*
of the first system or developer message, never its role; ``role`` is the role of a
message the prompt is *inserted* as. Every function and shape that puts the prompt into
messages with roles: ``apply_system_prompt``, OpenAI Chat Completions, OpenAI Responses
(whose ``input`` keeps its messages, the prompt going to ``instructions``) and
Anthropic (where the replaced message's content becomes the ``system`` blocks)."""

from __future__ import annotations

from typing import Any

import pytest

from sysprompt_core.messages import (
    Role,
    anthropic_messages,
    apply_system_prompt,
    openai_chat,
    openai_responses,
)
from tests.core.messages.support import DEVELOPER, PROMPT, SYSTEM, USER

NAMED_DEVELOPER = {"role": "developer", "content": "old", "name": "planner"}

# (id, messages, role, expected messages)
ROLE_CASES: list[tuple[str, list[Any], Role, list[Any]]] = [
    ("developer replaced, role system asked: stays developer", [DEVELOPER, USER], "system",
     [{"role": "developer", "content": PROMPT}, USER]),
    ("system replaced, role developer asked: stays system", [SYSTEM, USER], "developer",
     [{"role": "system", "content": PROMPT}, USER]),
    ("developer later in the list keeps its role and place", [USER, DEVELOPER], "system",
     [USER, {"role": "developer", "content": PROMPT}]),
    ("other keys and the role kept", [NAMED_DEVELOPER], "system",
     [{"role": "developer", "content": PROMPT, "name": "planner"}]),
    ("none to replace: inserted with the role asked", [USER], "developer",
     [{"role": "developer", "content": PROMPT}, USER]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("messages", "role", "expected"),
    [case[1:] for case in ROLE_CASES],
    ids=[case[0] for case in ROLE_CASES],
)
def test_apply_system_prompt_role_of_a_replaced_message_stays(
    messages: list[Any], role: Role, expected: list[Any]
) -> None:
    once = apply_system_prompt(messages, PROMPT, role=role)
    assert once == expected
    assert apply_system_prompt(once, PROMPT, role=role) == once  # twice is once


@pytest.mark.parametrize(
    ("messages", "role", "expected"),
    [case[1:] for case in ROLE_CASES],
    ids=[case[0] for case in ROLE_CASES],
)
def test_openai_chat_role_of_a_replaced_message_stays(
    messages: list[Any], role: Role, expected: list[Any]
) -> None:
    assert openai_chat(messages, PROMPT, role=role, prompt_cache_key=False) == {
        "messages": expected
    }


def test_openai_chat_default_role_keeps_a_reasoning_models_developer_message() -> None:
    sent = openai_chat([DEVELOPER, USER], PROMPT)["messages"]
    assert sent[0] == {"role": "developer", "content": PROMPT}


def test_openai_responses_input_messages_keep_their_roles() -> None:
    kwargs = openai_responses([DEVELOPER, SYSTEM, USER], PROMPT, prompt_cache_key=False)
    assert kwargs == {"instructions": PROMPT, "input": [DEVELOPER, SYSTEM, USER]}


def test_anthropic_messages_a_replaced_developer_message_becomes_the_prompts_blocks() -> None:
    kwargs = anthropic_messages([DEVELOPER, USER, SYSTEM], PROMPT)
    assert kwargs == {
        "system": [
            {"type": "text", "text": PROMPT, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": SYSTEM["content"]},
        ],
        "messages": [USER],
    }
