"""A run's work: render every case for both sides, call the models, check, compare.

The pipeline of :func:`run_execute` (what a worker does with a run)::

    queued run ──prepare, in chunks of PREPARE_CHUNK cases, each chunk one transaction──▶
      per case: both sides rendered through a first turn's own code (the side's label
      target, its split arm for the case's name as conversation id, the release's
      template and library, the case's host context, overrides), kept on a RunCase
      with the case's turns, tools and checks as they were; one RunCall per side and
      repetition — or, when both sides' prompts and models are the same, one call
      ("both") that serves both
    ──claim calls (a lease: claimed_by, claimed_until, renewed by a thread of the
      worker's own while it holds them)──▶
      per call: the case's checks parsed as when a case is saved (a case whose stored
      checks are refused now is an error, with no model call; the last CHECKS_KEPT
      cases' kept), the response cache (unless ``fresh``) or the model (at most
      ``max_concurrency`` calls to one model at a time in this process), then the
      checks (a judge is one more model call, cached alike); saved at once, what its
      model calls cost added to the run's ``spent``
    ──when no call is left──▶ verdicts per case, the summary, ``finished`` and the
      ``evaluation.finished`` webhook

Several workers may work on one run: each claims calls no one holds (or whose lease
ran out — a worker that died), so each call is done once; the last to find nothing
left finishes the run (one conditional update decides who). A worker killed mid-run
loses at most its calls in flight: their leases run out and another worker (or the
same, started again) takes them, logging each call it takes up with whose lease ran
out and when. ``cancel`` is seen between claims and within half a
second while calls are in flight. With ``EVAL_DAILY_BUDGET`` a worker looks at the
day's spending before its first claim and every ``BUDGET_LOOK_SECONDS``: once the
day's runs have spent it, it claims no more and fails the run, saying why, when its
calls in flight are saved.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput, LabelNotFound, ReleaseNotFound, SyspromptError
from sysprompt.evaluations.models import CachedResponse, Case, Run, RunCall, RunCase
from sysprompt.evaluations.planning import spent_today
from sysprompt.evaluations.providers import (
    Call,
    Completion,
    Provider,
    ProviderError,
    provider_for,
)
from sysprompt.evaluations.summary import run_summary
from sysprompt.evaluations.validation import RunSide
from sysprompt.events import records
from sysprompt.library.selectors import DatabaseSource
from sysprompt.model_endpoints import ModelEndpoint
from sysprompt.prompts.rendering import prompt_render
from sysprompt.prompts.selectors import CurrentTemplate
from sysprompt.prompts.validation import CheckedCwd, cwd_check, host_context_check
from sysprompt.releases.selectors import label_get, pointer_build, test_context_get
from sysprompt_core.errors import CoreError
from sysprompt_core.evaluations import (
    JUDGE_SCHEMA,
    Answer,
    Check,
    CheckResult,
    InvalidCheck,
    JudgeCheck,
    ToolCall,
    judge_messages,
    parse_checks,
    read_verdict,
    response_key,
    run_check,
)
from sysprompt_core.releases import LATEST, Pointer, Split, choose_arm

logger = logging.getLogger("sysprompt.evaluations")

BUDGET_LOOK_SECONDS = 2.0
"""How often a worker compares today's spending with ``EVAL_DAILY_BUDGET``."""
PREPARE_CHUNK = 25
"""Cases rendered and stored per transaction while a run is prepared (small, so the
first calls start soon; the calls of a chunk run while the next one renders)."""
CHECKS_KEPT = 16
"""The cases whose parsed checks (their patterns compiled) a worker keeps at once: the
calls of one case are claimed together, and a case's patterns may take a few MB."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def run_execute(
    run_id: int, *, worker: str | None = None, stop: threading.Event | None = None
) -> str:
    """Do what is left of run ``run_id``: its status when this worker leaves it —
    ``running`` when the rest is held by other workers, or ``stop`` was set (the calls in
    flight are finished and saved first)."""
    worker = worker or worker_name()
    run = Run.objects.filter(pk=run_id).first()
    if run is None or run.status in ("finished", "failed", "cancelled"):
        return "gone" if run is None else run.status
    Run.objects.filter(pk=run_id, status="queued").update(
        status="running", started_at=timezone.now()
    )
    try:
        preparer = _Preparer(run_id)
    except Exception as error:  # a run that cannot start says why; the worker goes on
        logger.exception("evaluation %s could not be prepared", run_id)
        _fail(run_id, f"the run could not be prepared: {error}")
        return "failed"
    return _Work(preparer, worker, stop or threading.Event()).work()


def _fail(run_id: int, message: str) -> None:
    Run.objects.filter(pk=run_id, status__in=("queued", "running")).update(
        status="failed", error=message[:2000], finished_at=timezone.now()
    )


# --- Preparing: render each case for both sides, store RunCase and RunCall rows.


@dataclass(frozen=True)
class _Built:
    template: CurrentTemplate
    library: DatabaseSource


class _Sides:
    """Each pointer's template and library read once for the whole preparation."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self._builds: dict[Pointer, _Built] = {}
        self._targets: dict[str, Any] = {}

    def build(self, side: RunSide, case_name: str) -> _Built:
        pointer = self.pointer(side, case_name)
        if pointer not in self._builds:
            template, library, _ = pointer_build(pointer, prompt=self.run.prompt)
            self._builds[pointer] = _Built(template, library)
        return self._builds[pointer]

    def pointer(self, side: RunSide, case_name: str) -> Pointer:
        if side == LATEST or isinstance(side, int):
            return side
        name = side["label"]
        if name not in self._targets:
            self._targets[name] = label_get(name, prompt=self.run.prompt).target
        target = self._targets[name]
        if isinstance(target, Split):
            return target.arms[choose_arm(target, name, case_name)].pointer
        pointer: Pointer = target.pointer
        return pointer


