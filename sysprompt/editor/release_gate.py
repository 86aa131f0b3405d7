"""The Publish dialog's gate panel (docs/releases.md, "Gates"): a gated label's gate,
the newest run of its suite for the candidate, what the move is missing, and the
button that starts a run.

* :func:`gate_panel` — what the panel shows (``None``: the label has no gate);
* :func:`gate_run_start` (``POST /releases/publish/evaluate``) — start a run of the gate's
  suite with the candidate release as candidate and the label as baseline
  (``sysprompt.evaluations.services.run_create``), then back to the dialog.

The runs are read through ``sysprompt.evaluations.gate`` and the reasons through
``sysprompt.releases.gates.move_reasons``: what the panel says is what the move will
answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from sysprompt import errors
from sysprompt.editor import release_forms as rf
from sysprompt.evaluations import services as evaluations
from sysprompt.evaluations.gate import gate_run, gate_runs
from sysprompt.evaluations.selectors import Run
from sysprompt.releases import selectors
from sysprompt.releases.gates import Gate, move_reasons
from sysprompt.releases.permissions import PUBLISH_PERMISSION
from sysprompt.releases.validation import label_name_valid
from sysprompt_core.releases import LATEST, Pointer, Single


@dataclass(frozen=True)
class RunLine:
    """One run as the panel shows it."""

    id: int
    status: str
    regressions: int | None
    baseline_rate: str
    candidate_rate: str
    url: str


@dataclass(frozen=True)
class GatePanel:
    """A gated label's panel: ``release`` is ``None`` for the working copy (it has no
    release to evaluate until it is released); ``reasons`` what the move misses."""

    gate: Gate
    release: int | None
    run: RunLine | None
    reasons: list[str]
    may_force: bool
    min_pass_rate: str


def _rate(side: object) -> str:
    rate = side.get("pass_rate") if isinstance(side, dict) else None
    return "—" if not isinstance(rate, int | float) else f"{rate:.0%}"


def _line(run: Run) -> RunLine:
    summary = run.summary or {}
    regressions = summary.get("regressions")
    return RunLine(
        id=run.pk,
        status=run.status,
        regressions=regressions if isinstance(regressions, int) else None,
        baseline_rate=_rate(summary.get("baseline")),
        candidate_rate=_rate(summary.get("candidate")),
        url=reverse("editor:evaluations-run", kwargs={"run_id": run.pk}),
    )


def gate_panel(
    request: HttpRequest, label: selectors.LabelState, candidate: Pointer
) -> GatePanel | None:
    """What the Publish dialog shows of ``label``'s gate for ``candidate``."""
    gate = label.gate
    if gate is None:
        return None
    may_force = request.user.has_perm(PUBLISH_PERMISSION)
    rate = f"{gate.min_pass_rate:.0%}"
    if candidate == LATEST or not isinstance(candidate, int):
        reasons = [
            "the working copy is no release yet: create the release, then run the suite on it"
        ]
        return GatePanel(gate, None, None, reasons, may_force, rate)
    run = gate_run(suite=gate.suite, release=candidate, label=label.name, baseline=label.target)
    if run is None:
        newest = gate_runs(suite=gate.suite, release=candidate)
        run = newest[0] if newest else None
    reasons = move_reasons(gate=gate, label=label.name, current=label.target, new=Single(candidate))
    return GatePanel(gate, candidate, None if run is None else _line(run), reasons, may_force, rate)


def gate_run_start(request: HttpRequest) -> HttpResponse:
    """Start the run a gated label's move needs, then back to the Publish dialog."""
    form = rf.PublishForm(request.POST)
    back = reverse("editor:releases-publish")
    if not form.is_valid():
        messages.error(request, "Choose a label and a candidate release first.")
        return redirect(back)
    data = form.cleaned_data
    query = urlencode({"label": data["label"], "candidate": data["candidate"]})
    try:
        label = selectors.label_get(label_name_valid(data["label"], "label"))
        candidate = rf.pointer_of_text(data["candidate"])
        if label.gate is None or not isinstance(candidate, int):
            raise errors.InvalidInput(
                "candidate", "a run for the gate needs a gated label and a release."
            )
        run = evaluations.run_create(
            suite=label.gate.suite,
            candidate={"release": candidate},
            baseline={"label": label.name},
            author=request.user,
        )
    except errors.InvalidInput as error:
        messages.error(request, error.message)
    except (errors.LabelNotFound, errors.SuiteNotFound, errors.RunRefused) as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Run {run.pk} of suite {run.suite_name} started.")
    return redirect(f"{back}?{query}")
