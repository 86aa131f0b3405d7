"""``manage.py evaluate``: start a run, show its progress, print its summary, exit with
what a CI job gates on (evaluations §5).

arguments → ``services.run_create`` (queued) → the run is done by a worker
(``manage.py worker`` or ``evaluations_worker``, the default), or by this process with
``--inline`` (``execution.run_execute`` in a thread of this process: no worker needed,
e.g. in a CI job with its own database) → progress on stderr while it runs → the
summary on stdout, ``--junit FILE`` (one testcase per case) → exit 0 when it passes (no
regression, no error), 1 when it does not, 2 when it could not be started (a bad field,
a release or label that does not exist, a limit) or did not finish (failed, cancelled,
or still going after ``--wait-timeout`` seconds). As it starts it says which model each
side is answered by (and when that is the default) and the run's plan.
"""

from __future__ import annotations

import sys
import threading
import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection

from sysprompt.errors import InvalidInput, SyspromptError
from sysprompt.evaluations import execution, results, services
from sysprompt.evaluations.gate import run_gate
from sysprompt.evaluations.models import Run
from sysprompt.evaluations.selectors import run_get
from sysprompt_core.evaluations.report import (
    EXIT_ERROR,
    Thresholds,
    junit_xml,
    outcome,
    started_text,
    summary_text,
)

ENDED = ("finished", "failed", "cancelled")
DEFAULT_WAIT_SECONDS = 3600.0
POLL_SECONDS = 1.0


def side_argument(text: str) -> object:
    """``latest``, a release number, or a label's name (``label:NAME`` also)."""
    if text == "latest":
        return "latest"
    if text.isascii() and text.isdigit():
        return int(text)
    return {"label": text.removeprefix("label:")}


def thresholds_for(run: Run) -> Thresholds:
    """The thresholds a run must pass: its baseline label's gate when that gate names the
    run's suite (evaluations §4), else no regression and no error."""
    gate = run_gate(run)
    return Thresholds(max_regressions=gate.max_regressions, min_pass_rate=gate.min_pass_rate)


class Command(BaseCommand):
    help = "Evaluate a candidate against a baseline on a suite; exit 0 passed, 1 failed, 2 error."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--prompt", help="the prompt whose suite runs (support/triage); default: default"
        )
        parser.add_argument("--suite", required=True)
        parser.add_argument(
            "--candidate", required=True, help="latest, a release number or a label's name"
        )
        parser.add_argument("--baseline", default="production", help="default: production")
        parser.add_argument("--model", help="a configured model (default EVAL_DEFAULT_MODEL)")
        parser.add_argument("--baseline-model")
        parser.add_argument("--candidate-model")
        parser.add_argument("--repeat", type=int)
        parser.add_argument("--fresh", action="store_true", help="bypass the response cache")
        parser.add_argument("--junit", type=Path, help="write JUnit XML here")
        parser.add_argument(
            "--inline", action="store_true", help="do the run in this process, not a worker's"
        )
        parser.add_argument(
            "--wait-timeout",
            type=float,
            default=DEFAULT_WAIT_SECONDS,
            help="give up (exit 2) after this many seconds; the run goes on",
        )
        parser.add_argument(
            "--poll", type=float, default=POLL_SECONDS, help="seconds between looks at the run"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            code = self.evaluate(options)
        except Exception as error:  # noqa: BLE001 - any failure is exit 2, never 1 (failed)
            self.stderr.write(f"evaluate: {type(error).__name__}: {error}")
            code = EXIT_ERROR
        if code:
            sys.exit(code)

    def evaluate(self, options: dict[str, Any]) -> int:
        try:
            run = services.run_create(
                prompt=options["prompt"],
                suite=options["suite"],
                candidate=side_argument(options["candidate"]),
                baseline=side_argument(options["baseline"]),
                model=options["model"],
                baseline_model=options["baseline_model"],
                candidate_model=options["candidate_model"],
                repeat=options["repeat"],
                fresh=options["fresh"],
                author=None,
            )
        except InvalidInput as error:
            self.stderr.write(f"evaluate: {error.field}: {error.message}")
            return EXIT_ERROR
        except SyspromptError as error:
            self.stderr.write(f"evaluate: {error}")
            return EXIT_ERROR
        started = {
            "id": run.pk,
            "baseline_model": run.baseline_model,
            "candidate_model": run.candidate_model,
            "default_model": run.default_model,
            "planned_calls": run.planned_calls,
            "planned_cost": run.planned_cost,
        }
        self.stderr.write(started_text(started, run.suite_name), ending="")
        inline = _Inline(run.pk) if options["inline"] else None
        try:
            shown = self._wait(run.pk, options["wait_timeout"], options["poll"], inline)
        finally:
            if inline is not None:
                inline.stop()  # after a timeout: the calls in flight are saved first
        if inline is not None and inline.error is not None:
            raise inline.error
        answer = results.run_json(run_get(run.pk))
        if answer["status"] not in ENDED:
            self.stderr.write(
                f"evaluate: evaluation {run.pk} is still {answer['status']} after "
                f"{options['wait_timeout']:g} s (is a worker running? manage.py worker)"
            )
        elif shown != (answer["status"], answer["progress"]["done"], answer["progress"]["total"]):
            self._progress(answer)
        thresholds = thresholds_for(run_get(run.pk))
        self.stdout.write(summary_text(answer, thresholds), ending="")
        if options["junit"] is not None:
            found = results.run_results_json(run_get(run.pk))
            options["junit"].write_bytes(junit_xml(answer, found))
        return outcome(answer, thresholds)

    def _wait(
        self, run_id: int, timeout: float, poll: float, inline: _Inline | None
    ) -> tuple[str, int, int]:
        """Show the progress until the run ends (or the inline work stops) or ``timeout``
        passes; what was shown."""
        deadline = time.monotonic() + timeout
        shown = ("", -1, -1)
        while True:
            stopped = inline is not None and not inline.alive()  # before the read below
            run = run_get(run_id)
            now = (run.status, run.done, run.total)
            if now != shown:
                self._progress(results.run_json(run))
                shown = now
            if run.status in ENDED or stopped or time.monotonic() >= deadline:
                return shown
            time.sleep(min(poll, max(0.0, deadline - time.monotonic())))

    def _progress(self, run: dict[str, Any]) -> None:
        progress = run["progress"]
        self.stderr.write(f"{run['status']}: {progress['done']}/{progress['total']} calls")


class _Inline:
    """The run done in a thread of this process (``--inline``), while the command's own
    thread shows its progress."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.error: Exception | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name=f"evaluate-{run_id}")
        self._thread.start()

    def _work(self) -> None:
        try:
            execution.run_execute(self.run_id, stop=self._stop)
        except Exception as error:  # noqa: BLE001 - the command reports it (exit 2)
            self.error = error
        finally:
            connection.close()  # this thread's own

    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
