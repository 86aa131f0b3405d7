"""The message functions are exported from ``sysprompt_client`` (where an agent host looks
first) as well as from ``sysprompt_core.messages``: the same objects, every name the core
module exports, typed (mypy checks this file strictly: a name that were not re-exported
explicitly, or lost its types, would fail it)."""

from __future__ import annotations

from typing import Any

import sysprompt_client
import sysprompt_core.messages
from sysprompt_client import (
    LockedPolicy,
    Prompt,
    PromptResult,
    Role,
    anthropic_messages,
    apply_system_prompt,
    openai_chat,
    openai_responses,
    with_system_prompt,
)


def test_every_message_name_of_the_core_is_exported_by_the_client() -> None:
    core = sysprompt_core.messages
    missing = sorted(set(core.__all__) - set(sysprompt_client.__all__))
    assert missing == []
    for name in core.__all__:
        assert getattr(sysprompt_client, name) is getattr(core, name), name


def test_the_client_exports_work_with_the_clients_result() -> None:
    result = PromptResult(text="Be brief.", sha256=None, shared_prefix_chars=3)
    history: list[Any] = [
        {"role": "developer", "content": "old"},
        {"role": "user", "content": "hi"},
    ]
    prompt: Prompt = result
    role: Role = "system"
    policy: LockedPolicy = "insert"

    chat: dict[str, Any] = openai_chat(history, prompt, role=role, locked_policy=policy)
    assert chat["messages"][0] == {"role": "developer", "content": "Be brief."}
    assert openai_responses(history, prompt)["instructions"] == "Be brief."
    assert anthropic_messages(history, prompt)["messages"] == [history[1]]
    assert apply_system_prompt(history, prompt) == chat["messages"]
    assert with_system_prompt([], prompt) == [{"role": "system", "content": "Be brief."}]
