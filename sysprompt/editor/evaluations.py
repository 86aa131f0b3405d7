"""The Evaluations page (docs/editor.md, "Evaluations page"; docs/evaluations.md): suites
and their cases, JSONL import and export, starting a run, its live progress, and its
results. Prompt authors only (the template's change permission, as the Releases page);
others get 403.

* ``/evaluations/`` — the suites (create one) and the newest runs.
* ``/evaluations/suites/<name>/`` — the suite: its description, its cases (each turn a
  bubble of the conversation, its context, tools, checks and reference), Import JSONL,
  Export, and the form that starts a run — with the run's plan (``…/plan``: its calls
  and cost at most, the limits, why a start would be refused) asked for by htmx as the
  form changes; ``…/cases/new`` and ``…/cases/<case>/`` the
  case form (rows of turns and checks, a menu of check types: see
  :mod:`sysprompt.editor.evaluation_forms`).
* ``/evaluations/runs/<id>/`` — the run: a progress bar that htmx polls while the run is
  queued or running (the partial alone, ``Vary: HX-Request``; once the run ended it
  answers ``HX-Refresh`` and the page reloads with the results), Cancel, and the
  results: a run with errors says so first, both sides' pass rates as bars, tokens and
  cost per side, regressions first, each case opening to both answers side by side
  with their differing lines marked, every check with its reason, and the diff of the
  case's two prompts.

Every read is a selector and every write a service of ``sysprompt.evaluations`` (the
same the API calls); an ``InvalidInput`` shows under the field it names (400) and
nothing is stored.

Each page is one prompt's (sysprompt/editor/scoping.py): today's URLs are ``default``'s,
the same under ``/editor/p/<name>/-/`` that prompt's. Its suites, cases and runs are
read and written with ``prompt=self.scope``, and a run started there renders that
prompt's working copy, releases and labels; every link, form and redirect stays under
the prompt. A suite of another prompt is 404 (names are per prompt); a run of another
prompt (ids are global) redirects to its own prompt's page, and cancelling it there is
404. Where the prompt or a folder above it is restricted to groups, a non-member's
change of a suite or case is refused with a message, and nothing is written.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.db.models import Case as SqlCase
from django.db.models import IntegerField, Value, When
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views import View
from django_htmx.http import HttpResponseClientRefresh
from django_htmx.middleware import HtmxDetails

from sysprompt import errors
from sysprompt.conf import app_settings
from sysprompt.editor import evaluation_forms as ef
from sysprompt.editor.scoping import PromptScopedMixin, scoped_url
from sysprompt.evaluations import planning, selectors, services
from sysprompt.evaluations.results import Usage, side_counts, side_usage
from sysprompt.evaluations.validation import DESCRIPTION_MAX_CHARS, REPEAT_MAX
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt.releases import selectors as releases
from sysprompt_core.diff import Deadline, Diff, text_diff
from sysprompt_core.prompt_names import DEFAULT_PROMPT
from sysprompt_core.releases import LABEL_NAME_MAX_LENGTH
from sysprompt_core.tokens import TokenCount

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt

RUNS_SHOWN = 20
RESULTS_SHOWN = 200
"""The most cases the results list; the API's results page through all of them."""
RESULTS_DIFF_SECONDS = 2.0
"""The time every diff of one results page shares (answers and prompts)."""
ANSWER_CONTEXT = 1_000_000
"""Context lines of an answers' diff: every line, so both answers show in full."""
IMPORT_MAX_UPLOAD = 64 * 1_048_576
ACTIVE = ("queued", "running")
VERDICT_ORDER = {"regression": 0, "error": 1, "fix": 2, "same_fail": 3, "same_pass": 4}


