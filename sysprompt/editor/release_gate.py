"""A label's gate in the editor (docs/releases.md, "Gates"): the Publish dialog's panel,
the label page's gate form, and the words of a refusal.

* :func:`gate_panel` — what the Publish dialog shows (``None``: the label has no gate):
  the gate, for each of its models the run that decides (or the newest on that
  model), what the move is missing;
* :func:`gate_run_start` (``POST /releases/publish/evaluate``) — start the runs the move
  needs: one per model of the gate that has no passing run yet, with the candidate
  release as candidate and the label as baseline
  (``sysprompt.evaluations.services.run_create``), then back to the dialog;
* :func:`gate_form_context` and :func:`gate_save` (``POST /releases/labels/<name>/gate``)
  — set, change or remove a label's gate on its page: ``label_set`` with the gate
  alone, the target kept;
* :func:`refusal_text` — a :class:`~sysprompt.errors.GateNotPassed` as the editor says
  it, naming the "Force past the gate" checkbox where the API names ``"force": true``.

The runs are read through ``sysprompt.evaluations.gate`` and the reasons through
``sysprompt.releases.gates.move_reasons``: what the panel says is what the move will
answer.

Each takes the prompt whose label it is (the page's ``self.scope``): its runs, its
suites, its labels; the URLs it gives stay under that prompt's pages.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from sysprompt import errors
from sysprompt.conf import app_settings
from sysprompt.editor import release_forms as rf
from sysprompt.editor.scoping import scoped_url
from sysprompt.evaluations import services as evaluations
from sysprompt.evaluations.gate import gate_run, gate_runs
from sysprompt.evaluations.selectors import Run, suites_list
from sysprompt.releases import selectors, services
from sysprompt.releases.gates import Gate, default_models, move_reasons
from sysprompt.releases.permissions import PUBLISH_PERMISSION
from sysprompt.releases.validation import label_name_valid
from sysprompt_core.releases import LATEST, Pointer, Single, Target

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt

FORCE_BOX = "the “Force past the gate” box ticked"
"""How the editor's refusals name the way a publisher forces a move."""

FORBIDDEN = "forbidden"
"""The code of a gate form's error that is a refusal of who may (the 403)."""


def refusal_text(error: errors.GateNotPassed) -> str:
    """The 409 as the editor says it: the reasons, then the checkbox that forces."""
    return error.said(FORCE_BOX)


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
class ModelLine:
    """One model of the gate: the run that decides its part (or the newest on it)."""

    model: str
    run: RunLine | None
    passed: bool


@dataclass(frozen=True)
class GatePanel:
    """A gated label's panel: ``release`` is ``None`` for the working copy (it has no
    release to evaluate until it is released); ``reasons`` what the move misses."""

    gate: Gate
    release: int | None
    models: list[ModelLine]
    reasons: list[str]
    may_force: bool
    min_pass_rate: str


def _rate(side: object) -> str:
    rate = side.get("pass_rate") if isinstance(side, dict) else None
    return "—" if not isinstance(rate, int | float) else f"{rate:.0%}"


def _line(run: Run, prompt: Prompt) -> RunLine:
    summary = run.summary or {}
    regressions = summary.get("regressions")
    return RunLine(
        id=run.pk,
        status=run.status,
        regressions=regressions if isinstance(regressions, int) else None,
        baseline_rate=_rate(summary.get("baseline")),
        candidate_rate=_rate(summary.get("candidate")),
        url=scoped_url("evaluations-run", prompt, run.pk),
    )


def _model_reasons(
    gate: Gate, label: str, current: Target, release: int, model: str, prompt: Prompt
) -> list[str]:
    """What the move misses as far as ``model`` goes (the gate's check, one model)."""
    alone = replace(gate, models=(model,))
    return move_reasons(
        gate=alone, label=label, current=current, new=Single(release), prompt=prompt
    )


def gate_panel(
    request: HttpRequest, label: selectors.LabelState, candidate: Pointer, prompt: Prompt
) -> GatePanel | None:
    """What the Publish dialog shows of ``prompt``'s ``label``'s gate for ``candidate``."""
    gate = label.gate
    if gate is None:
        return None
    may_force = request.user.has_perm(PUBLISH_PERMISSION)
    rate = f"{gate.min_pass_rate:.0%}"
    if candidate == LATEST or not isinstance(candidate, int):
        reasons = [
            "the working copy is no release yet: create the release, then run the suite on it"
        ]
        return GatePanel(gate, None, [], reasons, may_force, rate)
    lines = []
    for model in gate.required_models():
        run = gate_run(
            suite=gate.suite,
            release=candidate,
            label=label.name,
            baseline=label.target,
            model=model,
            prompt=prompt,
        )
        if run is None:
            newest = gate_runs(suite=gate.suite, release=candidate, model=model, prompt=prompt)
            run = newest[0] if newest else None
        passed = not _model_reasons(gate, label.name, label.target, candidate, model, prompt)
        lines.append(ModelLine(model, None if run is None else _line(run, prompt), passed))
    reasons = move_reasons(
        gate=gate, label=label.name, current=label.target, new=Single(candidate), prompt=prompt
    )
    return GatePanel(gate, candidate, lines, reasons, may_force, rate)


