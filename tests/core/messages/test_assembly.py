"""Agent hosts §3: prepend (never stored), replace or insert (idempotent, locks), markers."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sysprompt_core.errors import CoreError
from sysprompt_core.messages import (
    LOCK_KEY,
    LockedPolicy,
    MessageError,
    Prompt,
    Role,
    apply_system_prompt,
    is_locked,
    is_system,
    lock,
    prompt_text,
    strip_markers,
    with_system_prompt,
)
from tests.core.messages.support import (
    ASSISTANT,
    DEVELOPER,
    LOCKED,
    LOCKED_DEV,
    LOCKED_USER,
    NAMED,
    PARTS,
    PROMPT,
    SDK_ITEM,
    SYSTEM,
    SYSTEM_2,
    TOOL_ITEM,
    UNLOCKED_FALSE,
    USER,
    Result,
    TextOnly,
    has_marker,
    messages_strategy,
    unlocked,
)

P_SYSTEM = {"role": "system", "content": PROMPT}
P_DEVELOPER = {"role": "developer", "content": PROMPT}

# (id, messages, prompt, role, locked_policy, expected)
APPLY_CASES: list[tuple[str, list[Any], Prompt, Role, LockedPolicy, list[Any]]] = [
    ("empty: inserted", [], PROMPT, "system", "insert", [P_SYSTEM]),
    ("no system: inserted first", [USER, ASSISTANT], PROMPT, "system", "insert",
     [P_SYSTEM, USER, ASSISTANT]),
    ("system replaced", [SYSTEM, USER], PROMPT, "system", "insert", [P_SYSTEM, USER]),
    ("first system replaced where it is", [USER, SYSTEM, ASSISTANT], PROMPT, "system", "insert",
     [USER, P_SYSTEM, ASSISTANT]),
    ("only the first system replaced", [SYSTEM, SYSTEM_2, USER], PROMPT, "system", "insert",
     [P_SYSTEM, SYSTEM_2, USER]),
    ("developer is a system message, its role kept", [DEVELOPER, USER], PROMPT, "system",
     "insert", [P_DEVELOPER, USER]),
    ("developer role: inserted", [USER], PROMPT, "developer", "insert", [P_DEVELOPER, USER]),
    ("developer role: system replaced, its role kept", [SYSTEM, USER], PROMPT, "developer",
     "insert", [P_SYSTEM, USER]),
    ("developer role: developer replaced", [DEVELOPER, USER], PROMPT, "developer", "insert",
     [P_DEVELOPER, USER]),
    ("other keys kept", [NAMED, USER], PROMPT, "system", "insert",
     [{"role": "system", "content": PROMPT, "name": "boss"}, USER]),
    ("content in parts replaced by the text", [PARTS], PROMPT, "system", "insert", [P_SYSTEM]),
    ("locked: inserted before it", [LOCKED, USER], PROMPT, "system", "insert",
     [P_SYSTEM, LOCKED, USER]),
    ("locked: left out", [LOCKED, USER], PROMPT, "system", "omit", [LOCKED, USER]),
    ("locked later: inserted at 0", [USER, LOCKED, SYSTEM], PROMPT, "system", "insert",
     [P_SYSTEM, USER, LOCKED, SYSTEM]),
    ("locked later: left out, the next system untouched", [USER, LOCKED, SYSTEM], PROMPT,
     "system", "omit", [USER, LOCKED, SYSTEM]),
    ("locked developer, developer role", [LOCKED_DEV, USER], PROMPT, "developer", "insert",
     [P_DEVELOPER, LOCKED_DEV, USER]),
    ("unlocked first, locked second: first replaced", [SYSTEM, LOCKED], PROMPT, "system",
     "omit", [P_SYSTEM, LOCKED]),
    ("a false marker does not lock", [UNLOCKED_FALSE], PROMPT, "system", "omit",
     [{**UNLOCKED_FALSE, "content": PROMPT}]),
    ("a locked user message is no system message", [LOCKED_USER], PROMPT, "system", "omit",
     [P_SYSTEM, LOCKED_USER]),
    ("item without role passed through", [TOOL_ITEM, USER], PROMPT, "system", "insert",
     [P_SYSTEM, TOOL_ITEM, USER]),
    ("an SDK object is never a system message", [SDK_ITEM, USER], PROMPT, "system", "insert",
     [P_SYSTEM, SDK_ITEM, USER]),
    ("None: nothing removed or inserted", [SYSTEM, LOCKED, USER], None, "system", "insert",
     [SYSTEM, LOCKED, USER]),
    ("None, empty", [], None, "developer", "omit", []),
    ("text None: no prompt", [SYSTEM, USER], Result(None, 3), "system", "insert",
     [SYSTEM, USER]),
    ("a result's text", [SYSTEM, USER], Result(PROMPT, 5), "system", "insert", [P_SYSTEM, USER]),
    ("an object with text only", [USER], TextOnly(PROMPT), "system", "insert",
     [P_SYSTEM, USER]),
    ("an empty prompt is a prompt", [SYSTEM, USER], "", "system", "insert",
     [{"role": "system", "content": ""}, USER]),
]  # fmt: skip

APPLY_IDS = [case[0] for case in APPLY_CASES]


@pytest.mark.parametrize(
    ("messages", "prompt", "role", "policy", "expected"),
    [case[1:] for case in APPLY_CASES],
    ids=APPLY_IDS,
)
def test_apply_system_prompt(
    messages: list[Any], prompt: Prompt, role: Role, policy: LockedPolicy, expected: list[Any]
) -> None:
    before = copy.deepcopy(messages)
    result = apply_system_prompt(messages, prompt, role=role, locked_policy=policy)
    assert result == expected
    assert messages == before  # the caller's list and dicts, deep-compared
    assert result is not messages
    # Twice is once.
    assert apply_system_prompt(result, prompt, role=role, locked_policy=policy) == result
    # Messages that did not change are the caller's own objects (a shallow copy).
    originals = {id(message) for message in messages}
    changed = [m for m in result if id(m) not in originals]
    assert len(changed) <= 1
    if changed:
        assert changed[0] == {**changed[0], "content": prompt_text(prompt)}


@pytest.mark.parametrize(
    ("messages", "prompt", "role", "policy", "expected"),
    [case[1:] for case in APPLY_CASES],
    ids=APPLY_IDS,
)
def test_apply_then_strip_never_leaks_the_marker(
    messages: list[Any], prompt: Prompt, role: Role, policy: LockedPolicy, expected: list[Any]
) -> None:
    stripped = strip_markers(apply_system_prompt(messages, prompt, role=role, locked_policy=policy))
    assert not has_marker(stripped)
    assert stripped == strip_markers(expected)


def test_apply_keeps_the_marker_so_twice_is_once_when_left_out() -> None:
    once = apply_system_prompt([LOCKED, USER], PROMPT, locked_policy="omit")
    assert once[0] is LOCKED
    assert apply_system_prompt(once, PROMPT, locked_policy="omit") == [LOCKED, USER]
    # Without the marker the planner's message would be replaced: why apply keeps it.
    assert apply_system_prompt(strip_markers(once), PROMPT, locked_policy="omit") == [
        P_SYSTEM,
        USER,
    ]


def test_apply_accepts_any_iterable() -> None:
    assert apply_system_prompt(iter([SYSTEM, USER]), PROMPT) == [P_SYSTEM, USER]
    assert apply_system_prompt((m for m in [USER]), None) == [USER]


# (id, messages, prompt, role, expected)
PREPEND_CASES: list[tuple[str, list[Any], Prompt, Role, list[Any]]] = [
    ("empty", [], PROMPT, "system", [P_SYSTEM]),
    ("first", [USER, ASSISTANT], PROMPT, "system", [P_SYSTEM, USER, ASSISTANT]),
    ("does not look for a system message", [SYSTEM, USER], PROMPT, "system",
     [P_SYSTEM, SYSTEM, USER]),
    ("developer role", [USER], PROMPT, "developer", [P_DEVELOPER, USER]),
    ("markers stripped", [LOCKED, USER], PROMPT, "system", [P_SYSTEM, unlocked(LOCKED), USER]),
    ("None: a copy", [SYSTEM, USER], None, "system", [SYSTEM, USER]),
    ("None: a copy without markers", [LOCKED_USER], None, "system", [unlocked(LOCKED_USER)]),
    ("a result", [USER], Result(PROMPT, 3), "system", [P_SYSTEM, USER]),
    ("a result without text", [USER], Result(None), "system", [USER]),
    ("objects passed through", [SDK_ITEM, TOOL_ITEM], PROMPT, "system",
     [P_SYSTEM, SDK_ITEM, TOOL_ITEM]),
    ("an empty prompt", [USER], "", "system", [{"role": "system", "content": ""}, USER]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("messages", "prompt", "role", "expected"),
    [case[1:] for case in PREPEND_CASES],
    ids=[case[0] for case in PREPEND_CASES],
)
def test_with_system_prompt(
    messages: list[Any], prompt: Prompt, role: Role, expected: list[Any]
) -> None:
    before = copy.deepcopy(messages)
    result = with_system_prompt(messages, prompt, role=role)
    assert result == expected
    assert messages == before
    assert result is not messages
    assert not has_marker(result)
    # The caller's unmarked messages are its own objects, in a new list.
    for message in messages:
        if not is_locked(message):
            assert any(item is message for item in result)


def test_with_system_prompt_prepends_on_every_call_and_the_history_never_holds_it() -> None:
    history: list[Any] = []
    sent = []
    for turn in ("one", "two", "three"):
        history.append({"role": "user", "content": turn})
        sent.append(with_system_prompt(history, PROMPT))
        history.append({"role": "assistant", "content": turn.upper()})
    assert all(call[0] == P_SYSTEM for call in sent)
    assert all(message.get("role") != "system" for message in history)
    assert [len(call) for call in sent] == [2, 4, 6]


def test_with_system_prompt_twice_prepends_twice() -> None:
    assert with_system_prompt(with_system_prompt([USER], PROMPT), PROMPT) == [
        P_SYSTEM,
        P_SYSTEM,
        USER,
    ]


# (id, messages, expected)
STRIP_CASES: list[tuple[str, list[Any], list[Any]]] = [
    ("nothing marked", [SYSTEM, USER], [SYSTEM, USER]),
    ("marked", [LOCKED, LOCKED_USER], [unlocked(LOCKED), unlocked(LOCKED_USER)]),
    ("false marker removed too", [UNLOCKED_FALSE], [unlocked(UNLOCKED_FALSE)]),
    ("objects", [SDK_ITEM, TOOL_ITEM], [SDK_ITEM, TOOL_ITEM]),
    ("empty", [], []),
]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [case[1:] for case in STRIP_CASES],
    ids=[case[0] for case in STRIP_CASES],
)
def test_strip_markers(messages: list[Any], expected: list[Any]) -> None:
    before = copy.deepcopy(messages)
    result = strip_markers(messages)
    assert result == expected
    assert messages == before
    assert not has_marker(result)
    for original, stripped in zip(messages, result, strict=True):
        assert (stripped is original) == (
            not isinstance(original, dict) or LOCK_KEY not in original
        )


def test_lock_and_predicates() -> None:
    message = {"role": "system", "content": "x"}
    locked = lock(message)
    assert locked == {"role": "system", "content": "x", LOCK_KEY: True}
    assert message == {"role": "system", "content": "x"}
    assert is_locked(locked) and not is_locked(message) and not is_locked(UNLOCKED_FALSE)
    assert not is_locked(SDK_ITEM)
    assert is_system(SYSTEM) and is_system(DEVELOPER) and is_system(LOCKED)
    assert not is_system(USER) and not is_system(TOOL_ITEM) and not is_system(SDK_ITEM)


@pytest.mark.parametrize(
    ("prompt", "text"),
    [(PROMPT, PROMPT), ("", ""), (None, None), (Result(PROMPT, 4), PROMPT), (Result(None), None)],
)
def test_prompt_text(prompt: Prompt, text: str | None) -> None:
    assert prompt_text(prompt) == text


@pytest.mark.parametrize("prompt", [42, b"bytes", TextOnly(7)])  # type: ignore[arg-type]
def test_prompt_of_another_type_is_refused(prompt: Any) -> None:
    with pytest.raises(TypeError, match="A prompt is a string, None"):
        prompt_text(prompt)
    with pytest.raises(TypeError):
        apply_system_prompt([USER], prompt)


REFUSED: list[tuple[str, Callable[[], object], str]] = [
    ("apply role", lambda: apply_system_prompt([], PROMPT, role="user"),  # type: ignore[arg-type]
     "role is 'system' or 'developer', not 'user'"),
    ("apply role without prompt", lambda: apply_system_prompt([], None, role="tool"),  # type: ignore[arg-type]
     "not 'tool'"),
    ("prepend role", lambda: with_system_prompt([], PROMPT, role="assistant"),  # type: ignore[arg-type]
     "not 'assistant'"),
    ("prepend role without prompt", lambda: with_system_prompt([], None, role=""),  # type: ignore[arg-type]
     "not ''"),
    ("policy", lambda: apply_system_prompt([], PROMPT, locked_policy="replace"),  # type: ignore[arg-type]
     "locked_policy is 'insert' or 'omit'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "message"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED]
)
def test_refused_arguments(call: Callable[[], object], message: str) -> None:
    with pytest.raises(MessageError, match=message) as caught:
        call()
    assert isinstance(caught.value, CoreError) and isinstance(caught.value, ValueError)


@given(
    messages=messages_strategy,
    prompt=st.one_of(st.none(), st.just(PROMPT)),
    role=st.sampled_from(["system", "developer"]),
    policy=st.sampled_from(["insert", "omit"]),
)
def test_apply_properties(
    messages: list[Any], prompt: str | None, role: Role, policy: LockedPolicy
) -> None:
    before = copy.deepcopy(messages)
    result = apply_system_prompt(messages, prompt, role=role, locked_policy=policy)
    assert messages == before
    assert apply_system_prompt(result, prompt, role=role, locked_policy=policy) == result
    # Only system messages change: everything else is kept, in order, as the same objects.
    others = [m for m in messages if not is_system(m)]
    assert [m for m in result if not is_system(m)] == others
    assert all(any(r is m for r in result) for m in others)
    # Locked messages are never replaced.
    assert [m for m in result if is_locked(m) and is_system(m)] == [
        m for m in messages if is_locked(m) and is_system(m)
    ]
    firsts = [m for m in messages if is_system(m)][:1]
    prompts = [m for m in result if isinstance(m, dict) and m.get("content") == PROMPT]
    if prompt is None or (policy == "omit" and firsts and is_locked(firsts[0])):
        assert result == messages
    else:
        assert len(prompts) == 1
        replaced = firsts and not is_locked(firsts[0])
        assert prompts[0]["role"] == (firsts[0]["role"] if replaced else role)
        assert len(result) == len(messages) + (0 if firsts and not is_locked(firsts[0]) else 1)
        assert [m for m in result if is_system(m)][0] is prompts[0]
    assert not has_marker(strip_markers(result))


@given(messages=messages_strategy, prompt=st.one_of(st.none(), st.just(PROMPT)))
def test_with_system_prompt_properties(messages: list[Any], prompt: str | None) -> None:
    before = copy.deepcopy(messages)
    result = with_system_prompt(messages, prompt)
    assert messages == before
    assert result[len(result) - len(messages) :] == strip_markers(messages)
    assert result[:1] == ([P_SYSTEM] if prompt is not None else strip_markers(messages)[:1])
    assert not has_marker(result)