class _Preparer:
    """Renders the run's cases a chunk at a time (:meth:`step`), so the calls of the
    first chunks are made while the next ones render. Chunks are taken in case id order
    from the one after the last prepared (``Run.prepared``), each claimed by one
    conditional update, so two workers never prepare the same chunk."""

    def __init__(self, run_id: int) -> None:
        run = Run.objects.select_related("prompt").get(pk=run_id)
        if run.suite_id is None:
            raise InvalidInput("suite", "the suite was deleted")
        self.run = run
        self.cases = Case.objects.filter(suite_id=run.suite_id).order_by("id")
        if run.cases_total == 0 and run.prepared == 0:
            baseline = run.baseline
            target = (
                label_get(baseline["label"], prompt=run.prompt).target.as_json()
                if isinstance(baseline, dict)
                else None
            )
            Run.objects.filter(pk=run_id).update(
                cases_total=self.cases.count(), baseline_target=target
            )
            run.refresh_from_db()
        self.sides = _Sides(run)
        self.done = False

    def step(self) -> bool:
        """Prepare the next chunk; whether every case is prepared."""
        run = self.run
        run.refresh_from_db(fields=["prepared"])
        chunk = list(self.cases.filter(id__gt=run.prepared)[:PREPARE_CHUNK])
        if not chunk:
            self.done = True
            return True
        rendered = [_render_case(run, self.sides, case) for case in chunk]
        with transaction.atomic():
            claimed = Run.objects.filter(pk=run.pk, prepared=run.prepared).update(
                prepared=chunk[-1].pk
            )
            if claimed:  # else another worker prepared this chunk meanwhile
                _store(run, RunCase.objects.filter(run=run).count(), chunk, rendered)
        return False


@dataclass(frozen=True)
class _Rendered:
    baseline: str | None
    candidate: str | None
    error: str