class EvaluationPagesMixin(LoginRequiredMixin, PermissionRequiredMixin, PromptScopedMixin):
    """403 for a user who is no prompt author (anonymous users go to the login page);
    ``self.scope`` is the prompt the URL names (``default`` for today's URLs), whose
    suites, cases and runs every view reads and writes."""

    permission_required = TEMPLATE_EDIT_PERMISSION

    def denial(self, request: HttpRequest, action: str, back: str) -> HttpResponseRedirect | None:
        """``None`` when the user may ``action`` (the words of the refusal: "change
        suites of") the page's prompt; else the refusal — the prompt or a folder above it
        is restricted to groups the user is in none of, audited as ``prompt.refused`` —
        as a message on the page ``back`` goes to, before anything is read or written."""
        try:
            services.editors_check(request.user, self.scope, action=action)
        except errors.PromptForbidden as refusal:
            messages.error(request, str(refusal))
            return HttpResponseRedirect(back)
        return None


def _page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    scope: Prompt,
    *,
    status: int = 200,
) -> HttpResponse:
    """``template`` with ``context`` and ``prompt_shown``: the prompt's name where the
    headings show it (any prompt but ``default``, whose pages look as they always did)."""
    shown = "" if scope.name == DEFAULT_PROMPT else scope.name
    return render(request, template, {**context, "prompt_shown": shown}, status=status)


def _suite_url(scope: Prompt, suite: Any, anchor: str = "") -> str:
    return scoped_url("evaluations-suite", scope, suite.name) + anchor


# --- forms ---------------------------------------------------------------------------


class SuiteForm(forms.Form):
    name = forms.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    description = forms.CharField(required=False, max_length=DESCRIPTION_MAX_CHARS)


class DescriptionForm(forms.Form):
    description = forms.CharField(required=False, max_length=DESCRIPTION_MAX_CHARS)


class ImportForm(forms.Form):
    file = forms.FileField(required=False)
    text = forms.CharField(required=False, strip=False)


class RunForm(forms.Form):
    candidate = forms.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    baseline = forms.CharField(max_length=LABEL_NAME_MAX_LENGTH)
    model = forms.CharField(max_length=200)
    candidate_model = forms.CharField(required=False, max_length=200)
    repeat = forms.IntegerField(min_value=1, max_value=REPEAT_MAX)
    fresh = forms.BooleanField(required=False)


def _run_initial() -> dict[str, Any]:
    return {
        "candidate": "latest",
        "baseline": "production",
        "model": app_settings().eval_default_model,
        "repeat": 1,
    }


# --- suites ----------------------------------------------------------------------------


def _suites_page(
    request: HttpRequest, scope: Prompt, form: SuiteForm | None = None, status: int = 200
) -> HttpResponse:
    context = {
        "suites": selectors.suites_list(prompt=scope),
        "runs": list(selectors.runs_list(prompt=scope)[:RUNS_SHOWN]),
        "form": form or SuiteForm(),
    }
    return _page(request, "editor/evaluations.html", context, scope, status=status)


class EvaluationsPageView(EvaluationPagesMixin, View):
    """The prompt's suites and its newest runs; POST creates a suite of the prompt."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return _suites_page(request, self.scope)

    def post(self, request: HttpRequest) -> HttpResponse:
        denied = self.denial(request, "create suites of", scoped_url("evaluations", self.scope))
        if denied is not None:
            return denied
        form = SuiteForm(request.POST)
        if form.is_valid():
            try:
                suite = services.suite_create(
                    name=form.cleaned_data["name"],
                    description=form.cleaned_data["description"],
                    author=request.user,
                    prompt=self.scope,
                )
            except errors.InvalidInput as error:
                _add(form, error)
            else:
                messages.success(request, f"Suite {suite.name} created.")
                return redirect(_suite_url(self.scope, suite))
        return _suites_page(request, self.scope, form, status=400)


def _add(form: forms.Form, error: errors.InvalidInput) -> None:
    field_name = error.field.split(".", 1)[0]
    if field_name in form.fields:
        form.add_error(field_name, error.message)
    else:
        form.add_error(None, f"{error.field}: {error.message}")


def _suite(name: str, scope: Prompt) -> Any:
    """The prompt's suite ``name``: 404 for a name only another prompt has."""
    try:
        return selectors.suite_get(name, prompt=scope)
    except errors.SuiteNotFound as error:
        raise Http404(str(error)) from None


