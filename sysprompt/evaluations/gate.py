"""The gate's evidence: which runs decide a gated label's move, and whether they passed.

* :func:`gate_check` — why one run does not pass a gate (finished, on one of the gate's
  models for both sides, regressions ≤ ``max_regressions``, candidate pass rate ≥
  ``min_pass_rate``, no case or call in error — read from the run's own rows, not its
  summary — and no case of the suite changed since the run started); the label move
  calls it.
* :func:`run_gate` — the thresholds ``manage.py evaluate`` holds a run to: the gate of
  its baseline label when that gate names the run's suite, else none allowed (no
  regression, no error);
* :func:`gate_run` — the run that decides a move for one of the gate's models: the
  newest run of the gate's suite with the release as candidate, what the label serves
  now as baseline (the label itself, when the run kept the same target, or the same
  release), and that model on both sides. A run on other models never decides: a run
  made with ``echo`` (which answers without a model) cannot hide a regression found on
  the model the gate names.
* :class:`RunEvidence` — what ``sysprompt.releases.gates`` asks, registered at
  ``EvaluationsConfig.ready()`` (the releases app cannot import this one).
"""

from __future__ import annotations

from django.db.models import Q

from sysprompt.evaluations.models import Run, RunCall, RunCase, Suite
from sysprompt.prompts.catalog import prompt_or_default
from sysprompt.prompts.models import Prompt
from sysprompt.releases.gates import Gate
from sysprompt.releases.models import Label
from sysprompt_core.releases import Single, Target

__all__ = [
    "RunEvidence",
    "cases_in_error",
    "gate_check",
    "gate_run",
    "gate_runs",
    "run_gate",
]

RUNS_LOOKED_AT = 50
"""How many of the newest runs of a suite with the release as candidate (on one model)
are examined for a matching baseline."""


def gate_check(run: Run, gate: Gate) -> list[str]:
    """Why ``run`` does not pass ``gate``: one sentence per failure; empty when it
    passes. Reads the run's summary (regressions, pass rate), its rows (errors) and
    its suite's ``cases_changed_at``."""
    if run.status != "finished":
        return [f"run {run.pk} is {run.status}, not finished"]
    summary = run.summary or {}
    reasons: list[str] = []
    models = gate.required_models()
    if not (run.candidate_model == run.baseline_model and run.candidate_model in models):
        reasons.append(
            f"run {run.pk} used {run.candidate_model} (candidate) and {run.baseline_model} "
            f"(baseline), not {_either(models)} on both sides"
        )
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
    errors = max(int(summary.get("errors", 0)), cases_in_error(run))
    if errors:
        reasons.append(f"run {run.pk} had {errors} case{'s' if errors != 1 else ''} in error")
    suite = run.suite
    if suite is None:
        reasons.append(f"the suite of run {run.pk} was deleted")
    elif suite.cases_changed_at > run.created_at:
        reasons.append(f"cases of suite {suite.name} changed after run {run.pk} started")
    return reasons


def _either(models: tuple[str, ...]) -> str:
    if not models:
        return "a model the gate names"
    return models[0] if len(models) == 1 else "one of " + ", ".join(models)


def cases_in_error(run: Run) -> int:
    """How many of ``run``'s cases are in error: not rendered, or with a call (either
    side, any repetition, a judge's answer) that failed. Read from the rows the run
    saved, whatever its summary says: a run whose every call failed is no evidence."""
    failed = RunCall.objects.filter(run=run).exclude(error="").values("run_case_id")
    return RunCase.objects.filter(run=run).filter(Q(pk__in=failed) | ~Q(error="")).count()


def run_gate(run: Run) -> Gate:
    """The gate a run is held to outside a label move (``manage.py evaluate``'s exit
    code): its baseline label's gate when it names the run's suite, else the default
    thresholds (no regression, no error, any pass rate)."""
    if isinstance(run.baseline, dict):
        gate = Label.objects.filter(
            prompt_id=run.prompt_id, name=run.baseline.get("label")
        ).values_list("gate", flat=True)
        found = Gate.from_json(gate.first())
        if found is not None and found.suite == run.suite_name:
            return found
    return Gate(suite=run.suite_name)


