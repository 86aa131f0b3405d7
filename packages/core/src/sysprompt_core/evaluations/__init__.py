"""Evaluations, as pure functions: no Django, no I/O, no model call.

* ``checks``   — :func:`parse_checks` (the JSON form, refused with the part named) and
  :func:`run_check` (``passed`` and a ``reason``);
* ``patterns`` — an author's regular expression measured before it is compiled (repeat
  counts, nesting, the size the ``regex`` module would build), never cached, run with
  a time limit;
* ``schemas``  — the ``json_schema`` check: a schema bounded before it is checked,
  answers validated with nothing fetched and every pattern time-limited;
* ``judge``    — the ``judge`` check's messages to the judge model (the graded answer a
  JSON string) and the strict reading of its answer;
* ``verdicts`` — a side's pass rate over its repetitions and a case's verdict
  (``regression``, ``fix``, ``same_pass``, ``same_fail``, ``error``);
* ``keys``     — :func:`response_key`, the response cache's key;
* ``answers``  — :class:`Answer` and :class:`ToolCall`, what a model said;
* ``report``   — what a finished run means to a CI job (exit code, summary, JUnit).

``checks`` and ``judge`` need the extra ``[evaluations]`` of sysprompt-core (jsonschema
and regex); their names here are imported when first used, so the rest imports without
it. The server (``sysprompt.evaluations``) stores suites, cases and runs, calls the
models and feeds these functions.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sysprompt_core.errors import InvalidCheck
from sysprompt_core.evaluations.answers import Answer, ToolCall
from sysprompt_core.evaluations.keys import canonical_json, response_key
from sysprompt_core.evaluations.verdicts import VERDICTS, Repetition, Verdict, pass_rate, verdict

if TYPE_CHECKING:
    from sysprompt_core.evaluations.checks import (
        CHECK_TYPES,
        Check,
        CheckResult,
        JudgeCheck,
        parse_check,
        parse_checks,
        run_check,
    )
    from sysprompt_core.evaluations.judge import (
        JUDGE_SCHEMA,
        JUDGE_SYSTEM_PROMPT,
        judge_messages,
        read_verdict,
    )

__all__ = [
    "CHECK_TYPES",
    "JUDGE_SCHEMA",
    "JUDGE_SYSTEM_PROMPT",
    "VERDICTS",
    "Answer",
    "Check",
    "CheckResult",
    "InvalidCheck",
    "JudgeCheck",
    "Repetition",
    "ToolCall",
    "Verdict",
    "canonical_json",
    "judge_messages",
    "parse_check",
    "parse_checks",
    "pass_rate",
    "read_verdict",
    "response_key",
    "run_check",
    "verdict",
]

_CHECKS = ("CHECK_TYPES", "Check", "CheckResult", "JudgeCheck", "parse_check", "parse_checks")
_JUDGE = ("JUDGE_SCHEMA", "JUDGE_SYSTEM_PROMPT", "judge_messages", "read_verdict")
_LAZY = {**dict.fromkeys((*_CHECKS, "run_check"), "checks"), **dict.fromkeys(_JUDGE, "judge")}
"""The names of ``checks`` and ``judge``, imported when first used: they need the extra
``[evaluations]`` (jsonschema, regex), which ``report``, ``verdicts`` and ``keys`` do
not (the client's ``sysprompt-eval`` imports ``report``)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