@dataclass(frozen=True)
class CaseView:
    """A case as the suite page shows it."""

    name: str
    messages: list[dict[str, str]]
    context: dict[str, Any]
    tools: list[str]
    checks: list[dict[str, Any]]
    reference: str | None


def _case_view(case: Any) -> CaseView:
    return CaseView(
        name=case.name,
        messages=list(case.messages),
        context=dict(case.context),
        tools=[str(tool.get("function", {}).get("name", "?")) for tool in case.tools],
        checks=[
            {"type": check.get("type"), "fields": {k: v for k, v in check.items() if k != "type"}}
            for check in case.checks
        ],
        reference=case.reference,
    )


def _suite_page(
    request: HttpRequest,
    suite: Any,
    *,
    status: int = 200,
    description_form: DescriptionForm | None = None,
    import_errors: list[Any] | None = None,
    import_error: str = "",
    run_form: RunForm | None = None,
    plan: PlanView | None = None,
) -> HttpResponse:
    conf = app_settings()
    scope = suite.prompt  # the page's prompt: the suite was looked up in it
    context = {
        "plan": plan,
        "suite": suite,
        "cases": [_case_view(case) for case in selectors.cases_list(suite)],
        "description_form": description_form
        or DescriptionForm(initial={"description": suite.description}),
        "import_errors": import_errors or [],
        "import_error": import_error,
        "run_form": run_form or RunForm(initial=_run_initial()),
        "models": list(conf.models),
        "labels": [state.name for state in releases.labels_list(prompt=scope)],
        "releases": [release.number for release in releases.releases_list(prompt=scope)[:50]],
        "runs": list(selectors.runs_list(suite=suite.name, prompt=scope)[:RUNS_SHOWN]),
    }
    return _page(request, "editor/evaluations_suite.html", context, scope, status=status)


class SuiteView(EvaluationPagesMixin, View):
    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        return _suite_page(request, _suite(name, self.scope))


class SuiteEditView(EvaluationPagesMixin, View):
    """The suite's description."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        denied = self.denial(request, "change suites of", _suite_url(self.scope, suite))
        if denied is not None:
            return denied
        form = DescriptionForm(request.POST)
        if form.is_valid():
            try:
                services.suite_update(
                    name=suite.name,
                    description=form.cleaned_data["description"],
                    author=request.user,
                    prompt=self.scope,
                )
            except errors.InvalidInput as error:
                _add(form, error)
            else:
                messages.success(request, "Description saved.")
                return redirect(_suite_url(self.scope, suite))
        return _suite_page(request, suite, status=400, description_form=form)


class SuiteDeleteView(EvaluationPagesMixin, View):
    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        denied = self.denial(request, "delete suites of", _suite_url(self.scope, suite))
        if denied is not None:
            return denied
        services.suite_delete(name=suite.name, author=request.user, prompt=self.scope)
        messages.success(request, f"Suite {suite.name} deleted.")
        return redirect(scoped_url("evaluations", self.scope))


class SuiteImportView(EvaluationPagesMixin, View):
    """JSONL, one case a line (a file or pasted text): every line or none is stored."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        denied = self.denial(request, "change suites of", _suite_url(self.scope, suite, "#import"))
        if denied is not None:
            return denied
        upload = request.FILES.get("file")
        if upload is not None:
            if upload.size is not None and upload.size > IMPORT_MAX_UPLOAD:
                return _suite_page(
                    request, suite, status=400, import_error="The file is too large to import."
                )
            raw = upload.read(IMPORT_MAX_UPLOAD + 1)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return _suite_page(
                    request, suite, status=400, import_error="The file is not UTF-8 text."
                )
        else:
            text = request.POST.get("text", "")
        if not text.strip():
            return _suite_page(
                request, suite, status=400, import_error="Choose a .jsonl file or paste its lines."
            )
        try:
            count = services.cases_import(
                suite=suite.name, text=text, author=request.user, prompt=self.scope
            )
        except services.ImportRefused as refused:
            return _suite_page(request, suite, status=400, import_errors=list(refused.errors))
        except errors.InvalidInput as error:
            return _suite_page(request, suite, status=400, import_error=error.message)
        messages.success(request, f"{count:,} case{'s' if count != 1 else ''} imported.")
        return redirect(_suite_url(self.scope, suite))