def _baseline_matches(run: Run, label: str, baseline: Target) -> bool:
    if run.baseline == {"label": label}:
        return run.baseline_target == baseline.as_json()
    return isinstance(baseline, Single) and run.baseline == baseline.pointer


def gate_runs(
    *, suite: str, release: int, model: str | None = None, prompt: Prompt | None = None
) -> list[Run]:
    """The newest runs (at most :data:`RUNS_LOOKED_AT`) of ``prompt``'s (``default``
    when None) ``suite`` with release ``release`` as candidate — with ``model`` on both
    sides, when given — newest first."""
    mine = prompt_or_default(prompt)
    query = Run.objects.select_related("suite").filter(
        prompt=mine, suite_name=suite, candidate_release=release
    )
    if model is not None:
        query = query.filter(candidate_model=model, baseline_model=model)
    return list(query.order_by("-id")[:RUNS_LOOKED_AT])


def gate_run(
    *,
    suite: str,
    release: int,
    label: str,
    baseline: Target,
    model: str,
    prompt: Prompt | None = None,
) -> Run | None:
    """The run that decides whether ``label`` (serving ``baseline``) may move to
    ``release`` as far as ``model`` goes: the newest finished one comparing them on
    that model, else the newest still going."""
    runs = gate_runs(suite=suite, release=release, model=model, prompt=prompt)
    matching = [run for run in runs if _baseline_matches(run, label, baseline)]
    finished = [run for run in matching if run.status == "finished"]
    going = [run for run in matching if run.status in ("queued", "running")]
    chosen = finished or going
    return chosen[0] if chosen else None


def _missing(
    *, gate: Gate, label: str, baseline: Target, release: int, model: str, prompt: Prompt | None
) -> str:
    """Why no run decides ``model``'s part of the move: the newest run that came
    closest, and what it lacked."""
    now = baseline.describe()
    compares = f"compares release {release} with what {label} serves now ({now})"
    others = gate_runs(suite=gate.suite, release=release, prompt=prompt)
    other_models = [
        run
        for run in others
        if _baseline_matches(run, label, baseline)
        and not run.candidate_model == run.baseline_model == model
    ]
    if other_models:
        run = other_models[0]
        return (
            f"no run of suite {gate.suite} on model {model} {compares}: run {run.pk} used "
            f"{run.candidate_model} (candidate) and {run.baseline_model} (baseline)"
        )
    elsewhere = [run for run in others if not _baseline_matches(run, label, baseline)]
    if elsewhere:
        return (
            f"no run of suite {gate.suite} on model {model} {compares}: run "
            f"{elsewhere[0].pk} had another baseline"
        )
    return (
        f"no finished run of suite {gate.suite} on model {model} with release {release} as "
        f"candidate and {label} ({now}) as baseline"
    )


class RunEvidence:
    """The evaluations app's answer to ``sysprompt.releases.gates.GateEvidence``."""

    def suite_exists(self, name: str, *, prompt: Prompt | None = None) -> bool:
        mine = prompt_or_default(prompt)
        return Suite.objects.filter(prompt=mine, name=name).exists()

    def release_reasons(
        self,
        *,
        gate: Gate,
        label: str,
        baseline: Target,
        release: int,
        prompt: Prompt | None = None,
    ) -> list[str]:
        reasons: list[str] = []
        for model in gate.required_models():
            run = gate_run(
                suite=gate.suite,
                release=release,
                label=label,
                baseline=baseline,
                model=model,
                prompt=prompt,
            )
            if run is None:
                reasons.append(
                    _missing(
                        gate=gate,
                        label=label,
                        baseline=baseline,
                        release=release,
                        model=model,
                        prompt=prompt,
                    )
                )
            else:
                reasons += gate_check(run, gate)
        return reasons
