"""Reads of suites, cases and runs."""

from __future__ import annotations

from django.db.models import Case as Cases
from django.db.models import Count, ExpressionWrapper, F, IntegerField, QuerySet, Value, When

from sysprompt.errors import (
    CaseNotFound,
    ConversationNotFound,
    EvaluationNotFound,
    InvalidInput,
    SuiteNotFound,
)
from sysprompt.evaluations.models import Case, RunCall, RunCase, Suite
from sysprompt.evaluations.models import Run as Run  # the type views annotate runs with
from sysprompt.prompts.catalog import prompt_or_default
from sysprompt.prompts.models import ConversationPrompt, Prompt
from sysprompt.prompts.selectors import Actor, ConversationAction, conversation_check
from sysprompt.prompts.validation import conversation_id_check


def suites_list(*, prompt: Prompt | None = None) -> QuerySet[Suite]:
    """The suites of ``prompt`` (``default`` when None), by name."""
    mine = prompt_or_default(prompt)
    return (
        Suite.objects.filter(prompt=mine)
        .select_related("prompt")
        .annotate(cases_count=Count("cases"))
        .order_by("name")
    )


def suite_get(name: str, *, prompt: Prompt | None = None) -> Suite:
    """The suite ``name`` of ``prompt`` (``default`` when None); :class:`SuiteNotFound`."""
    suite = suites_list(prompt=prompt).filter(name=name).first()
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


def runs_list(
    *, suite: str | None = None, before: int | None = None, prompt: Prompt | None = None
) -> QuerySet[Run]:
    """Runs, newest first: every prompt's, or ``prompt``'s alone; of ``suite`` (a name)
    alone when given."""
    runs = Run.objects.select_related("created_by", "prompt").order_by("-id")
    if prompt is not None:
        runs = runs.filter(prompt=prompt)
    if suite is not None:
        runs = runs.filter(suite_name=suite)
    if before is not None:
        runs = runs.filter(id__lt=before)
    return runs


def run_get(run_id: int) -> Run:
    run = Run.objects.select_related("created_by", "prompt").filter(pk=run_id).first()
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


FROM = "from_conversation"
_FROM_SHAPE = 'a conversation id, or {"host": username, "conversation": id}'
MANY_HOSTS = 20
"""The most agent hosts a conversation id is looked up among (named in the 400)."""


def case_conversation(given: object, *, user: Actor, prompt: Prompt) -> ConversationPrompt:
    """The recorded conversation a case is made from: ``given`` is its id (when one agent
    host holds it) or ``{"host": username, "conversation": id}``; one ``user`` may see
    (404 otherwise) that was served from ``prompt`` (the suite's; 400 otherwise)."""
    if isinstance(given, dict):
        if set(given) != {"host", "conversation"} or not all(
            isinstance(value, str) for value in given.values()
        ):
            raise InvalidInput(FROM, _FROM_SHAPE)
        host: str | None = given["host"]
        conversation_id = given["conversation"]
    elif isinstance(given, str):
        host, conversation_id = None, given
    else:
        raise InvalidInput(FROM, _FROM_SHAPE)
    try:
        checked = conversation_id_check(conversation_id)
    except InvalidInput as error:
        raise InvalidInput(FROM, error.message) from None
    rows = ConversationPrompt.objects.select_related("owner", "prompt").filter(
        conversation_id=checked
    )
    if host is not None:
        rows = rows.filter(owner__username=host)
    visible = []
    for row in rows.order_by("id")[:MANY_HOSTS]:
        try:
            visible.append(conversation_check(row, user=user, action=ConversationAction.READ))
        except ConversationNotFound:
            continue
    if not visible:
        raise ConversationNotFound(checked)
    if len(visible) > 1:
        hosts = ", ".join(row.owner.get_username() if row.owner else "(none)" for row in visible)
        raise InvalidInput(
            FROM,
            f"conversation {checked!r} is held by several agent hosts ({hosts}): give "
            f'{{"host": username, "conversation": {checked!r}}}',
        )
    stored = visible[0]
    if stored.prompt_id != prompt.pk:
        raise InvalidInput(
            FROM,
            f"conversation {checked!r} was served from prompt {stored.prompt.name!r}; the "
            f"suite belongs to prompt {prompt.name!r}",
        )
    return stored
