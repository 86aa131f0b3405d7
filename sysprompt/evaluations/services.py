"""Writes of suites, cases and runs; each keyword-only, atomic, and recorded in the audit log.

Bad input raises :class:`~sysprompt.errors.InvalidInput` naming the field, and nothing
is stored; a JSONL import stores every line or none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from sysprompt.errors import InvalidInput
from sysprompt.evaluations.background import run_enqueue
from sysprompt.evaluations.models import ENDED, Case, Run, Suite
from sysprompt.evaluations.planning import plan_check, run_plan, run_request_valid
from sysprompt.evaluations.selectors import case_get, run_get, suite_get
from sysprompt.evaluations.validation import (
    CheckedCase,
    case_valid,
    description_valid,
    suite_name_valid,
)
from sysprompt.events import records
from sysprompt.events.services import Actor
from sysprompt.prompts.catalog import prompt_or_default
from sysprompt.prompts.catalog_services import editors_check as catalog_editors_check
from sysprompt.prompts.models import Prompt

IMPORT_MAX_LINES = 20_000
"""The most cases one JSONL import may hold."""
IMPORT_MAX_BYTES = 64 * 1_048_576


@transaction.atomic
def suite_create(
    *, name: object, description: object = "", author: Actor, prompt: Prompt | None = None
) -> Suite:
    """A new suite of ``prompt`` (``default`` when None); suite names are per prompt."""
    checked = suite_name_valid(name)
    mine = prompt_or_default(prompt)
    now = timezone.now()
    if Suite.objects.filter(prompt=mine, name=checked).exists():
        raise InvalidInput("name", f"there is a suite {checked!r} already")
    suite = Suite.objects.create(
        prompt=mine,
        name=checked,
        description=description_valid(description),
        created_at=now,
        updated_at=now,
        cases_changed_at=now,
        updated_by=_user(author),
    )
    records.suite_changed(actor=author, suite=checked, change="created", prompt=mine.name)
    return suite


@transaction.atomic
def suite_update(
    *, name: str, description: object, author: Actor, prompt: Prompt | None = None
) -> Suite:
    suite = suite_get(name, prompt=prompt)
    suite.description = description_valid(description)
    suite.updated_at = timezone.now()
    suite.updated_by = _user(author)
    suite.save(update_fields=["description", "updated_at", "updated_by"])
    records.suite_changed(actor=author, suite=name, change="changed", prompt=suite.prompt.name)
    return suite


@transaction.atomic
def suite_delete(*, name: str, author: Actor, prompt: Prompt | None = None) -> None:
    suite = suite_get(name, prompt=prompt)
    suite.delete()
    records.suite_changed(actor=author, suite=name, change="deleted", prompt=suite.prompt.name)


def _touch(suite: Suite, author: Actor) -> None:
    now = timezone.now()
    Suite.objects.filter(pk=suite.pk).update(
        updated_at=now, cases_changed_at=now, updated_by=_user(author)
    )


def _fields(checked: CheckedCase) -> dict[str, Any]:
    return {
        "context": checked.context,
        "messages": checked.messages,
        "tools": checked.tools,
        "checks": checked.checks,
        "reference": checked.reference,
    }


@transaction.atomic
def case_create(
    *, suite: str, fields: Mapping[str, Any], author: Actor, prompt: Prompt | None = None
) -> Case:
    row = suite_get(suite, prompt=prompt)
    checked = case_valid(fields, prompt=row.prompt)
    now = timezone.now()
    try:
        with transaction.atomic():
            case = Case.objects.create(
                suite=row, name=checked.name, created_at=now, updated_at=now, **_fields(checked)
            )
    except IntegrityError:
        raise InvalidInput("name", f"suite {suite!r} has a case {checked.name!r} already") from None
    _touch(row, author)
    records.case_changed(
        actor=author, suite=suite, case=checked.name, change="created", prompt=row.prompt.name
    )
    return case


@transaction.atomic
def case_save(
    *,
    suite: str,
    name: str,
    fields: Mapping[str, Any],
    author: Actor,
    prompt: Prompt | None = None,
) -> Case:
    """Replace case ``name`` of ``suite`` (a rename when ``fields`` names another)."""
    row = suite_get(suite, prompt=prompt)
    case = case_get(row, name)
    checked = case_valid(fields, name=fields.get("name", name), prompt=row.prompt)
    if checked.name != name and Case.objects.filter(suite=row, name=checked.name).exists():
        raise InvalidInput("name", f"suite {suite!r} has a case {checked.name!r} already")
    case.name = checked.name
    for field, value in _fields(checked).items():
        setattr(case, field, value)
    case.updated_at = timezone.now()
    case.save()
    _touch(row, author)
    records.case_changed(
        actor=author, suite=suite, case=checked.name, change="changed", prompt=row.prompt.name
    )
    return case


@transaction.atomic
def case_delete(*, suite: str, name: str, author: Actor, prompt: Prompt | None = None) -> None:
    row = suite_get(suite, prompt=prompt)
    case_get(row, name).delete()
    _touch(row, author)
    records.case_changed(
        actor=author, suite=suite, case=name, change="deleted", prompt=row.prompt.name
    )


@dataclass(frozen=True)
class LineError:
    line: int
    field: str
    message: str


class ImportRefused(InvalidInput):
    """A JSONL import with bad lines: each line's error, and nothing stored."""

    def __init__(self, errors: Sequence[LineError]) -> None:
        first = errors[0]
        super().__init__(f"line {first.line}", f"{first.field}: {first.message}")
        self.errors = tuple(errors)