class SuiteExportView(EvaluationPagesMixin, View):
    def get(self, request: HttpRequest, name: str) -> StreamingHttpResponse:
        suite = _suite(name, self.scope)
        lines = (_json_line(case) for case in selectors.cases_list(suite).iterator(chunk_size=500))
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{suite.name}.jsonl"'
        return response


def _json_line(case: Any) -> str:
    return json.dumps(services.case_json(case), ensure_ascii=False) + "\n"


# --- cases -----------------------------------------------------------------------------


def _case_page(
    request: HttpRequest, suite: Any, form: ef.CaseForm, *, existing: str | None, status: int = 200
) -> HttpResponse:
    turns = [
        {**turn, "error": form.errors.get(f"turn-{i}", "")} for i, turn in enumerate(form.turns)
    ]
    checks = [
        {
            **check,
            "error": form.errors.get(f"check-{i}", ""),
            "label": ef.CHECK_LABELS.get(check["type"], ""),
        }
        for i, check in enumerate(form.checks)
    ]
    context = {
        "suite": suite,
        "form": form,
        "turns": turns,
        "checks": checks,
        "existing": existing,
        "check_types": [(kind, ef.CHECK_LABELS[kind]) for kind in ef.CHECK_FIELDS],
        "test_contexts": [row.name for row in releases.test_contexts_list(prompt=suite.prompt)],
        "models": list(app_settings().models),
    }
    return _page(request, "editor/evaluations_case.html", context, suite.prompt, status=status)


def _case_save(
    request: HttpRequest, suite: Any, *, existing: str | None, scope: Prompt
) -> HttpResponse:
    form = ef.form_of_post(request.POST)
    if ef.edited(request.POST):
        return _case_page(request, suite, form, existing=existing)
    try:
        fields = ef.case_of_form(form)
        if existing is None:
            services.case_create(suite=suite.name, fields=fields, author=request.user, prompt=scope)
        else:
            services.case_save(
                suite=suite.name, name=existing, fields=fields, author=request.user, prompt=scope
            )
    except errors.InvalidInput as error:
        ef.error_slot(form, error)
        return _case_page(request, suite, form, existing=existing, status=400)
    verb = "added" if existing is None else "saved"
    messages.success(request, f"Case {fields['name']} {verb}.")
    return redirect(_suite_url(scope, suite, "#cases"))


class CaseNewView(EvaluationPagesMixin, View):
    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        return _case_page(request, _suite(name, self.scope), ef.CaseForm(), existing=None)

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        denied = self.denial(request, "change suites of", _suite_url(self.scope, suite, "#cases"))
        if denied is not None:
            return denied
        return _case_save(request, suite, existing=None, scope=self.scope)


def _case(suite: Any, name: str) -> Any:
    try:
        return selectors.case_get(suite, name)
    except errors.CaseNotFound as error:
        raise Http404(str(error)) from None