def _render_case(run: Run, sides: _Sides, case: Case) -> _Rendered:
    endpoints = app_settings().models
    try:
        prompts = []
        for side, model in (
            (run.baseline, run.baseline_model),
            (run.candidate, run.candidate_model),
        ):
            built = sides.build(side, case.name)
            prompts.append(_render(case, built, endpoints[model], run))
        return _Rendered(prompts[0], prompts[1], "")
    except (SyspromptError, CoreError, LabelNotFound, ReleaseNotFound) as error:
        return _Rendered(None, None, _said(error))


def _said(error: Exception) -> str:
    if isinstance(error, InvalidInput):
        return f"{error.field}: {error.message}"
    return str(error)


def _render(case: Case, built: _Built, endpoint: ModelEndpoint, run: Run) -> str | None:
    """The case's system prompt as a first turn of a conversation named after the case
    would get it from ``built`` (its provider and model default to the endpoint's)."""
    fields = dict(case.context or {})
    if "test_context" in fields:
        test = test_context_get(fields["test_context"], prompt=run.prompt)
        fields = {
            "cwd": test.cwd,
            "values": test.values,
            "provider": test.provider,
            "model": test.model,
            "tools": test.tools,
            "variables": test.variables,
            "override": test.override,
        }
    provider = fields.get("provider") or (endpoint.kind if endpoint.kind != "echo" else None)
    host = host_context_check(
        provider=provider,
        tools=fields.get("tools") or None,
        variables=fields.get("variables") or None,
        values=fields.get("values") or None,
        override=fields.get("override"),
    )
    cwd = fields.get("cwd") or ""
    checked = _cwd(cwd)
    rendered = prompt_render(
        cwd=checked,
        model=str(fields.get("model") or endpoint.model),
        conversation_id=case.name,
        template=built.template,
        host=host,
        library=built.library,
    )
    rendered.check_not_busy()
    return rendered.prompt


def _cwd(cwd: str) -> CheckedCwd:
    if not cwd:
        return CheckedCwd("", None)
    return cwd_check(cwd)


def _store(run: Run, start: int, chunk: Sequence[Case], rendered: Sequence[_Rendered]) -> None:
    rows = [
        RunCase(
            run=run,
            position=start + offset,
            case=case,
            case_name=case.name,
            messages=case.messages,
            tools=case.tools,
            checks=case.checks,
            baseline_prompt=result.baseline,
            candidate_prompt=result.candidate,
            prompt_changed=result.baseline != result.candidate,
            error=result.error,
            verdict="error" if result.error else "",
        )
        for offset, (case, result) in enumerate(zip(chunk, rendered, strict=True))
    ]
    RunCase.objects.bulk_create(rows)
    stored = RunCase.objects.filter(run=run, position__gte=start, position__lt=start + len(chunk))
    same_model = run.baseline_model == run.candidate_model
    calls = []
    for row in stored.only("id", "position", "prompt_changed", "error"):
        if row.error:
            continue
        sides = ("both",) if same_model and not row.prompt_changed else ("baseline", "candidate")
        calls += [
            RunCall(run=run, run_case=row, side=side, repetition=repetition)
            for side in sides
            for repetition in range(run.repeat)
        ]
    RunCall.objects.bulk_create(calls, batch_size=1000)
    Run.objects.filter(pk=run.pk).update(total=F("total") + len(calls))


# --- Working: claim calls, do them, save each at once.


