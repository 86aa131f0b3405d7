"""Evaluations benchmark: a run's wall time against the ideal, a run served from the
cache, the project's own time per model call, and importing 10,000 cases.

A fresh database (SQLite, or PostgreSQL with ``--database postgres``) is migrated; the
fake model server of the tests (``tests/evaluations/fake_model.py``, its own process)
answers every call after ``--latency-ms`` (100). ``production`` points at a release
and the working copy differs from it, so every case's prompt changed. Then, through a
real ``manage.py evaluations_worker`` process (its ``db_worker`` child takes the run's
tasks from the evaluations' queue; a one-case warm-up run first, so the worker's
start-up is not counted):

* **a run of 100 cases × 2 sides** with ``max_concurrency`` 8: wall time from starting
  the run to its ``finished`` (queueing, preparing, calls, checks, summary), beside the
  ideal — 200 calls × latency ÷ 8 (2.5 s at 100 ms). Target ≤ 1.25 × the ideal.
* **the same run again**: no model call (checked on the fake's record), and its wall
  time. Target ≤ 1 s.
* **the project's own time per call**, in-process with the fake at 0 ms and one call at
  a time: each call's time in the worker's code minus the time inside the provider SDK
  (what ``RunCall.ms`` keeps): rendering is before, and is added per case. Target ≤ 5 ms
  at the median.
* **importing 10,000 cases** (JSONL, through the service the API calls). Target ≤ 10 s;
  then a run of them with the ``echo`` model, the task worker's resident memory sampled
  while it runs (bounded: it works in chunks of cases and claims of calls).

Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/evaluations.py [--quick] [--database sqlite|postgres]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    PYTHON,
    ROOT,
    postgres_database,
    prepare,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)

FAKE = ROOT / "tests" / "evaluations" / "fake_model.py"


def main() -> None:
    terminate_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer cases for the import")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-evaluations-") as scratch:
        work = Path(scratch)
        roots = work / "roots"
        roots.mkdir()
        database = (
            sqlite_database(work)
            if args.database == "sqlite"
            else postgres_database(args.postgres_url)
        )
        with database as db:
            env = server_env(db, roots)
            prepare(env)
            fake = subprocess.Popen(
                [PYTHON, str(FAKE), "--latency-ms", str(args.latency_ms)],
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                assert fake.stdout is not None
                port = int(fake.stdout.readline().split()[1])
                models = {
                    "fake": {
                        "kind": "openai",
                        "model": "fake-1",
                        "base_url": f"http://127.0.0.1:{port}/v1",
                        "max_concurrency": 8,
                        "retries": 0,
                    }
                }
                env.update(
                    SYSPROMPT_MODELS=json.dumps(models),
                    SYSPROMPT_EVAL_CLAIM_SECONDS="30",
                    # the 10,000-case run makes 20,000 (echo) calls: past the default limit
                    SYSPROMPT_EVAL_MAX_CALLS_PER_RUN="100000",
                )
                done = subprocess.run(
                    [
                        PYTHON,
                        str(ROOT / "benchmarks" / "_evaluations_inprocess.py"),
                        "--fake",
                        f"http://127.0.0.1:{port}",
                        "--latency-ms",
                        str(args.latency_ms),
                        "--import-cases",
                        str(2_000 if args.quick else 10_000),
                    ],
                    cwd=ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                )
            finally:
                fake.kill()
                fake.wait()
            if done.returncode != 0:
                sys.exit(f"the in-process benchmark failed:\n{done.stdout}\n{done.stderr}")
            print(done.stdout, end="")


if __name__ == "__main__":
    main()