@transaction.atomic
def cases_import(*, suite: str, text: str, author: Actor, prompt: Prompt | None = None) -> int:
    """Add or replace the cases of ``suite`` from JSONL (one case a line, the API's
    fields; blank lines skipped); how many lines were stored. Every bad line is reported
    (:class:`ImportRefused`) and then nothing is stored."""
    row = suite_get(suite, prompt=prompt)
    if len(text.encode("utf-8", "surrogatepass")) > IMPORT_MAX_BYTES:
        raise InvalidInput("body", f"an import holds at most {IMPORT_MAX_BYTES:,} bytes")
    checked: dict[str, CheckedCase] = {}
    errors: list[LineError] = []
    lines = text.splitlines()
    if len(lines) > IMPORT_MAX_LINES:
        raise InvalidInput("body", f"an import holds at most {IMPORT_MAX_LINES:,} cases")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            fields = json.loads(line)
        except ValueError as error:
            errors.append(LineError(number, "line", f"not JSON: {error}"))
            continue
        if not isinstance(fields, dict):
            errors.append(LineError(number, "line", "a case is a JSON object"))
            continue
        try:
            case = case_valid(fields, prompt=row.prompt)
        except InvalidInput as error:
            errors.append(LineError(number, error.field, error.message))
            continue
        if case.name in checked:
            errors.append(LineError(number, "name", f"case {case.name!r} is on an earlier line"))
            continue
        checked[case.name] = case
    if errors:
        raise ImportRefused(errors)
    now = timezone.now()
    existing = {case.name: case for case in Case.objects.filter(suite=row, name__in=checked)}
    new = []
    for name, case in checked.items():
        if name in existing:
            stored = existing[name]
            for field, value in _fields(case).items():
                setattr(stored, field, value)
            stored.updated_at = now
        else:
            new.append(Case(suite=row, name=name, created_at=now, updated_at=now, **_fields(case)))
    Case.objects.bulk_create(new, batch_size=500)
    Case.objects.bulk_update(
        list(existing.values()),
        ["context", "messages", "tools", "checks", "reference", "updated_at"],
        batch_size=500,
    )
    _touch(row, author)
    records.suite_changed(
        actor=author,
        suite=suite,
        change="imported",
        detail=f"{len(new):,} cases added, {len(existing):,} replaced",
        prompt=row.prompt.name,
    )
    return len(checked)


def case_json(case: Case) -> dict[str, Any]:
    """A case as the API answers it and a JSONL export writes it."""
    return {
        "name": case.name,
        "context": case.context,
        "messages": case.messages,
        "tools": case.tools,
        "checks": case.checks,
        "reference": case.reference,
    }


def case_jsonl(case: Case) -> str:
    """A case as one line of a JSONL export (what an import reads back)."""
    return json.dumps(case_json(case), ensure_ascii=False, separators=(",", ":")) + "\n"


@transaction.atomic
def run_create(
    *,
    suite: object,
    candidate: object,
    baseline: object = None,
    model: object = None,
    baseline_model: object = None,
    candidate_model: object = None,
    repeat: object = None,
    fresh: object = False,
    prompt: object = None,
    author: Actor,
) -> Run:
    """A queued run, and its task on the evaluations' queue (``evaluations.background``:
    a worker does the work). Its plan is held to the limits first
    (``evaluations.planning``): a run over them is refused and nothing is stored.
    ``prompt``: the prompt (a :class:`Prompt`, or its name as a body gives it; ``None``:
    ``default``) whose suite runs, with its releases and labels as the sides."""
    request = run_request_valid(
        prompt=prompt,
        suite=suite,
        candidate=candidate,
        baseline=baseline,
        model=model,
        baseline_model=baseline_model,
        candidate_model=candidate_model,
        repeat=repeat,
        fresh=fresh,
    )
    user = _user(author)
    if user is not None:  # one start at a time per user, so two cannot both pass the count
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    plan = run_plan(request)
    plan_check(plan, author)
    row = request.suite
    candidate_side = request.candidate
    run = Run.objects.create(
        prompt=request.prompt,
        suite=row,
        suite_name=row.name,
        candidate=candidate_side,
        baseline=request.baseline,
        candidate_release=candidate_side if isinstance(candidate_side, int) else None,
        candidate_model=request.candidate_model,
        baseline_model=request.baseline_model,
        default_model=request.default_model,
        repeat=request.repeat,
        fresh=request.fresh,
        planned_calls=plan.calls,
        planned_cost=plan.cost,
        created_by=user,
        created_at=timezone.now(),
    )
    records.evaluation_started(
        actor=author,
        run_id=run.pk,
        suite=row.name,
        candidate=run.candidate,
        baseline=run.baseline,
        prompt=request.prompt.name,
    )
    run_enqueue(run_id=run.pk)
    return run


@transaction.atomic
def run_cancel(*, run_id: int, author: Actor) -> Run:
    """Ask a queued or running run to stop (a queued one stops at once); an ended run is
    left as it is."""
    run = run_get(run_id)
    if run.status in ENDED:
        return run
    Run.objects.filter(pk=run.pk).update(cancel_requested=True)
    if run.status == "queued":
        Run.objects.filter(pk=run.pk, status="queued").update(
            status="cancelled", finished_at=timezone.now()
        )
    records.evaluation_cancelled(
        actor=author, run_id=run.pk, suite=run.suite_name, prompt=run.prompt.name
    )
    run.refresh_from_db()
    return run


def editors_check(user: Actor, prompt: Prompt, *, action: str) -> None:
    """:class:`~sysprompt.errors.PromptForbidden` when ``user`` may not ``action`` (the
    words of the 403: "change suites of") ``prompt`` — it or a folder above it is
    restricted to groups the user is in none of — recorded in the audit log as
    ``prompt.refused`` (outside any transaction of the write, which does not happen)."""
    catalog_editors_check(user, prompt, action=action)


def _user(author: Actor) -> Any:
    return author if author is not None and author.is_authenticated else None
