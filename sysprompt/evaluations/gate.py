"""The gate's evidence: which run decides a gated label's move, and whether it passed.

* :func:`gate_check` — pure: why one run does not pass a gate (finished, regressions
  ≤ ``max_regressions``, candidate pass rate ≥ ``min_pass_rate``, no errors, no case of
  the suite changed since the run started); ``manage.py evaluate`` and the label move
  both call it.
* :func:`run_gate` — the thresholds ``manage.py evaluate`` holds a run to: the gate of
  its baseline label when that gate names the run's suite, else none allowed (no
  regression, no error);
* :func:`gate_run` — the run that decides a move: the newest run of the gate's suite
  with the release as candidate and what the label serves now as baseline (the label
  itself, when the run kept the same target, or the same release).
* :class:`RunEvidence` — what ``sysprompt.releases.gates`` asks, registered at
  ``EvaluationsConfig.ready()`` (the releases app cannot import this one).
"""

from __future__ import annotations

from sysprompt.evaluations.models import Run, Suite
from sysprompt.releases.gates import Gate
from sysprompt.releases.models import Label
from sysprompt_core.releases import Single, Target

__all__ = ["RunEvidence", "gate_check", "gate_run", "gate_runs", "run_gate"]

RUNS_LOOKED_AT = 50
"""How many of the newest runs of a suite with the release as candidate are examined
for a matching baseline."""


def gate_check(run: Run, gate: Gate) -> list[str]:
    """Why ``run`` does not pass ``gate``: one sentence per failure; empty when it
    passes. Reads the run's summary and its suite's ``cases_changed_at`` only."""
    if run.status != "finished":
        return [f"run {run.pk} is {run.status}, not finished"]
    summary = run.summary or {}
    reasons: list[str] = []
    regressions = int(summary.get("regressions", 0))
    if regressions > gate.max_regressions:
        reasons.append(
            f"run {run.pk} regressed {regressions} case{'s' if regressions != 1 else ''} "
            f"(at most {gate.max_regressions} allowed)"
        )
    rate = float((summary.get("candidate") or {}).get("pass_rate", 0.0))
    if rate < gate.min_pass_rate:
        reasons.append(
            f"run {run.pk}'s candidate pass rate {rate:.0%} is below {gate.min_pass_rate:.0%}"
        )
    errors = int(summary.get("errors", 0))
    if errors:
        reasons.append(f"run {run.pk} had {errors} case{'s' if errors != 1 else ''} in error")
    suite = run.suite
    if suite is None:
        reasons.append(f"the suite of run {run.pk} was deleted")
    elif suite.cases_changed_at > run.created_at:
        reasons.append(f"cases of suite {suite.name} changed after run {run.pk} started")
    return reasons


def run_gate(run: Run) -> Gate:
    """The gate a run is held to outside a label move (``manage.py evaluate``'s exit
    code): its baseline label's gate when it names the run's suite, else the default
    thresholds (no regression, no error, any pass rate)."""
    if isinstance(run.baseline, dict):
        gate = Label.objects.filter(name=run.baseline.get("label")).values_list("gate", flat=True)
        found = Gate.from_json(gate.first())
        if found is not None and found.suite == run.suite_name:
            return found
    return Gate(suite=run.suite_name)


def _baseline_matches(run: Run, label: str, baseline: Target) -> bool:
    if run.baseline == {"label": label}:
        return run.baseline_target == baseline.as_json()
    return isinstance(baseline, Single) and run.baseline == baseline.pointer


def gate_runs(*, suite: str, release: int) -> list[Run]:
    """The newest runs (at most :data:`RUNS_LOOKED_AT`) of ``suite`` with release
    ``release`` as candidate, newest first."""
    query = Run.objects.select_related("suite").filter(suite_name=suite, candidate_release=release)
    return list(query.order_by("-id")[:RUNS_LOOKED_AT])


def gate_run(*, suite: str, release: int, label: str, baseline: Target) -> Run | None:
    """The run that decides whether ``label`` (serving ``baseline``) may move to
    ``release``: the newest finished one comparing them, else the newest still going."""
    runs = gate_runs(suite=suite, release=release)
    matching = [run for run in runs if _baseline_matches(run, label, baseline)]
    finished = [run for run in matching if run.status == "finished"]
    going = [run for run in matching if run.status in ("queued", "running")]
    chosen = finished or going
    return chosen[0] if chosen else None


class RunEvidence:
    """The evaluations app's answer to ``sysprompt.releases.gates.GateEvidence``."""

    def suite_exists(self, name: str) -> bool:
        return Suite.objects.filter(name=name).exists()

    def release_reasons(
        self, *, gate: Gate, label: str, baseline: Target, release: int
    ) -> list[str]:
        run = gate_run(suite=gate.suite, release=release, label=label, baseline=baseline)
        if run is not None:
            return gate_check(run, gate)
        others = gate_runs(suite=gate.suite, release=release)
        now = baseline.describe()
        if others:
            return [
                f"no run of suite {gate.suite} compares release {release} with what {label} "
                f"serves now ({now}): run {others[0].pk} had another baseline"
            ]
        return [
            f"no finished run of suite {gate.suite} with release {release} as candidate "
            f"and {label} ({now}) as baseline"
        ]
