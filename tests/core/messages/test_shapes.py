"""Agent hosts §3, shapes: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages,
and the prompt_cache_key from the shared prefix (§1)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from hashlib import sha256
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sysprompt_core.messages import (
    DEFAULT_MIN_SPLIT_CHARS,
    LOCK_KEY,
    PROMPT_CACHE_KEY_MAX_LENGTH,
    MessageError,
    Prompt,
    anthropic_messages,
    anthropic_system_blocks,
    openai_chat,
    openai_responses,
    prompt_cache_key,
)
from tests.core.messages.support import (
    ASSISTANT,
    DEVELOPER,
    LOCKED,
    LOCKED_DEV,
    LOCKED_USER,
    PARTS,
    PROMPT,
    SDK_ITEM,
    SYSTEM,
    SYSTEM_2,
    TOOL_ITEM,
    USER,
    Result,
    TextOnly,
    has_marker,
    messages_strategy,
    unlocked,
)

SHARED = "S" * DEFAULT_MIN_SPLIT_CHARS  # just long enough to be split off
REST = "\nToday is Tuesday; the working directory is /srv/app."
LONG = SHARED + REST
EPHEMERAL = {"type": "ephemeral"}


def key_of(text: str) -> str:
    return ("sysprompt-" + sha256(text.encode()).hexdigest())[:64]


def block(text: str, **cache_control: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "cache_control": {"type": "ephemeral", **cache_control}}


def plain(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


# --- prompt_cache_key -------------------------------------------------------------------

# (id, prompt, shared_prefix_chars, the text hashed)
KEY_CASES: list[tuple[str, Prompt, int | None, str]] = [
    ("the shared prefix", LONG, len(SHARED), SHARED),
    ("a short prefix", "abcdef", 3, "abc"),
    ("unknown: the whole prompt", LONG, None, LONG),
    ("empty prefix: the whole prompt", LONG, 0, LONG),
    ("beyond the end: all of it", "abc", 99, "abc"),
    ("code points, not bytes", "ééééé-rest", 5, "ééééé"),
    ("from the result", Result(LONG, len(SHARED)), None, SHARED),
    ("the argument over the result's", Result("abcdef", 5), 2, "ab"),
    ("a result without a prefix", Result("abcdef", None), None, "abcdef"),
    ("an object with text only", TextOnly("abcdef"), 4, "abcd"),
    ("an empty prompt", "", None, ""),
]


@pytest.mark.parametrize(
    ("prompt", "shared", "hashed"),
    [case[1:] for case in KEY_CASES],
    ids=[case[0] for case in KEY_CASES],
)
def test_prompt_cache_key(prompt: Prompt, shared: int | None, hashed: str) -> None:
    key = prompt_cache_key(prompt, shared)
    assert key == key_of(hashed)
    assert len(key) == PROMPT_CACHE_KEY_MAX_LENGTH == 64
    assert re.fullmatch(r"sysprompt-[0-9a-f]{54}", key)


def test_prompt_cache_key_is_the_same_for_every_conversation_sharing_the_prefix() -> None:
    one = prompt_cache_key(SHARED + "conversation one", len(SHARED))
    two = prompt_cache_key(SHARED + "conversation two, longer", len(SHARED))
    other = prompt_cache_key("T" + SHARED[1:] + "conversation one", len(SHARED))
    assert one == two != other
    assert prompt_cache_key(SHARED + "one", 0) != prompt_cache_key(SHARED + "two", 0)


def test_prompt_cache_key_of_a_lone_surrogate_does_not_raise() -> None:
    assert prompt_cache_key("\ud800 text").startswith("sysprompt-")


@pytest.mark.parametrize(
    ("prompt", "shared", "message"),
    [
        (None, None, "no prompt"),
        (Result(None, 3), None, "no prompt"),
        ("abc", -1, "not -1"),
        ("abc", True, "not True"),
        (Result("abc", -2), None, "not -2"),
        ("abc", 1.5, "not 1.5"),
    ],
)
def test_prompt_cache_key_refused(prompt: Prompt, shared: Any, message: str) -> None:
    with pytest.raises(MessageError, match=message):
        prompt_cache_key(prompt, shared)


# --- OpenAI Chat Completions ------------------------------------------------------------

# (id, messages, prompt, keyword arguments, expected)
CHAT_CASES: list[tuple[str, list[Any], Prompt, dict[str, Any], dict[str, Any]]] = [
    ("system inserted, key", [USER], PROMPT, {},
     {"messages": [{"role": "system", "content": PROMPT}, USER],
      "prompt_cache_key": key_of(PROMPT)}),
    ("system replaced", [SYSTEM, USER, ASSISTANT], PROMPT, {},
     {"messages": [{"role": "system", "content": PROMPT}, USER, ASSISTANT],
      "prompt_cache_key": key_of(PROMPT)}),
    ("developer role: inserted", [USER], PROMPT, {"role": "developer"},
     {"messages": [{"role": "developer", "content": PROMPT}, USER],
      "prompt_cache_key": key_of(PROMPT)}),
    ("developer role: a system message replaced stays system", [SYSTEM, USER], PROMPT,
     {"role": "developer"},
     {"messages": [{"role": "system", "content": PROMPT}, USER],
      "prompt_cache_key": key_of(PROMPT)}),
    ("key from the shared prefix", [USER], LONG, {"shared_prefix_chars": len(SHARED)},
     {"messages": [{"role": "system", "content": LONG}, USER],
      "prompt_cache_key": key_of(SHARED)}),
    ("key from the result's prefix", [USER], Result(LONG, len(SHARED)), {},
     {"messages": [{"role": "system", "content": LONG}, USER],
      "prompt_cache_key": key_of(SHARED)}),
    ("locked: inserted before, marker stripped", [LOCKED, USER], PROMPT, {},
     {"messages": [{"role": "system", "content": PROMPT}, unlocked(LOCKED), USER],
      "prompt_cache_key": key_of(PROMPT)}),
    ("locked: left out, marker stripped", [LOCKED, LOCKED_USER], PROMPT,
     {"locked_policy": "omit"},
     {"messages": [unlocked(LOCKED), unlocked(LOCKED_USER)]}),
    ("locked: left out, the host's key still sent", [LOCKED], PROMPT,
     {"locked_policy": "omit", "prompt_cache_key": "k"},
     {"messages": [unlocked(LOCKED)], "prompt_cache_key": "k"}),
    ("no key asked", [USER], PROMPT, {"prompt_cache_key": False},
     {"messages": [{"role": "system", "content": PROMPT}, USER]}),
    ("the host's own key", [USER], PROMPT, {"prompt_cache_key": "tenant-7"},
     {"messages": [{"role": "system", "content": PROMPT}, USER],
      "prompt_cache_key": "tenant-7"}),
    ("None: messages as given, no key", [SYSTEM, LOCKED, USER], None, {},
     {"messages": [SYSTEM, unlocked(LOCKED), USER]}),
    ("None with the host's key", [USER], None, {"prompt_cache_key": "k"},
     {"messages": [USER], "prompt_cache_key": "k"}),
    ("objects passed through", [SDK_ITEM, USER], PROMPT, {"prompt_cache_key": False},
     {"messages": [{"role": "system", "content": PROMPT}, SDK_ITEM, USER]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("messages", "prompt", "options", "expected"),
    [case[1:] for case in CHAT_CASES],
    ids=[case[0] for case in CHAT_CASES],
)
def test_openai_chat(
    messages: list[Any], prompt: Prompt, options: dict[str, Any], expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(messages)
    kwargs = openai_chat(messages, prompt, **options)
    assert kwargs == expected
    assert list(kwargs) == list(expected)
    assert messages == before
    assert not has_marker(kwargs)
    # Idempotent: the request built from its own messages is the same (not with "omit",
    # where the request no longer says which message was locked).
    if options.get("locked_policy") != "omit":
        assert openai_chat(kwargs["messages"], prompt, **options) == kwargs


# --- OpenAI Responses -------------------------------------------------------------------

RESPONSES_CASES: list[tuple[str, Any, Prompt, dict[str, Any], dict[str, Any]]] = [
    ("text input", "hi", PROMPT, {},
     {"instructions": PROMPT, "input": "hi", "prompt_cache_key": key_of(PROMPT)}),
    ("list input", [USER, ASSISTANT, USER], PROMPT, {},
     {"instructions": PROMPT, "input": [USER, ASSISTANT, USER],
      "prompt_cache_key": key_of(PROMPT)}),
    ("a system message in input stays", [SYSTEM, USER], PROMPT, {},
     {"instructions": PROMPT, "input": [SYSTEM, USER], "prompt_cache_key": key_of(PROMPT)}),
    ("markers stripped", [LOCKED, TOOL_ITEM], PROMPT, {},
     {"instructions": PROMPT, "input": [unlocked(LOCKED), TOOL_ITEM],
      "prompt_cache_key": key_of(PROMPT)}),
    ("the shared prefix", "hi", LONG, {"shared_prefix_chars": len(SHARED)},
     {"instructions": LONG, "input": "hi", "prompt_cache_key": key_of(SHARED)}),
    ("a result", "hi", Result(LONG, len(SHARED)), {},
     {"instructions": LONG, "input": "hi", "prompt_cache_key": key_of(SHARED)}),
    ("no key", "hi", PROMPT, {"prompt_cache_key": False}, {"instructions": PROMPT, "input": "hi"}),
    ("None: no instructions, no key", [USER], None, {}, {"input": [USER]}),
    ("text None", "hi", Result(None, 9), {}, {"input": "hi"}),
    ("an empty prompt is sent", "hi", "", {},
     {"instructions": "", "input": "hi", "prompt_cache_key": key_of("")}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("input_", "prompt", "options", "expected"),
    [case[1:] for case in RESPONSES_CASES],
    ids=[case[0] for case in RESPONSES_CASES],
)
def test_openai_responses(
    input_: Any, prompt: Prompt, options: dict[str, Any], expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(input_)
    kwargs = openai_responses(input_, prompt, **options)
    assert kwargs == expected
    assert input_ == before
    assert not has_marker(kwargs)


def test_openai_responses_sends_instructions_on_every_call() -> None:
    first = openai_responses("first turn", PROMPT)
    later = openai_responses([{"role": "user", "content": "second turn"}], PROMPT)
    assert first["instructions"] == later["instructions"] == PROMPT
    assert first["prompt_cache_key"] == later["prompt_cache_key"]


# --- Anthropic Messages -----------------------------------------------------------------

# (id, prompt, keyword arguments, expected blocks)
BLOCK_CASES: list[tuple[str, Prompt, dict[str, Any], list[dict[str, Any]]]] = [
    ("short: one block", PROMPT, {}, [block(PROMPT)]),
    ("long prefix: two blocks", LONG, {"shared_prefix_chars": len(SHARED)},
     [block(SHARED), block(REST)]),
    ("from the result", Result(LONG, len(SHARED)), {}, [block(SHARED), block(REST)]),
    ("the argument over the result's", Result(LONG, len(SHARED)), {"shared_prefix_chars": 0},
     [block(LONG)]),
    ("prefix one short of the minimum: one block", LONG,
     {"shared_prefix_chars": len(SHARED) - 1}, [block(LONG)]),
    ("all shared: one block", LONG, {"shared_prefix_chars": len(LONG)}, [block(LONG)]),
    ("beyond the end: one block", LONG, {"shared_prefix_chars": len(LONG) + 5}, [block(LONG)]),
    ("unknown prefix: one block", LONG, {}, [block(LONG)]),
    ("a lower minimum", "abcdef", {"shared_prefix_chars": 2, "min_split_chars": 2},
     [block("ab"), block("cdef")]),
    ("ttl on both", LONG, {"shared_prefix_chars": len(SHARED), "ttl": "1h"},
     [block(SHARED, ttl="1h"), block(REST, ttl="1h")]),
    ("ttl on one", PROMPT, {"ttl": "5m"}, [block(PROMPT, ttl="5m")]),
    ("a blank rest stays with the prefix", SHARED + "\n\n", {"shared_prefix_chars": len(SHARED)},
     [block(SHARED + "\n\n")]),
    ("a blank prefix stays with the rest", " " * 5000 + "x", {"shared_prefix_chars": 5000},
     [block(" " * 5000 + "x")]),
    ("None: no block", None, {}, []),
    ("text None: no block", Result(None, 10), {}, []),
    ("empty: no block", "", {}, []),
    ("blank: no block", " \n\t", {}, []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("prompt", "options", "expected"),
    [case[1:] for case in BLOCK_CASES],
    ids=[case[0] for case in BLOCK_CASES],
)
def test_anthropic_system_blocks(
    prompt: Prompt, options: dict[str, Any], expected: list[dict[str, Any]]
) -> None:
    blocks = anthropic_system_blocks(prompt, **options)
    assert blocks == expected
    assert "".join(b["text"] for b in blocks) == (
        (getattr(prompt, "text", prompt) or "") if blocks else ""
    )
    if len(blocks) == 2:
        assert blocks[0]["cache_control"] is not blocks[1]["cache_control"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: anthropic_system_blocks(PROMPT, min_split_chars=0), "min_split_chars"),
        (lambda: anthropic_system_blocks(PROMPT, shared_prefix_chars=-3), "not -3"),
        (lambda: anthropic_messages([], PROMPT, min_split_chars=-1), "min_split_chars"),
        (lambda: anthropic_messages([], PROMPT, locked_policy="x"), "locked_policy"),  # type: ignore[arg-type]
        (lambda: openai_chat([], PROMPT, prompt_cache_key="k" * 65), "this one has 65"),
        (lambda: openai_chat([], PROMPT, prompt_cache_key=""), "this one has 0"),
        (lambda: openai_responses("x", PROMPT, prompt_cache_key="k" * 65), "1 to 64"),
        (lambda: openai_chat([], PROMPT, role="user"), "not 'user'"),  # type: ignore[arg-type]
    ],
)
def test_shapes_refuse(call: Callable[[], object], message: str) -> None:
    with pytest.raises(MessageError, match=message):
        call()


def test_a_64_character_key_is_accepted() -> None:
    assert openai_chat([], PROMPT, prompt_cache_key="k" * 64)["prompt_cache_key"] == "k" * 64


# (id, messages, prompt, keyword arguments, expected)
ANTHROPIC_CASES: list[tuple[str, list[Any], Prompt, dict[str, Any], dict[str, Any]]] = [
    ("no system message", [USER], PROMPT, {},
     {"system": [block(PROMPT)], "messages": [USER]}),
    ("the system message replaced and removed", [SYSTEM, USER, ASSISTANT], PROMPT, {},
     {"system": [block(PROMPT)], "messages": [USER, ASSISTANT]}),
    ("a developer message is a system message", [DEVELOPER, USER], PROMPT, {},
     {"system": [block(PROMPT)], "messages": [USER]}),
    ("other system messages follow the prompt, in order", [SYSTEM, USER, SYSTEM_2, DEVELOPER],
     PROMPT, {},
     {"system": [block(PROMPT), plain(SYSTEM_2["content"]), plain(DEVELOPER["content"])],
      "messages": [USER]}),
    ("split at the shared prefix", [USER], LONG, {"shared_prefix_chars": len(SHARED)},
     {"system": [block(SHARED), block(REST)], "messages": [USER]}),
    ("a result, ttl", [USER], Result(LONG, len(SHARED)), {"ttl": "1h"},
     {"system": [block(SHARED, ttl="1h"), block(REST, ttl="1h")], "messages": [USER]}),
    ("locked: the prompt first, the planner after", [LOCKED, USER], PROMPT, {},
     {"system": [block(PROMPT), plain(LOCKED["content"])], "messages": [USER]}),
    ("locked developer", [USER, LOCKED_DEV], PROMPT, {},
     {"system": [block(PROMPT), plain(LOCKED_DEV["content"])], "messages": [USER]}),
    ("locked, left out", [LOCKED, USER], PROMPT, {"locked_policy": "omit"},
     {"system": [plain(LOCKED["content"])], "messages": [USER]}),
    ("None: the host's system messages moved", [SYSTEM, USER, LOCKED], None, {},
     {"system": [plain(SYSTEM["content"]), plain(LOCKED["content"])], "messages": [USER]}),
    ("None, no system message: no system", [USER, ASSISTANT], None, {},
     {"messages": [USER, ASSISTANT]}),
    ("a blank prompt: no block", [USER], "  ", {}, {"messages": [USER]}),
    ("content in parts kept", [SYSTEM, PARTS, USER], PROMPT, {},
     {"system": [block(PROMPT), plain("in parts")], "messages": [USER]}),
    ("blank system content dropped", [SYSTEM, {"role": "system", "content": " "},
     {"role": "system", "content": ["", "a part", {"type": "text", "text": "b"}]},
     {"role": "system"}], PROMPT, {},
     {"system": [block(PROMPT), plain("a part"), plain("b")], "messages": []}),
    ("markers stripped from messages", [LOCKED_USER, TOOL_ITEM], PROMPT, {},
     {"system": [block(PROMPT)], "messages": [unlocked(LOCKED_USER), TOOL_ITEM]}),
    ("objects passed through", [SDK_ITEM, USER], PROMPT, {},
     {"system": [block(PROMPT)], "messages": [SDK_ITEM, USER]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("messages", "prompt", "options", "expected"),
    [case[1:] for case in ANTHROPIC_CASES],
    ids=[case[0] for case in ANTHROPIC_CASES],
)
def test_anthropic_messages(
    messages: list[Any], prompt: Prompt, options: dict[str, Any], expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(messages)
    kwargs = anthropic_messages(messages, prompt, **options)
    assert kwargs == expected
    assert messages == before
    assert not has_marker(kwargs)
    assert not any(isinstance(m, dict) and m.get("role") in ("system", "developer")
                   for m in kwargs["messages"])  # fmt: skip
    # At most two cache breakpoints of the four a request may have: the host keeps two.
    assert sum("cache_control" in b for b in kwargs.get("system", [])) <= 2


def test_anthropic_messages_keeps_the_hosts_other_messages_as_they_are() -> None:
    messages: list[Any] = [SYSTEM, USER, ASSISTANT]
    kwargs = anthropic_messages(messages, PROMPT)
    assert kwargs["messages"][0] is USER and kwargs["messages"][1] is ASSISTANT


# --- every shape: nothing mutated, no marker leaks ---------------------------------------

SHAPES: list[tuple[str, Callable[[list[Any], Prompt], dict[str, Any]]]] = [
    ("openai_chat", lambda m, p: openai_chat(m, p)),
    ("openai_chat developer omit", lambda m, p: openai_chat(
        m, p, role="developer", locked_policy="omit")),
    ("openai_responses", lambda m, p: openai_responses(m, p)),
    ("anthropic_messages", lambda m, p: anthropic_messages(m, p, shared_prefix_chars=3,
                                                           min_split_chars=1)),
    ("anthropic_messages omit", lambda m, p: anthropic_messages(m, p, locked_policy="omit")),
]  # fmt: skip


@pytest.mark.parametrize("shape", [s[1] for s in SHAPES], ids=[s[0] for s in SHAPES])
@given(messages=messages_strategy, prompt=st.one_of(st.none(), st.just(PROMPT)))
def test_shapes_never_mutate_and_never_leak_the_marker(
    shape: Callable[[list[Any], Prompt], dict[str, Any]], messages: list[Any], prompt: Prompt
) -> None:
    before = copy.deepcopy(messages)
    kwargs = shape(messages, prompt)
    assert messages == before
    assert LOCK_KEY not in json.dumps(kwargs, default=repr)
