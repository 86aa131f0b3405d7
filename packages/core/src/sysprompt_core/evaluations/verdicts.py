"""Pass rates and verdicts: how one case compares across the two sides of a run.

A side runs each case ``repeat`` times. A **repetition passes** when every check
passed; the side's **pass rate** is the share of repetitions that passed. The case's
**verdict**:

* ``error``      — a repetition of either side ended in an error (the model call
  failed, or a judge could not be asked): nothing is concluded;
* ``regression`` — the candidate's pass rate is below the baseline's;
* ``fix``        — above it;
* ``same_pass``  — equal, and every repetition of both sides passed;
* ``same_fail``  — equal, and some repetition failed (on both sides alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["VERDICTS", "Repetition", "Verdict", "pass_rate", "verdict"]

Verdict: TypeAlias = Literal["regression", "fix", "same_pass", "same_fail", "error"]
VERDICTS: tuple[Verdict, ...] = ("regression", "fix", "same_pass", "same_fail", "error")


@dataclass(frozen=True, slots=True)
class Repetition:
    """One repetition of one side: each check's outcome, or the error that stopped it."""

    checks_passed: tuple[bool, ...]
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and all(self.checks_passed)


def pass_rate(repetitions: Sequence[Repetition]) -> float:
    """The share of ``repetitions`` where every check passed (0.0 when there are none)."""
    if not repetitions:
        return 0.0
    return sum(1 for repetition in repetitions if repetition.passed) / len(repetitions)


def verdict(baseline: Sequence[Repetition], candidate: Sequence[Repetition]) -> Verdict:
    """The case's verdict from both sides' repetitions (see the module docstring)."""
    if any(r.error is not None for r in (*baseline, *candidate)):
        return "error"
    before, after = pass_rate(baseline), pass_rate(candidate)
    if after < before:
        return "regression"
    if after > before:
        return "fix"
    return "same_pass" if before == 1.0 else "same_fail"