class _Leases:
    """The calls this worker holds, their leases renewed every third of the claim by a
    thread of their own: however long the coordinating thread is held up (rendering a
    chunk, checking cached answers, waiting for the database), a call being made keeps
    its lease, so no other worker makes it again."""

    def __init__(self, run_id: int, worker: str, claim: timedelta) -> None:
        self.run_id = run_id
        self.worker = worker
        self.claim = claim
        self.held: set[int] = set()
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.thread = threading.Thread(
            target=self._renewing, name=f"evaluation-{run_id}-leases", daemon=True
        )
        self.thread.start()

    def hold(self, ids: Iterable[int]) -> None:
        with self.lock:
            self.held.update(ids)

    def let_go(self, ids: Iterable[int]) -> None:
        with self.lock:
            self.held.difference_update(ids)

    def renew(self) -> None:
        with self.lock:
            ids = list(self.held)
        if ids:
            RunCall.objects.filter(id__in=ids, claimed_by=self.worker, done=False).update(
                claimed_until=timezone.now() + self.claim
            )

    def _renewing(self) -> None:
        try:
            while not self.closing.wait(self.claim.total_seconds() / 3):
                try:
                    self.renew()
                except Exception:  # the database away for a moment: the next beat tries
                    logger.exception("evaluation %s: renewing leases failed", self.run_id)
        finally:
            connections[DEFAULT_DB_ALIAS].close()  # this thread's own

    def close(self) -> None:
        self.closing.set()
        self.thread.join()


