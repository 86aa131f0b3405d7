"""Reads of suites, cases and runs."""

from __future__ import annotations

from django.db.models import Case as Cases
from django.db.models import Count, ExpressionWrapper, F, IntegerField, QuerySet, Value, When

from sysprompt.errors import CaseNotFound, EvaluationNotFound, SuiteNotFound
from sysprompt.evaluations.models import Case, RunCall, RunCase, Suite
from sysprompt.evaluations.models import Run as Run  # the type views annotate runs with


def suites_list() -> QuerySet[Suite]:
    return Suite.objects.annotate(cases_count=Count("cases")).order_by("name")


def suite_get(name: str) -> Suite:
    suite = suites_list().filter(name=name).first()
    if suite is None:
        raise SuiteNotFound(name)
    return suite


def cases_list(suite: Suite) -> QuerySet[Case]:
    return Case.objects.filter(suite=suite).order_by("id")


def case_get(suite: Suite, name: str) -> Case:
    case = Case.objects.filter(suite=suite, name=name).first()
    if case is None:
        raise CaseNotFound(suite.name, name)
    return case


def runs_list(*, suite: str | None = None, before: int | None = None) -> QuerySet[Run]:
    runs = Run.objects.select_related("created_by").order_by("-id")
    if suite is not None:
        runs = runs.filter(suite_name=suite)
    if before is not None:
        runs = runs.filter(id__lt=before)
    return runs


def run_get(run_id: int) -> Run:
    run = Run.objects.select_related("created_by").filter(pk=run_id).first()
    if run is None:
        raise EvaluationNotFound(run_id)
    return run


def run_results(run: Run) -> QuerySet[RunCase]:
    """The run's cases with their calls, regressions first, then errors, fixes, the rest;
    each annotated with ``result_order``, unique within the run, that order's key (what a
    cursor page goes on from)."""
    rank = Cases(
        *(When(verdict=verdict, then=Value(order)) for verdict, order in RESULT_ORDER.items()),
        default=Value(len(RESULT_ORDER)),
        output_field=IntegerField(),
    )
    return (
        RunCase.objects.filter(run=run)
        .select_related("run")
        .prefetch_related("calls")
        .annotate(
            result_order=ExpressionWrapper(
                rank * Value(RANK_STEP) + F("position"), output_field=IntegerField()
            )
        )
        .order_by("result_order")
    )


RANK_STEP = 100_000_000
"""Positions per verdict rank in ``result_order`` (a run has far fewer cases; 4 ranks stay
within a 32-bit integer)."""
RESULT_ORDER = {"regression": 0, "error": 1, "fix": 2}
"""How results are ordered: these verdicts first, in this order, then the rest; by
position within each."""


def run_errors(run: Run) -> int | None:
    """How many cases of a finished run ended in an error (a call failed, a judge could
    not answer, the case could not be rendered): the summary's ``errors``. ``None``
    before it finished. A run with errors has not passed: its pass rates mean nothing."""
    if run.status != "finished" or not isinstance(run.summary, dict):
        return None
    return int(run.summary.get("errors", 0))


def run_first_error(run: Run) -> str | None:
    """The first error of the run's cases (a case that could not render, else a call
    that failed), as a reader sees why a run has errors; None when none."""
    rendered = RunCase.objects.filter(run=run).exclude(error="").order_by("position").first()
    if rendered is not None:
        return f"{rendered.case_name}: {rendered.error}"
    call = (
        RunCall.objects.filter(run=run, done=True)
        .exclude(error="")
        .select_related("run_case")
        .order_by("id")
        .first()
    )
    return None if call is None else f"{call.run_case.case_name}: {call.error}"
