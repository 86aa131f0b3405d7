"""Messages and strategies the message-assembly tests share."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from sysprompt_core.messages import LOCK_KEY, lock

PROMPT = "You are the frozen prompt."

USER = {"role": "user", "content": "hi"}
ASSISTANT = {"role": "assistant", "content": "hello"}
SYSTEM = {"role": "system", "content": "the host's own"}
SYSTEM_2 = {"role": "system", "content": "a second one"}
DEVELOPER = {"role": "developer", "content": "the host's developer message"}
NAMED = {"role": "system", "content": "old", "name": "boss"}
PARTS = {"role": "system", "content": [{"type": "text", "text": "in parts"}]}
LOCKED = lock({"role": "system", "content": "the planner's prompt"})
LOCKED_DEV = lock({"role": "developer", "content": "the planner's developer prompt"})
LOCKED_USER = lock({"role": "user", "content": "a locked user message"})
UNLOCKED_FALSE = {"role": "system", "content": "marker false", LOCK_KEY: False}
TOOL_ITEM = {"type": "function_call_output", "call_id": "call_1", "output": "42"}


@dataclass(frozen=True)
class SdkItem:
    """Stands for an SDK object a host appended from a response: not a mapping."""

    role: str = "system"
    content: str = "an object, never taken for a system message"


SDK_ITEM = SdkItem()


@dataclass(frozen=True)
class Result:
    """Stands for the client's result: ``text`` and ``shared_prefix_chars``."""

    text: str | None
    shared_prefix_chars: int | None = None


@dataclass(frozen=True)
class TextOnly:
    """A prompt object with ``text`` only."""

    text: str | None


def unlocked(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != LOCK_KEY}


def has_marker(value: Any) -> bool:
    """Whether ``LOCK_KEY`` appears anywhere in ``value`` (objects as their repr)."""
    return LOCK_KEY in json.dumps(value, default=repr)


_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)

message_strategy: st.SearchStrategy[Any] = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
            "content": st.one_of(
                _text, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _text}))
            ),
        },
        optional={LOCK_KEY: st.booleans(), "name": _text},
    ),
    st.just(TOOL_ITEM),
    st.builds(SdkItem, role=st.sampled_from(["system", "user"])),
)
messages_strategy = st.lists(message_strategy, max_size=8)
