"""A label's gate: moves it refuses until an evaluation run says the release is good.

A gate is ``{"suite", "max_regressions", "min_pass_rate"}`` stored on the label
(:class:`Gate`, checked by :func:`gate_valid`). Every move of a label goes through
``services._label_write`` (``label_set``, ``label_rollback``, ``release_publish``),
which asks :func:`move_reasons` what is missing before it writes.

The evidence — finished runs of the suite — lives in ``sysprompt.evaluations``, an app
*above* this one in the layers (it renders releases), so this module cannot import it.
The dependency is inverted: this module defines what it needs (:class:`GateEvidence`,
two methods) and the evaluations app registers its implementation in its
``AppConfig.ready()`` (:func:`evidence_register`). Without one, every gated move is
refused (fail closed), and no gate can be set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sysprompt.errors import InvalidInput
from sysprompt.releases.validation import label_name_valid
from sysprompt_core.releases import LATEST, Target

__all__ = [
    "Gate",
    "GateEvidence",
    "evidence_register",
    "gate_valid",
    "move_reasons",
]

MAX_REGRESSIONS_LIMIT = 1_000_000


@dataclass(frozen=True)
class Gate:
    """What a move of a gated label needs: a finished run of ``suite`` with at most
    ``max_regressions`` regressions and a candidate pass rate of at least
    ``min_pass_rate`` (0 to 1)."""

    suite: str
    max_regressions: int = 0
    min_pass_rate: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "max_regressions": self.max_regressions,
            "min_pass_rate": self.min_pass_rate,
        }

    @classmethod
    def from_json(cls, value: Any) -> Gate | None:
        """The stored gate (``None``: the label has none); stored values were checked."""
        if not isinstance(value, dict):
            return None
        return cls(
            suite=str(value["suite"]),
            max_regressions=int(value.get("max_regressions", 0)),
            min_pass_rate=float(value.get("min_pass_rate", 0.0)),
        )


class GateEvidence(Protocol):
    """What the gate asks of the app that keeps evaluation runs."""

    def suite_exists(self, name: str) -> bool:
        """Whether a suite ``name`` exists."""

    def release_reasons(
        self, *, gate: Gate, label: str, baseline: Target, release: int
    ) -> list[str]:
        """Why release ``release`` may not replace ``baseline`` (what ``label`` serves
        now) under ``gate``: one sentence per thing missing; empty when a run passed."""


_evidence: list[GateEvidence] = []


def evidence_register(evidence: GateEvidence) -> None:
    """Install the evidence the gate asks (the evaluations app, at ``ready()``)."""
    _evidence[:] = [evidence]


def _installed() -> GateEvidence | None:
    return _evidence[0] if _evidence else None


def gate_valid(value: object, field: str = "gate") -> Gate | None:
    """A gate from the API (``None``: no gate), checked; the suite must exist."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(
            field, 'a gate is {"suite", "max_regressions", "min_pass_rate"} or null.'
        )
    unknown = sorted(set(value) - {"suite", "max_regressions", "min_pass_rate"})
    if unknown:
        raise InvalidInput(field, f"unknown field {unknown[0]!r} in the gate.")
    suite = label_name_valid(value.get("suite"), f"{field}.suite")
    regressions = value.get("max_regressions", 0)
    if (
        isinstance(regressions, bool)
        or not isinstance(regressions, int)
        or not 0 <= regressions <= MAX_REGRESSIONS_LIMIT
    ):
        raise InvalidInput(
            f"{field}.max_regressions", f"a whole number from 0 to {MAX_REGRESSIONS_LIMIT:,}."
        )
    rate = value.get("min_pass_rate", 0)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        raise InvalidInput(f"{field}.min_pass_rate", "a number from 0 to 1 (0.9: 90 %).")
    evidence = _installed()
    if evidence is None or not evidence.suite_exists(suite):
        raise InvalidInput(f"{field}.suite", f"There is no suite {suite!r}.")
    return Gate(suite=suite, max_regressions=regressions, min_pass_rate=float(rate))


def move_reasons(*, gate: Gate, label: str, current: Target, new: Target) -> list[str]:
    """Why ``label`` (gated by ``gate``, serving ``current``) may not move to ``new``;
    empty when it may. ``latest`` is always refused (every save would pass the gate);
    each release of ``new`` that ``current`` does not serve already needs a passing run
    with ``current`` as baseline (a split's arms one by one)."""
    if LATEST in new.pointers:
        return [
            f"a gated label cannot follow latest (every save would reach it unevaluated): "
            f"point {label} at a release, or remove its gate first"
        ]
    evidence = _installed()
    reasons: list[str] = []
    for pointer in new.pointers:
        if pointer in current.pointers or not isinstance(pointer, int):
            continue
        if evidence is None:
            reasons.append("no evaluations app is installed to provide the gate's runs")
            break
        reasons += evidence.release_reasons(
            gate=gate, label=label, baseline=current, release=pointer
        )
    return reasons
