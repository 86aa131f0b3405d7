"""Evaluations §2: the judge's answer is read strictly; anything else is an error."""

from __future__ import annotations

import json

import pytest

from sysprompt_core.evaluations import (
    JUDGE_SCHEMA,
    Answer,
    JudgeCheck,
    ToolCall,
    judge_messages,
    read_verdict,
)


def test_judge_messages_hold_conversation_answer_calls_and_rubric() -> None:
    messages = judge_messages(
        JudgeCheck(rubric="names the file"),
        Answer("See a.py", (ToolCall("read", '{"path": "a.py"}'),)),
        [{"role": "user", "content": "Where is main?"}],
    )

    assert [m["role"] for m in messages] == ["system", "user"]
    body = messages[1]["content"]
    assert "user: Where is main?" in body
    assert "See a.py" in body and '[tool call] read {"path": "a.py"}' in body
    assert "<rubric>\nnames the file\n</rubric>" in body


@pytest.mark.parametrize(
    ("text", "passed", "reason"),
    [
        ('{"pass": true, "reason": "It names a.py."}', True, "judge: It names a.py."),
        ('  {"reason": "No file.", "pass": false}\n', False, "judge: No file."),
        ('```json\n{"pass": true, "reason": "ok"}\n```', True, "judge: ok"),
    ],
)
def test_read_verdict_accepts_the_form(text: str, passed: bool, reason: str) -> None:
    result = read_verdict(text)

    assert (result.passed, result.reason, result.error) == (passed, reason, False)


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("PASS", "is not JSON"),
        ('{"pass": "true", "reason": "x"}', '"pass" is not true or false'),
        ('{"pass": 1, "reason": "x"}', '"pass" is not true or false'),
        ('{"pass": true}', 'exactly "pass" and "reason"'),
        ('{"pass": true, "reason": "x", "score": 5}', 'exactly "pass" and "reason"'),
        ('{"pass": true, "reason": "  "}', "non-empty"),
        ('[{"pass": true, "reason": "x"}]', 'exactly "pass" and "reason"'),
        ('Sure! {"pass": true, "reason": "x"}', "is not JSON"),
    ],
)
def test_read_verdict_refuses_anything_else_as_an_error(text: str, what: str) -> None:
    result = read_verdict(text)

    assert result.passed is False
    assert result.error is True
    assert what in result.reason


def test_judge_schema_describes_the_form_read_verdict_takes() -> None:
    assert JUDGE_SCHEMA["required"] == ["pass", "reason"]
    assert read_verdict(json.dumps({"pass": False, "reason": "r"})).error is False
