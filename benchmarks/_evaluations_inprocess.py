"""The in-process half of ``evaluations.py`` (see its docstring); run with the benchmark
database's environment. Prints the figures."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

import httpx  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from benchmarks._support import BENCH_USERNAME, PYTHON, ROOT, resident_bytes  # noqa: E402
from sysprompt.evaluations import execution, services  # noqa: E402
from sysprompt.evaluations.models import Run, RunCall, Suite  # noqa: E402
from sysprompt.prompts import services as prompts  # noqa: E402
from sysprompt.releases import services as releases  # noqa: E402

CASES = 100
CONCURRENCY = 8
RUN_TARGET = 1.25
AGAIN_TARGET_S = 1.0
OWN_TARGET_MS = 5.0
IMPORT_TARGET_S = 10.0


def case(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "messages": [{"role": "user", "content": f"What about {name}?"}],
        "checks": [
            {"type": "contains", "value": "tabs"},
            {"type": "regex", "pattern": r"Use \w+\."},
            {"type": "max_chars", "value": 200},
        ],
    }


def worker() -> subprocess.Popen[str]:
    """A worker (``evaluations_worker`` and its task worker, ``db_worker``) once it has
    done a one-case warm-up run: its start-up is not a run's."""
    process = subprocess.Popen(
        [PYTHON, "manage.py", "evaluations_worker", "--interval", "0.05"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    if not Suite.objects.filter(name="warm-up").exists():
        services.suite_create(name="warm-up", author=None)
        services.cases_import(suite="warm-up", text=_json(case("warm")), author=None)
    _, run = timed_run(suite="warm-up", candidate="latest", model="echo", fresh=True)
    assert run.status == "finished", run.status
    return process


def task_worker_bytes(pid: int) -> int:
    """Resident bytes of the processes under ``pid`` (the task worker doing the runs)."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(entry.name))
    return sum(resident_bytes(child) for child in children)


def timed_run(**options: Any) -> tuple[float, Run]:
    started = time.perf_counter()
    run = services.run_create(author=None, **options)
    while True:
        run.refresh_from_db()
        if run.status in ("finished", "failed", "cancelled"):
            return time.perf_counter() - started, run
        time.sleep(0.005)


def requests(fake: str) -> int:
    return len(httpx.get(f"{fake}/_requests", timeout=10).json())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fake", required=True)
    parser.add_argument("--latency-ms", type=float, required=True)
    parser.add_argument("--import-cases", type=int, required=True)
    args = parser.parse_args()
    prompts.template_save(text="Be brief.\nANSWER: Use tabs.")
    number = releases.release_create(message="reviewed", author=None).release.number
    bench = get_user_model().objects.get(username=BENCH_USERNAME)
    releases.label_set(name="production", target={"release": number}, author=bench)
    prompts.template_save(text="Be brief.\nANSWER: Use spaces.")
    services.suite_create(name="bench", author=None)
    services.cases_import(
        suite="bench", text="\n".join(_json(case(f"case-{n}")) for n in range(CASES)), author=None
    )

    process = worker()
    try:
        seconds, run = timed_run(suite="bench", candidate="latest", model="fake")
        ideal = 2 * CASES * args.latency_ms / 1000 / CONCURRENCY
        assert run.summary is not None and run.summary["calls_made"] == 2 * CASES, run.summary
        assert run.started_at is not None and run.finished_at is not None
        print(
            f"  (waiting for the worker {(run.started_at - run.created_at).total_seconds():.3f} s, "
            f"started to finished {(run.finished_at - run.started_at).total_seconds():.3f} s; "
            f"SDK time per call, median "
            f"{statistics.median(c.ms or 0 for c in RunCall.objects.filter(run=run)):.1f} ms)"
        )
        print(
            f"run of {CASES} cases × 2 sides, every prompt changed, latency "
            f"{args.latency_ms:g} ms, max_concurrency {CONCURRENCY}: {seconds:.3f} s; ideal "
            f"{ideal:.3f} s → {seconds / ideal:.3f}× (target ≤ {RUN_TARGET}×)"
        )
        before = requests(args.fake)
        again, rerun = timed_run(suite="bench", candidate="latest", model="fake")
        assert rerun.summary is not None
        print(
            f"the same run again: {again:.3f} s (target ≤ {AGAIN_TARGET_S} s), model calls "
            f"{requests(args.fake) - before}, served from the cache "
            f"{rerun.summary['calls_cached']}"
        )
    finally:
        process.terminate()
        process.wait(timeout=60)

    own_ms = own_time(args.fake)
    print(
        f"own time per call (render share, checks, store; SDK time excluded), median of "
        f"{len(own_ms)}: {statistics.median(own_ms):.2f} ms (target ≤ {OWN_TARGET_MS} ms); "
        f"p90 {statistics.quantiles(own_ms, n=10)[-1]:.2f} ms"
    )

    lines = "\n".join(_json(case(f"big-{n}")) for n in range(args.import_cases))
    services.suite_create(name="big", author=None)
    started = time.perf_counter()
    services.cases_import(suite="big", text=lines, author=None)
    imported = time.perf_counter() - started
    print(f"import of {args.import_cases:,} cases: {imported:.2f} s (target ≤ {IMPORT_TARGET_S} s)")
    process = worker()
    try:
        idle = task_worker_bytes(process.pid)
        peak = [idle]
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], task_worker_bytes(process.pid))
                stop.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        seconds, run = timed_run(suite="big", candidate="latest", model="echo")
        stop.set()
        sampler.join()
        print(
            f"run of the {args.import_cases:,} cases with echo: {seconds:.1f} s; task worker "
            f"resident memory {idle / 2**20:.1f} MiB idle, peak {peak[0] / 2**20:.1f} MiB "
            f"(+{(peak[0] - idle) / 2**20:.1f} MiB)"
        )
    finally:
        process.terminate()
        process.wait(timeout=60)


def own_time(fake: str) -> list[float]:
    """Per call: its time in the worker's code (answering and checking in a pool thread,
    its share of the save) minus its time inside the SDK, with the fake at 0 ms and one
    call at a time; the rest of the run (preparing: rendering every case; claiming) is
    shared out equally and added."""
    httpx.post(f"{fake}/_control", json={"latency_ms": 0}, timeout=10)
    durations: dict[int, float] = {}
    compute = execution._Work._do
    save = execution._saved

    def timed_compute(self: execution._Work, call: RunCall) -> execution._Outcome:
        started = time.perf_counter()
        outcome = compute(self, call)
        durations[call.pk] = (time.perf_counter() - started) * 1000
        return outcome

    def timed_save(outcomes: Sequence[execution._Outcome]) -> int:
        started = time.perf_counter()
        saved = save(outcomes)
        share = (time.perf_counter() - started) * 1000 / max(1, len(outcomes))
        for outcome in outcomes:
            durations[outcome.call.pk] = durations.get(outcome.call.pk, 0.0) + share
        return saved

    execution._Work._do = timed_compute  # type: ignore[method-assign]
    execution._saved = timed_save
    services.suite_create(name="own", author=None)
    services.cases_import(
        suite="own", text="\n".join(_json(case(f"own-{n}")) for n in range(100)), author=None
    )
    models = {
        "fake": {
            "kind": "openai",
            "model": "fake-1",
            "base_url": f"{fake}/v1",
            "max_concurrency": 1,
            "retries": 0,
        }
    }
    with override_settings(SYSPROMPT={"MODELS": models, "ALLOWED_ROOTS": ["/"]}):
        run = services.run_create(suite="own", candidate="latest", model="fake", author=None)
        started = time.perf_counter()
        execution.run_execute(run.pk)
        total = time.perf_counter() - started
    execution._Work._do = compute  # type: ignore[method-assign]
    execution._saved = save
    sdk = {c.pk: c.ms or 0.0 for c in RunCall.objects.filter(run=run)}
    render_share = max(0.0, total * 1000 - sum(durations.values())) / len(sdk)
    return [durations[pk] - ms + render_share for pk, ms in sdk.items()]


def _json(value: Any) -> str:
    return json.dumps(value)


if __name__ == "__main__":
    main()