class CaseEditView(EvaluationPagesMixin, View):
    def get(self, request: HttpRequest, name: str, case: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        row = _case(suite, case)
        return _case_page(
            request, suite, ef.form_of_case(services.case_json(row)), existing=row.name
        )

    def post(self, request: HttpRequest, name: str, case: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        existing = _case(suite, case).name
        denied = self.denial(request, "change suites of", _suite_url(self.scope, suite, "#cases"))
        if denied is not None:
            return denied
        return _case_save(request, suite, existing=existing, scope=self.scope)


class CaseDeleteView(EvaluationPagesMixin, View):
    def post(self, request: HttpRequest, name: str, case: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        row = _case(suite, case)
        denied = self.denial(request, "change suites of", _suite_url(self.scope, suite, "#cases"))
        if denied is not None:
            return denied
        services.case_delete(
            suite=suite.name, name=row.name, author=request.user, prompt=self.scope
        )
        messages.success(request, f"Case {row.name} deleted.")
        return redirect(_suite_url(self.scope, suite, "#cases"))


# --- runs ------------------------------------------------------------------------------


def _run_fields(form: RunForm) -> dict[str, Any]:
    """The start form's values as the service's fields (the model select is the
    baseline's when a candidate's model is chosen: two models compared)."""
    data = form.cleaned_data
    two = bool(data["candidate_model"])
    return {
        "candidate": ef.pointer_of_text(data["candidate"]),
        "baseline": ef.pointer_of_text(data["baseline"]),
        "model": None if two else data["model"],
        "baseline_model": data["model"] if two else None,
        "candidate_model": data["candidate_model"] or None,
        "repeat": data["repeat"],
        "fresh": data["fresh"],
    }


def _refused(form: RunForm, error: errors.InvalidInput | errors.RunRefused) -> None:
    """A refusal under the field it names; a limit's at the top of the form."""
    if isinstance(error, errors.RunRefused):
        form.add_error(None, str(error))
    elif error.field == "calls":
        form.add_error(None, error.message)
    else:
        field_name = {"baseline_model": "model"}.get(error.field, error.field)
        _add(form, errors.InvalidInput(field_name, error.message))


class RunStartView(EvaluationPagesMixin, View):
    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        form = RunForm(request.POST)
        status = 400
        if form.is_valid():
            try:
                run = services.run_create(
                    suite=suite.name, **_run_fields(form), author=request.user, prompt=self.scope
                )
            except (errors.InvalidInput, errors.RunRefused) as error:
                _refused(form, error)
                status = 429 if isinstance(error, errors.RunRefused) else 400
            else:
                return redirect(scoped_url("evaluations-run", self.scope, run.pk))
        return _suite_page(request, suite, status=status, run_form=form)


@dataclass(frozen=True)
class PlanView:
    """What the start form shows of a run before it starts: its plan, or why not."""

    plan: planning.RunPlan | None
    limits: planning.Limits | None
    refused: str = ""
    invalid: str = ""
    """A field's refusal (the run could not be planned), with the field named."""


def _plan_view(suite: Any, form: RunForm, user: Any, scope: Prompt) -> PlanView:
    if not form.is_valid():
        said = "; ".join(
            f"{name}: {' '.join(str(m) for m in said)}" for name, said in form.errors.items()
        )
        return PlanView(None, None, invalid=said)
    try:
        plan = planning.run_plan(
            planning.run_request_valid(suite=suite.name, **_run_fields(form), prompt=scope)
        )
    except errors.InvalidInput as error:
        return PlanView(None, None, invalid=f"{error.field}: {error.message}")
    limits = planning.limits_now(user)
    refusal = planning.plan_refusal(plan, limits)
    said = ""
    if refusal is not None:
        said = refusal.message if isinstance(refusal, errors.InvalidInput) else str(refusal)
    return PlanView(plan, limits, refused=said)


class RunPlanView(EvaluationPagesMixin, View):
    """The start form's plan: from htmx (the form changed), the plan alone; else the
    suite page with it (the "Show the plan" button without scripts)."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        suite = _suite(name, self.scope)
        form = RunForm(request.POST)
        plan = _plan_view(suite, form, request.user, self.scope)
        if HtmxDetails(request):
            return render(request, "editor/_evaluation_plan.html", {"plan": plan})
        return _suite_page(request, suite, run_form=form, plan=plan)


def _run(run_id: int) -> Any:
    """The run ``run_id`` of any prompt (run ids are global): 404 when there is none."""
    try:
        return selectors.run_get(run_id)
    except errors.EvaluationNotFound as error:
        raise Http404(str(error)) from None


def _run_in(run_id: int, scope: Prompt) -> Any:
    """The run ``run_id`` when it is ``scope``'s: 404 for another prompt's run."""
    run = _run(run_id)
    if run.prompt_id != scope.pk:
        raise Http404(f"Run {run_id} is not one of prompt {scope.name!r}'s.")
    return run


@dataclass(frozen=True)
class Rate:
    """A pass rate as a bar: ``percent`` sizes the SVG rect (an attribute: the CSP allows it)."""

    value: float | None

    @property
    def percent(self) -> str:
        return "0" if self.value is None else f"{self.value * 100:.1f}"

    @property
    def text(self) -> str:
        return "—" if self.value is None else f"{self.value * 100:.0f}%"


@dataclass(frozen=True)
class SideBySide:
    """One row of two answers: each side's line and its kind (equal, delete, insert, blank)."""

    old: str | None
    new: str | None
    old_kind: str
    new_kind: str


@dataclass
class Repetition:
    index: int
    baseline: Any = None
    candidate: Any = None
    rows: list[SideBySide] = field(default_factory=list)
    diff: Diff | None = None


@dataclass
class CaseResult:
    case: Any
    baseline_rate: Rate
    candidate_rate: Rate
    repetitions: list[Repetition]
    prompt_diff: Diff | None
    baseline_prompt_tokens: TokenCount | None = None
    candidate_prompt_tokens: TokenCount | None = None
    baseline_usage: Usage | None = None
    candidate_usage: Usage | None = None


def _passed(call: Any) -> bool:
    return not call.error and all(check.get("passed") for check in call.checks)


def _rate(calls: list[Any]) -> Rate:
    done = [call for call in calls if call.done]
    return Rate(sum(_passed(call) for call in done) / len(done) if done else None)


def _paired(deleted: list[str], inserted: list[str]) -> Iterator[SideBySide]:
    """A run of deleted lines facing the inserted lines that replaced them."""
    for old, new in itertools.zip_longest(deleted, inserted):
        yield SideBySide(
            old,
            new,
            "delete" if old is not None else "blank",
            "insert" if new is not None else "blank",
        )


def side_by_side(diff: Diff, old: str, new: str) -> list[SideBySide]:
    """Both answers line by line (``diff`` made with every line as context), a deleted
    line facing the inserted one that replaced it; equal answers side by side as they are."""
    if not diff.hunks:
        return [
            SideBySide(
                a, b, "equal" if a is not None else "blank", "equal" if b is not None else "blank"
            )
            for a, b in itertools.zip_longest(old.splitlines(), new.splitlines())
        ]
    rows: list[SideBySide] = []
    for hunk in diff.hunks:
        deleted: list[str] = []
        inserted: list[str] = []
        for line in hunk.lines:
            if line.kind == "delete":
                deleted.append(line.text)
            elif line.kind == "insert":
                inserted.append(line.text)
            else:
                rows.extend(_paired(deleted, inserted))
                deleted, inserted = [], []
                rows.append(SideBySide(line.text, line.text, "equal", "equal"))
        rows.extend(_paired(deleted, inserted))
    return rows


def _repetitions(
    calls: Iterable[Any], deadline: Deadline
) -> tuple[list[Repetition], list[Any], list[Any]]:
    by_index: dict[int, Repetition] = {}
    baseline: list[Any] = []
    candidate: list[Any] = []
    for call in sorted(calls, key=lambda c: (c.repetition, c.side)):
        rep = by_index.setdefault(call.repetition, Repetition(call.repetition))
        if call.side in ("baseline", "both"):
            rep.baseline = call
            baseline.append(call)
        if call.side in ("candidate", "both"):
            rep.candidate = call
            candidate.append(call)
    for rep in by_index.values():
        old = rep.baseline.output if rep.baseline is not None else ""
        new = rep.candidate.output if rep.candidate is not None else ""
        rep.diff = text_diff(old, new, context=ANSWER_CONTEXT, deadline=deadline)
        rep.rows = [] if rep.diff.too_large else side_by_side(rep.diff, old, new)
    return [by_index[i] for i in sorted(by_index)], baseline, candidate


def _results(run: Any) -> tuple[list[CaseResult], int]:
    """The first :data:`RESULTS_SHOWN` cases in :data:`VERDICT_ORDER` (sorted and cut by
    the database: only their calls are read), and how many there are."""
    deadline = Deadline(seconds=RESULTS_DIFF_SECONDS)
    rows = selectors.run_results(run)
    order = SqlCase(
        *(When(verdict=verdict, then=Value(rank)) for verdict, rank in VERDICT_ORDER.items()),
        default=Value(len(VERDICT_ORDER)),
        output_field=IntegerField(),
    )
    shown: list[CaseResult] = []
    for case in rows.order_by(order, "position")[:RESULTS_SHOWN]:
        repetitions, baseline, candidate = _repetitions(case.calls.all(), deadline)
        prompt_diff = (
            text_diff(case.baseline_prompt, case.candidate_prompt, deadline=deadline)
            if case.prompt_changed and not case.error
            else None
        )
        counts = {
            side: _counted(case, side, calls)
            for side, calls in (("baseline", baseline), ("candidate", candidate))
        }
        shown.append(
            CaseResult(
                case,
                _rate(baseline),
                _rate(candidate),
                repetitions,
                prompt_diff,
                counts["baseline"],
                counts["candidate"],
                side_usage(baseline, run.baseline_model),
                side_usage(candidate, run.candidate_model),
            )
        )
    return shown, rows.count()


def _counted(case: Any, side: str, calls: list[Any]) -> TokenCount | None:
    """Count the side's answers (each done call gets ``counted``, shown beside the
    provider's usage) and its prompt, which is returned."""
    counts = side_counts(case, side, calls)
    for call, counted in zip([c for c in calls if c.done], counts.outputs, strict=True):
        call.counted = counted
    return counts.prompt


def _run_context(run: Any) -> dict[str, Any]:
    summary = run.summary or {}
    in_error = selectors.run_errors(run)
    context: dict[str, Any] = {
        "run": run,
        "cases_in_error": in_error,
        "first_error": selectors.run_first_error(run) if in_error else None,
        "active": run.status in ACTIVE,
        "percent": f"{(run.done / run.total * 100) if run.total else 0:.0f}",
        "summary": summary,
        "baseline_rate": Rate(summary.get("baseline", {}).get("pass_rate")),
        "candidate_rate": Rate(summary.get("candidate", {}).get("pass_rate")),
        "poll_seconds": 1,
    }
    return context


class RunView(EvaluationPagesMixin, View):
    """The run; from htmx (the progress bar's poll), its progress alone — or, once the run
    ended, ``HX-Refresh`` so the page reloads with the results."""

    def get(self, request: HttpRequest, run_id: int) -> HttpResponse:
        run = _run(run_id)
        if run.prompt_id != self.scope.pk:  # another prompt's: to its own prompt's page
            return redirect(scoped_url("evaluations-run", run.prompt, run.pk))
        htmx = HtmxDetails(request)
        response: HttpResponse
        if htmx and not htmx.history_restore_request:
            if run.status in ACTIVE:
                response = _page(
                    request, "editor/_evaluation_progress.html", _run_context(run), self.scope
                )
            else:
                response = HttpResponseClientRefresh()
        else:
            context = _run_context(run)
            if run.status not in ACTIVE:
                context["results"], context["results_total"] = _results(run)
                context["results_more"] = context["results_total"] > RESULTS_SHOWN
            response = _page(request, "editor/evaluations_run.html", context, self.scope)
        patch_vary_headers(response, ("HX-Request",))
        return response


class RunCancelView(EvaluationPagesMixin, View):
    def post(self, request: HttpRequest, run_id: int) -> HttpResponse:
        run = _run_in(run_id, self.scope)
        done = services.run_cancel(run_id=run.pk, author=request.user)
        if done.status == "cancelled":
            messages.success(request, f"Run {run.pk} cancelled.")
        elif done.status in ACTIVE:
            messages.success(request, f"Run {run.pk} is stopping: calls in flight finish first.")
        else:
            messages.success(request, f"Run {run.pk} had already ended ({done.status}).")
        return redirect(scoped_url("evaluations-run", self.scope, run.pk))
