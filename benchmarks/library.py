"""Library benchmark: construct with 20 included fragments against the same text inlined.

For each database (SQLite, and PostgreSQL unless ``--database sqlite``) a fresh
database is migrated and given a library of 20 fragments, each with a default, a
provider and a provider-and-model variant (about 600 bytes each, with a few variables
and a block), and two root templates that produce the same prompt:

* ``library`` — ``[fragment:f01]`` … ``[fragment:f20]`` under a little text of its own;
* ``inline``  — the variants the conversation's provider and model choose, pasted in.

Both resolve in the same real git repository (``_support.make_repo``) with
``git:branch`` and ``file:AGENTS.md`` in the root; the two prompts are checked equal
before anything is timed. Then, interleaved sample by sample, in one process:

* ``construct`` — ``services.conversation_prompt_construct`` of each (render, library
  reads, write): the figure the target is about (library ≤ 1.3 × inline);
* ``resolve``   — a later turn of a conversation built from each
  (``conversation_prompt_resolve``): it must not touch the library, so the two should be
  equal; the queries one such turn runs are counted too.

Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/library.py [--quick] [--database sqlite|postgres|both]``
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

CONSTRUCT_TARGET = 1.3


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
    with tempfile.TemporaryDirectory(prefix="bench-library-") as scratch:
        work = Path(scratch)
        roots = work / "roots"
        repo = make_repo(roots / "project")
        print(f"samples: {samples} per figure, interleaved; repository {repo}")
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
                        str(ROOT / "benchmarks" / "_library_inprocess.py"),
                        "--cwd",
                        str(repo),
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
    return f"p50 {statistics.median(values) * 1e3:7.3f} ms  p95 {p95 * 1e3:7.3f} ms"


def report(kind: str, data: dict[str, object]) -> None:
    figures = {key: value for key, value in data.items() if isinstance(value, list)}
    print(f"\n== {kind}: prompt {data['prompt_chars']:,} characters, equal in both forms")
    for name in ("construct_library", "construct_inline", "resolve_library", "resolve_inline"):
        print(f"  {name:<18} {_ms(figures[name])}")
    construct = statistics.median(figures["construct_library"]) / statistics.median(
        figures["construct_inline"]
    )
    resolve = statistics.median(figures["resolve_library"]) / statistics.median(
        figures["resolve_inline"]
    )
    verdict = "PASS" if construct <= CONSTRUCT_TARGET else "MISS"
    print(
        f"  construct library / inline: {construct:.2f}x (target <= {CONSTRUCT_TARGET}x: {verdict})"
    )
    print(f"  resolve   library / inline: {resolve:.2f}x (a later turn; should be ~1.00x)")
    print(
        f"  queries per later turn: library {data['resolve_queries_library']}, "
        f"inline {data['resolve_queries_inline']}"
    )


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        sys.exit(f"benchmark failed: {error}")
