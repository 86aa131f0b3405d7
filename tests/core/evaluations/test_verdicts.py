"""Evaluations §3: pass rates over repetitions and the case's verdict."""

from __future__ import annotations

import pytest

from sysprompt_core.evaluations import Repetition, pass_rate, verdict

OK = Repetition((True, True))
BAD = Repetition((True, False))
ERR = Repetition((), error="HTTP 500")


@pytest.mark.parametrize(
    ("repetitions", "rate"),
    [([], 0.0), ([OK], 1.0), ([BAD], 0.0), ([OK, BAD, OK, BAD], 0.5), ([OK, ERR], 0.5)],
)
def test_pass_rate_is_the_share_of_repetitions_passing_every_check(
    repetitions: list[Repetition], rate: float
) -> None:
    assert pass_rate(repetitions) == rate


@pytest.mark.parametrize(
    ("baseline", "candidate", "expected"),
    [
        ([OK], [BAD], "regression"),
        ([OK, OK], [OK, BAD], "regression"),
        ([BAD], [OK], "fix"),
        ([OK], [OK], "same_pass"),
        ([BAD], [BAD], "same_fail"),
        ([OK, BAD], [BAD, OK], "same_fail"),
        ([OK], [ERR], "error"),
        ([ERR], [OK], "error"),
        ([OK, ERR], [OK, OK], "error"),
    ],
)
def test_verdict_compares_the_sides(
    baseline: list[Repetition], candidate: list[Repetition], expected: str
) -> None:
    assert verdict(baseline, candidate) == expected


def test_repetition_with_no_checks_passes() -> None:
    assert Repetition(()).passed is True
