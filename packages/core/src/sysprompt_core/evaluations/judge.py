"""The ``judge`` check: a judge model's pass or fail, asked and read strictly.

The caller (the server's evaluation worker) sends :func:`judge_messages` to the judge
model — with :data:`JUDGE_SCHEMA` as the structured-output schema where the provider
takes one — and gives the answer's text to :func:`read_verdict`. Only an answer that is
exactly one JSON object ``{"pass": true|false, "reason": "<non-empty text>"}`` counts
(surrounding whitespace and one Markdown code fence are tolerated); anything else is an
*error* of the check, never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from sysprompt_core.evaluations.answers import Answer
from sysprompt_core.evaluations.checks import CheckResult, JudgeCheck

__all__ = ["JUDGE_SCHEMA", "JUDGE_SYSTEM_PROMPT", "judge_messages", "read_verdict"]

JUDGE_SYSTEM_PROMPT = (
    "You grade an AI assistant's answer against a rubric. Read the conversation, the "
    "assistant's answer and the rubric. Answer with exactly one JSON object and nothing "
    'else: {"pass": true or false, "reason": "one sentence saying why"}.'
)
JUDGE_SCHEMA: Mapping[str, object] = {
    "type": "object",
    "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["pass", "reason"],
    "additionalProperties": False,
}
_REASON_MAX_CHARS = 2_000


def judge_messages(
    check: JudgeCheck, answer: Answer, conversation: Sequence[Mapping[str, object]]
) -> list[dict[str, str]]:
    """The judge model's messages: its instructions, then one user turn holding the
    conversation so far, the answer (with its tool calls) and the rubric."""
    turns = "\n".join(f"{turn.get('role')}: {turn.get('content')}" for turn in conversation)
    calls = "".join(
        f"\n[tool call] {call.name} {json.dumps(call.as_json()['arguments'], ensure_ascii=False)}"
        for call in answer.tool_calls
    )
    body = (
        f"<conversation>\n{turns}\n</conversation>\n"
        f"<answer>\n{answer.text}{calls}\n</answer>\n"
        f"<rubric>\n{check.rubric}\n</rubric>"
    )
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT}, {"role": "user", "content": body}]


def read_verdict(text: str) -> CheckResult:
    """The judge's answer as a check result; ``error`` when it is not of the form."""
    body = _unfenced(text.strip())
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return _malformed(text, "is not JSON")
    if not isinstance(value, dict) or set(value) != {"pass", "reason"}:
        return _malformed(text, 'is not an object of exactly "pass" and "reason"')
    passed, reason = value["pass"], value["reason"]
    if not isinstance(passed, bool):
        return _malformed(text, '"pass" is not true or false')
    if not isinstance(reason, str) or not reason.strip():
        return _malformed(text, '"reason" is not a non-empty string')
    return CheckResult("judge", passed, f"judge: {reason.strip()[:_REASON_MAX_CHARS]}")


def _unfenced(text: str) -> str:
    if text.startswith("```") and text.endswith("```") and text.count("```") == 2:
        inner = text[3:-3]
        first, _, rest = inner.partition("\n")
        return (rest if first.strip() in ("", "json") else inner).strip()
    return text


def _malformed(text: str, what: str) -> CheckResult:
    shown = text if len(text) <= 200 else text[:200] + "…"
    return CheckResult("judge", False, f"the judge's answer {what}: {shown!r}", error=True)