class _Work:
    def __init__(self, preparer: _Preparer, worker: str, stop: threading.Event) -> None:
        run = preparer.run
        self.preparer = preparer
        self.run = run
        self.worker = worker
        self.stop = stop
        conf = app_settings()
        self.endpoints = conf.models
        self.max_output = conf.eval_max_output_chars
        self.claim = timedelta(seconds=conf.eval_claim_seconds)
        self.budget = conf.eval_daily_budget
        self.halted = ""
        """Why this worker stops claiming and fails the run once its calls in flight are
        saved (the day's budget spent)."""
        self.lock = threading.Lock()
        self.limits: dict[str, threading.Semaphore] = {}
        self.providers: dict[str, Provider] = {}
        self.checks: OrderedDict[int, tuple[Check, ...] | str] = OrderedDict()
        self.wrappers: list[Any] = []
        self.concurrency = sum(
            self.endpoints[name].max_concurrency
            for name in {run.baseline_model, run.candidate_model}
        )

    def work(self) -> str:
        pool = ThreadPoolExecutor(max_workers=min(64, self.concurrency))
        running: dict[Future[_Outcome], int] = {}
        leases = _Leases(self.run.pk, self.worker, self.claim)
        looked = time.monotonic()
        budgeted = -BUDGET_LOOK_SECONDS  # looked at before the first claim
        try:
            while True:
                going = not self.stop.is_set() and not self.halted
                if time.monotonic() - looked > 0.5 or not running:
                    looked = time.monotonic()
                    if self._cancelled():
                        pool.shutdown(wait=False, cancel_futures=True)
                        return self._cancel()
                if going and time.monotonic() - budgeted >= BUDGET_LOOK_SECONDS:
                    budgeted = time.monotonic()
                    self.halted = self._over_budget()
                    going = not self.halted
                if not self.preparer.done and going:
                    try:
                        self.preparer.step()
                    except Exception as error:  # the run says why; the worker goes on
                        logger.exception("evaluation %s could not be prepared", self.run.pk)
                        pool.shutdown(wait=False, cancel_futures=True)
                        _fail(self.run.pk, f"the run could not be prepared: {error}")
                        return "failed"
                room = self.concurrency * 2 - len(running)
                if room > 0 and going:
                    calls = self._claim(room)
                    leases.hold(call.pk for call in calls)
                    cached = self._from_cache(calls)
                    leases.let_go(cached)
                    self._counted(len(cached), 0.0)
                    for call in calls:
                        if call.pk not in cached:
                            running[pool.submit(self._do_in_thread, call)] = call.pk
                    if cached and not running:
                        continue
                if not running and not self.preparer.done and going:
                    continue
                if not running:
                    if self.halted:
                        _fail(self.run.pk, self.halted)
                        return "failed"
                    if self.preparer.done and self._left() == 0:
                        return self._finish()
                    return "running"  # stopping, or others hold the rest
                finished, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
                outcomes = []
                for future in finished:
                    running.pop(future)
                    outcomes.append(future.result())
                self._counted(_saved(outcomes), sum(outcome.spent for outcome in outcomes))
                leases.let_go(outcome.call.pk for outcome in outcomes)
        finally:
            pool.shutdown(wait=True)
            leases.close()
            for provider in self.providers.values():
                provider.close()
            for wrapper in self.wrappers:
                wrapper.close()
                wrapper.dec_thread_sharing()

    def _counted(self, saved: int, spent: float) -> None:
        if saved or spent:
            Run.objects.filter(pk=self.run.pk).update(
                done=F("done") + saved, spent=F("spent") + spent
            )

    def _over_budget(self) -> str:
        """Why the run must stop for the day's budget (empty: it need not)."""
        if self.budget is None:
            return ""
        spent = spent_today()
        if spent < self.budget:
            return ""
        return (
            f"the daily budget of {self.budget:,.4f} (SYSPROMPT_EVAL_DAILY_BUDGET) was spent: "
            f"today's runs spent {spent:,.4f}; the run stopped making calls"
        )

    def _cancelled(self) -> bool:
        return bool(
            Run.objects.filter(pk=self.run.pk).values_list("cancel_requested", flat=True).first()
        )

    def _cancel(self) -> str:
        Run.objects.filter(pk=self.run.pk, status__in=("queued", "running")).update(
            status="cancelled", finished_at=timezone.now()
        )
        return "cancelled"

    def _claim(self, count: int) -> list[RunCall]:
        now = timezone.now()
        free = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
        with transaction.atomic():
            found = list(
                RunCall.objects.filter(free, run=self.run, done=False)
                .order_by("id")
                .values_list("id", "claimed_by", "claimed_until")[:count]
            )
            if not found:
                return []
            ids = [row[0] for row in found]
            RunCall.objects.filter(free, id__in=ids, done=False).update(
                claimed_by=self.worker, claimed_until=now + self.claim
            )
        claimed = list(
            RunCall.objects.filter(id__in=ids, claimed_by=self.worker, done=False).select_related(
                "run_case"
            )
        )
        before = {row[0]: (row[1], row[2]) for row in found}
        for call in claimed:
            holder, until = before[call.pk]
            if holder and until is not None:
                self._taken_again(call, holder, until)
        return claimed

    def _taken_again(self, call: RunCall, holder: str, until: datetime) -> None:
        """Log a call another worker claimed and did not save, as this one takes it up."""
        logger.warning(
            "evaluation %s: call %s (case %s, %s, repetition %s) is made again by %s: "
            "worker %s's lease ran out at %s before it saved the call (it died, or was held "
            "up longer than SYSPROMPT_EVAL_CLAIM_SECONDS)",
            self.run.pk,
            call.pk,
            call.run_case.case_name,
            call.side,
            call.repetition,
            self.worker,
            holder,
            until.isoformat(),
        )

    def _left(self) -> int:
        return RunCall.objects.filter(run=self.run, done=False).count()

    # -- one call

    def _request(self, call: RunCall) -> tuple[ModelEndpoint, Call, str]:
        """The call's endpoint, its request and its key in the response cache."""
        case = call.run_case
        side = "baseline" if call.side == "baseline" else "candidate"
        endpoint = self.endpoints[getattr(self.run, f"{side}_model")]
        prompt = case.baseline_prompt if side == "baseline" else case.candidate_prompt
        request = Call(prompt, case.messages, case.tools)
        return endpoint, request, _key(endpoint, request, call.repetition)

    def _from_cache(self, calls: Sequence[RunCall]) -> set[int]:
        """Do the calls whose answers are cached (and whose checks need no model) here,
        in one read and one write; the ids done."""
        if self.run.fresh or not calls:
            return set()
        keyed = {call.pk: self._request(call) for call in calls}
        hits = {
            hit.key: hit
            for hit in CachedResponse.objects.filter(key__in=[k for _, _, k in keyed.values()])
        }
        done = []
        for call in calls:
            endpoint, _, key = keyed[call.pk]
            hit = hits.get(key)
            checks = self._parsed(call.run_case)
            if (
                hit is None
                or isinstance(checks, str)
                or any(isinstance(check, JudgeCheck) for check in checks)
            ):
                continue
            answer = _answer_of(hit)
            results = [run_check(check, answer) for check in checks]
            _fill(
                call,
                answer,
                Completion(answer, hit.input_tokens, hit.output_tokens),
                True,
                results,
                None,
            )
            done.append(call)
        _saved([_Outcome(call) for call in done])
        return {call.pk for call in done}

    def _do_in_thread(self, call: RunCall) -> _Outcome:
        wrapper = connections[DEFAULT_DB_ALIAS]
        with self.lock:
            if wrapper not in self.wrappers:  # closed by the coordinating thread at the end
                wrapper.inc_thread_sharing()
                self.wrappers.append(wrapper)
        return self._do(call)

    def _provider(self, endpoint: ModelEndpoint) -> tuple[Provider, threading.Semaphore]:
        """The endpoint's provider (its SDK client made once) and the semaphore that
        lets at most its ``max_concurrency`` calls run at a time."""
        with self.lock:
            if endpoint.name not in self.providers:
                self.providers[endpoint.name] = provider_for(endpoint)
                self.limits[endpoint.name] = threading.Semaphore(endpoint.max_concurrency)
            return self.providers[endpoint.name], self.limits[endpoint.name]

    def _parsed(self, case: RunCase) -> tuple[Check, ...] | str:
        """The case's checks, parsed as a case is when it is saved; the error when the
        checks stored (by an older version) are refused now. The last CHECKS_KEPT
        cases' are kept."""
        with self.lock:
            if case.pk in self.checks:
                self.checks.move_to_end(case.pk)
                return self.checks[case.pk]
        parsed: tuple[Check, ...] | str
        try:
            parsed = parse_checks(case.checks)
        except InvalidCheck as error:
            parsed = f"{error.field}: {error.message}"
        with self.lock:
            self.checks[case.pk] = parsed
            while len(self.checks) > CHECKS_KEPT:
                self.checks.popitem(last=False)
        return parsed

    def _do(self, call: RunCall) -> _Outcome:
        """Answer and check ``call`` (in a pool thread: it reads, never writes; the
        coordinating thread saves the outcome as soon as it is done, so a process has one
        writer — SQLite's writers would wait for each other)."""
        outcome = _Outcome(call)
        checks = self._parsed(call.run_case)
        if isinstance(checks, str):  # no model call for a case that cannot be checked
            _fill(call, Answer(""), None, False, [], f"the checks are refused: {checks}")
            return outcome
        endpoint, request, key = self._request(call)
        answer, completion, cached, error = self._answer(endpoint, request, key, outcome)
        results: list[CheckResult] = []
        if error is None:
            results = self._check(checks, call.run_case, answer, endpoint, call.repetition, outcome)
            judged = [result.reason for result in results if result.error]
            error = judged[0] if judged else None
        _fill(call, answer, completion, cached, results, error)
        return outcome

    def _answer(
        self, endpoint: ModelEndpoint, request: Call, key: str, outcome: _Outcome
    ) -> tuple[Answer, Completion | None, bool, str | None]:
        if not self.run.fresh:
            hit = CachedResponse.objects.filter(key=key).first()
            if hit is not None:
                answer = _answer_of(hit)
                return answer, Completion(answer, hit.input_tokens, hit.output_tokens), True, None
        provider, limit = self._provider(endpoint)
        try:
            with limit:
                completion = provider.complete(request)
        except ProviderError as error:
            return Answer(""), None, False, str(error)
        outcome.spent += (
            endpoint.cost(completion.input_tokens or 0, completion.output_tokens or 0) or 0.0
        )
        answer = Answer(completion.answer.text[: self.max_output], completion.answer.tool_calls)
        completion = Completion(
            answer, completion.input_tokens, completion.output_tokens, completion.ms
        )
        outcome.cache.append(
            CachedResponse(
                key=key,
                output=answer.text,
                tool_calls=[tool.as_json() for tool in answer.tool_calls],
                input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens,
                created_at=timezone.now(),
            )
        )
        return answer, completion, False, None

    def _check(
        self,
        checks: Sequence[Check],
        case: RunCase,
        answer: Answer,
        endpoint: ModelEndpoint,
        repetition: int,
        outcome: _Outcome,
    ) -> list[CheckResult]:
        results = []
        for check in checks:
            if not isinstance(check, JudgeCheck):
                results.append(run_check(check, answer))
                continue
            judge = self.endpoints.get(check.model or endpoint.name)
            if judge is None:
                results.append(
                    CheckResult("judge", False, f"there is no model {check.model!r}", error=True)
                )
                continue
            messages = judge_messages(check, answer, case.messages)
            request = Call(messages[0]["content"], messages[1:], output_schema=JUDGE_SCHEMA)
            key = _key(judge, request, repetition)
            reply, _, _, error = self._answer(judge, request, key, outcome)
            results.append(
                CheckResult("judge", False, f"the judge could not be asked: {error}", error=True)
                if error is not None
                else read_verdict(reply.text)
            )
        return results

    def _finish(self) -> str:
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=self.run.pk)
            if run.status != "running":
                return run.status
            summary = run_summary(run)
            run.summary = summary
            run.status = "finished"
            run.finished_at = timezone.now()
            run.save(update_fields=["summary", "status", "finished_at"])
            records.evaluation_finished(
                run_id=run.pk, suite=run.suite_name, summary=summary, prompt=run.prompt.name
            )
        return "finished"