def gate_run_start(request: HttpRequest, prompt: Prompt) -> HttpResponse:
    """Start the runs ``prompt``'s gated label's move needs, then back to the Publish
    dialog."""
    form = rf.PublishForm(request.POST)
    back = scoped_url("releases-publish", prompt)
    if not form.is_valid():
        messages.error(request, "Choose a label and a candidate release first.")
        return redirect(back)
    data = form.cleaned_data
    query = urlencode({"label": data["label"], "candidate": data["candidate"]})
    try:
        label = selectors.label_get(label_name_valid(data["label"], "label"), prompt=prompt)
        candidate = rf.pointer_of_text(data["candidate"])
        if label.gate is None or not isinstance(candidate, int):
            raise errors.InvalidInput(
                "candidate", "a run for the gate needs a gated label and a release."
            )
        models = label.gate.required_models()
        if not models:
            raise errors.InvalidInput(
                "candidate",
                "the gate names no model (the default model is an echo): set its models "
                "on the label's page first.",
            )
        needed = [
            model
            for model in models
            if _model_reasons(label.gate, label.name, label.target, candidate, model, prompt)
        ] or list(models)
        runs = [
            evaluations.run_create(
                suite=label.gate.suite,
                candidate={"release": candidate},
                baseline={"label": label.name},
                model=model,
                prompt=prompt,
                author=request.user,
            )
            for model in needed
        ]
    except errors.InvalidInput as error:
        messages.error(request, error.message)
    except (
        errors.LabelNotFound,
        errors.SuiteNotFound,
        errors.RunRefused,
        errors.PromptForbidden,
    ) as error:
        messages.error(request, str(error))
    else:
        started = ", ".join(f"run {run.pk} on {run.candidate_model}" for run in runs)
        messages.success(request, f"Suite {label.gate.suite}: {started} started.")
    return redirect(f"{back}?{query}")


# --- the label page's gate form -------------------------------------------------------


def model_names() -> list[str]:
    """The configured models a gate may name, as ``GET /api/models`` lists them."""
    return list(app_settings().models)


def gate_form_context(
    label: selectors.LabelState, form: rf.GateForm | None, prompt: Prompt
) -> dict[str, Any]:
    """What the label page's gate section needs: the form (with the label's gate, or
    the default model ticked for a new gate) and the suites (``prompt``'s) and models
    it offers."""
    gate = label.gate
    if form is None:
        initial: dict[str, Any] = {
            "max_regressions": 0,
            "min_pass_rate": "0",
            "models": list(default_models()),
        }
        if gate is not None:
            initial = {
                "suite": gate.suite,
                "max_regressions": gate.max_regressions,
                "min_pass_rate": f"{gate.min_pass_rate * 100:g}",
                "models": list(gate.required_models()),
            }
        form = rf.GateForm(initial=initial)
    return {
        "gate_form": form,
        "gate_suites": [suite.name for suite in suites_list(prompt=prompt)],
        "gate_models": model_names(),
        "gate_required": [] if gate is None else list(gate.required_models()),
        "gate_rate": "" if gate is None else f"{gate.min_pass_rate:.0%}",
    }


def gate_save(
    request: HttpRequest, label: selectors.LabelState, prompt: Prompt
) -> rf.GateForm | None:
    """Set, change or (``remove``) remove ``prompt``'s ``label``'s gate from the label
    page's form: ``None`` when it was saved (a message says what), else the form with
    the refusal under the field it names (a refusal of who may: the form's error, coded
    :data:`FORBIDDEN`). The caller checked the author may change the label."""
    form = rf.GateForm(request.POST)
    if not form.is_valid():
        return form
    data = form.cleaned_data
    try:
        gate = None if data["remove"] else rf.gate_of_form(data)
        done = services.label_set(name=label.name, gate=gate, author=request.user, prompt=prompt)
    except errors.InvalidInput as error:
        rf.refusal_add(form, error)
        return form
    except (errors.LabelProtected, errors.PromptForbidden) as error:
        form.add_error(None, ValidationError(str(error), code=FORBIDDEN))
        return form
    state = done.label
    if state.gate is None:
        messages.success(request, f"Label {state.name} has no gate now.")
    else:
        models = ", ".join(state.gate.required_models())
        messages.success(
            request,
            f"Label {state.name} is gated by suite {state.gate.suite} on {models}; it serves "
            f"{state.target.describe()} as before.",
        )
    return None
