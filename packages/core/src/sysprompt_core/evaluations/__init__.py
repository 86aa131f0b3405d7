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
* ``answers``  — :class:`Answer` and :class:`ToolCall`, what a model said.

The server (``sysprompt.evaluations``) stores suites, cases and runs, calls the models
and feeds these functions.
"""

from sysprompt_core.errors import InvalidCheck
from sysprompt_core.evaluations.answers import Answer, ToolCall
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
from sysprompt_core.evaluations.keys import canonical_json, response_key
from sysprompt_core.evaluations.verdicts import VERDICTS, Repetition, Verdict, pass_rate, verdict

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
