"""Named prompts benchmark: an agent host's first turn in a deployment of 1,000 prompts
against the same turn with two (``default`` and the one it names), and a later turn's
queries in both.

For each database (SQLite, and PostgreSQL unless ``--database sqlite``) a fresh database
is migrated; in one process (Django's whole request path: middleware, token
authentication, the view, the services, the database; no network), an agent host resolves
new conversations naming ``bench/target`` (a template of ``prompt:`` values only, so no
git or file read blurs the figure): first with two prompts, then after 998 more are made
(each with a template version and a ``production`` label row). Target: the median first
turn with 1,000 prompts ≤ 1.05 × with two; a later turn runs the same queries.

Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/prompts_first_turn.py [--quick] [--database sqlite|postgres|both]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    PYTHON,
    ROOT,
    postgres_database,
    prepare,
    run,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)

TARGET = 1.05


def main() -> None:
    terminate_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    args = parser.parse_args()
    samples = args.samples or (60 if args.quick else 300)
    kinds = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    print(f"samples: {samples} first turns in each state (medians)")
    with tempfile.TemporaryDirectory(prefix="bench-prompts-turn-") as scratch:
        work = Path(scratch)
        roots = work / "roots"
        cwd = roots / "project"
        cwd.mkdir(parents=True)
        for kind in kinds:
            with contextlib.ExitStack() as stack:
                database = stack.enter_context(
                    sqlite_database(work)
                    if kind == "sqlite"
                    else postgres_database(args.postgres_url)
                )
                env = server_env(database, roots)
                prepare(env)
                output = run(
                    [
                        PYTHON,
                        str(ROOT / "benchmarks" / "_prompts_first_turn_inprocess.py"),
                        "--cwd",
                        str(cwd),
                        "--samples",
                        str(samples),
                    ],
                    env,
                    "the in-process measurement",
                )
                report(kind, json.loads(output))


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(values) * 1e3:8.3f} ms  p95 {p95 * 1e3:8.3f} ms"


def report(kind: str, data: dict[str, object]) -> None:
    few, many = data["few"], data["many"]
    assert isinstance(few, list) and isinstance(many, list)
    print(f"\n== {kind}")
    print(f"  first turn, {data['prompts_few']} prompts     {_ms(few)}")
    print(f"  first turn, {data['prompts_many']:,} prompts {_ms(many)}")
    ratio = statistics.median(many) / statistics.median(few)
    verdict = "PASS" if ratio <= TARGET else "MISS"
    counts = f"{data['prompts_many']:,} / {data['prompts_few']}"
    print(f"  {counts}: {ratio:.3f}x (target <= {TARGET}x: {verdict})")
    later_few, later_many = data["later_few"], data["later_many"]
    assert isinstance(later_few, list) and isinstance(later_many, list)
    same = later_few == later_many
    print(
        f"  later turn: {len(later_few)} queries with {data['prompts_few']}, {len(later_many)} "
        f"with {data['prompts_many']:,}; the same statements: {'yes' if same else 'NO'}"
    )
    for sql in later_many:
        print(f"    {sql[:140]}")


if __name__ == "__main__":
    main()