def _key(endpoint: ModelEndpoint, request: Call, repetition: int) -> str:
    system = [{"role": "system", "content": request.system}] if request.system is not None else []
    asked = request.output_schema is not None and endpoint.structured_output
    return response_key(
        endpoint=endpoint.name,
        model=endpoint.model,
        params=endpoint.params,
        messages=[*system, *request.messages],
        tools=list(request.tools),
        repetition=repetition,
        output_schema=request.output_schema if asked else None,
    )


def _answer_of(hit: CachedResponse) -> Answer:
    return Answer(hit.output, tuple(ToolCall(t["name"], t["arguments"]) for t in hit.tool_calls))


def _fill(
    call: RunCall,
    answer: Answer,
    completion: Completion | None,
    cached: bool,
    results: Sequence[CheckResult],
    error: str | None,
) -> None:
    call.output = answer.text
    call.tool_calls = [tool.as_json() for tool in answer.tool_calls]
    call.checks = [r.as_json() | ({"error": True} if r.error else {}) for r in results]
    call.input_tokens = completion.input_tokens if completion else None
    call.output_tokens = completion.output_tokens if completion else None
    call.ms = completion.ms if completion else None
    call.error = error or ""
    call.cached = cached


@dataclass
class _Outcome:
    """A call answered and checked, and the answers to keep in the response cache."""

    call: RunCall
    cache: list[CachedResponse] = field(default_factory=list)
    spent: float = 0.0
    """What the model calls made for it cost (judges included), at the models' prices."""


def _saved(outcomes: Sequence[_Outcome]) -> int:
    """Save finished calls and their answers to cache, in one transaction; how many
    were saved (a call another worker did meanwhile is not saved again)."""
    if not outcomes:
        return 0
    with transaction.atomic():
        CachedResponse.objects.bulk_create(
            [entry for outcome in outcomes for entry in outcome.cache], ignore_conflicts=True
        )
        return sum(_save(outcome.call) for outcome in outcomes)


def _save(call: RunCall) -> bool:
    """Save a finished call at once (unless another worker did it meanwhile)."""
    return bool(
        RunCall.objects.filter(pk=call.pk, done=False).update(
            done=True,
            output=call.output,
            tool_calls=call.tool_calls,
            checks=call.checks,
            input_tokens=call.input_tokens,
            output_tokens=call.output_tokens,
            ms=call.ms,
            error=call.error,
            cached=call.cached,
            claimed_until=None,
        )
    )
