"""Releases benchmark: what labels cost a first turn and a construct, a later turn's
queries, creating a release of 1,000 variants, and an impact report over 200 contexts.

For each database (SQLite, and PostgreSQL unless ``--database sqlite``) a fresh
database is migrated and given the library of ``library.py`` (20 fragments, each with
a default, a provider and a provider-and-model variant; a root that includes them all
and reads ``git:branch`` and ``file:AGENTS.md`` in a real repository), released as
release 1, with ``production → release 1``, ``staging → latest`` and ``ab`` split
50/50 between them. Then, in one process, interleaved sample by sample:

* ``construct`` and a **first turn** (``resolve`` of a new conversation), the paths
  taking turns at going first, through
  **today's** path (no label, the working copy: the services' default) and through the
  label paths: ``production → release 1``, a call label following ``latest``, a split.
  The four build the same prompt (checked). Target: a first turn with releases ≤ 1.05 ×
  today's (same run, medians).
* a **later turn** of each: its time and the queries it runs (target: one, the indexed
  read of the stored row).
* **creating a release** of a library of 1,000 variants (one variant edited between
  samples, not timed; target ≤ 100 ms), beside reading the working copy's snapshot
  alone (the peer: the part a release cannot avoid).
* an **impact report** over 200 recorded contexts of the 20-fragment template, five
  fragments changed in the candidate (target ≤ 2 s on SQLite), beside 200 constructs
  (the peer: one side's rendering, plus the writes).

Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/releases.py [--quick] [--database sqlite|postgres|both]``
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
    BenchmarkError,
    make_repo,
    postgres_database,
    prepare,
    run,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)

FIRST_TURN_TARGET = 1.05
RELEASE_TARGET_MS = 100.0
IMPACT_TARGET_S = 2.0
PATHS = ("today", "release", "latest_label", "split")


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
    release_samples = 10 if args.quick else 30
    impact_samples = 3 if args.quick else 7
    kinds = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    with tempfile.TemporaryDirectory(prefix="bench-releases-") as scratch:
        work = Path(scratch)
        roots = work / "roots"
        repo = make_repo(roots / "project")
        print(
            f"samples: {samples} per construct figure (interleaved), {release_samples} "
            f"releases, {impact_samples} impact reports; repository {repo}"
        )
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
                        str(ROOT / "benchmarks" / "_releases_inprocess.py"),
                        "--cwd",
                        str(repo),
                        "--samples",
                        str(samples),
                        "--release-samples",
                        str(release_samples),
                        "--impact-samples",
                        str(impact_samples),
                    ],
                    env,
                    "the in-process measurement",
                )
                report(kind, json.loads(output))


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(values) * 1e3:8.3f} ms  p95 {p95 * 1e3:8.3f} ms"


def _verdict(met: bool) -> str:
    return "PASS" if met else "MISS"


def report(kind: str, data: dict[str, object]) -> None:
    figures = {key: value for key, value in data.items() if isinstance(value, list)}
    median = {key: statistics.median(values) for key, values in figures.items()}
    print(f"\n== {kind}: prompt {data['prompt_chars']:,} characters, equal on every path")
    for what in ("first_turn", "construct", "later_turn"):
        for path in PATHS:
            print(f"  {what + ' ' + path:<24} {_ms(figures[f'{what}_{path}'])}")
    for what in ("first_turn", "construct"):
        today = median[f"{what}_today"]
        for path in PATHS[1:]:
            ratio = median[f"{what}_{path}"] / today
            print(
                f"  {what} {path} / today: {ratio:.3f}x "
                f"(target <= {FIRST_TURN_TARGET}x: {_verdict(ratio <= FIRST_TURN_TARGET)})"
            )
    queries = data["later_turn_queries"]
    assert isinstance(queries, dict)
    for path in PATHS:
        found = queries[path]
        print(f"  later turn {path}: {len(found)} quer{'y' if len(found) == 1 else 'ies'}")
    print(f"    {queries['release'][0][:150]}")
    release_ms = median["release_create"] * 1e3
    print(
        f"  release of {data['release_variants']:,} variants ({data['release_rows']:,} rows): "
        f"{_ms(figures['release_create'])} (target <= {RELEASE_TARGET_MS:.0f} ms: "
        f"{_verdict(release_ms <= RELEASE_TARGET_MS)})"
    )
    print(f"    peer, reading the working copy's snapshot alone: {_ms(figures['snapshot_read'])}")
    impact = median["impact"]
    print(
        f"  impact over {data['impact_contexts']} contexts ({data['impact_changed']} changed): "
        f"p50 {impact:.3f} s (target <= {IMPACT_TARGET_S:.0f} s on SQLite: "
        f"{_verdict(impact <= IMPACT_TARGET_S)})"
    )
    print(f"    peer, 200 constructs through the release path: {median['constructs_200']:.3f} s")


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        sys.exit(f"benchmark failed: {error}")
