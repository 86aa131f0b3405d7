"""Named prompts benchmark: an agent host's first turn in a deployment of 1,000 prompts
against the same turn with two (``default`` and the one it names), and a later turn's
queries in both.

For each database kind (SQLite, and PostgreSQL unless ``--database sqlite``) two fresh
databases are migrated, one with two prompts and one with 1,000 (998 more, each with a
template version and a ``production`` label row), each served by a process of its own
(Django's whole request path: middleware, token authentication, the view, the services,
the database; no network). An agent host resolves new conversations naming
``bench/target`` (a template of ``prompt:`` values only, so no git or file read blurs
the figure), in rounds that alternate between the two states, so that a noisy machine
slows both alike. Target: the median first turn with 1,000 prompts ≤ 1.05 × with two;
a later turn runs the same queries.

Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/prompts_first_turn.py [--quick] [--database sqlite|postgres|both]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    PYTHON,
    ROOT,
    BenchmarkError,
    database_arguments,
    postgres_database,
    prepare,
    server_env,
    sqlite_database,
    tail,
    terminate_on_sigterm,
)

TARGET = 1.05
ROUND = 10
"""First turns per round: each round goes to one state, the next to the other."""


def main() -> None:
    terminate_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    database_arguments(parser)
    args = parser.parse_args()
    samples = args.samples or (60 if args.quick else 300)
    kinds = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    print(f"samples: {samples} first turns in each state, in rounds of {ROUND} (medians)")
    with tempfile.TemporaryDirectory(prefix="bench-prompts-turn-") as scratch:
        work = Path(scratch)
        cwd = work / "roots" / "project"
        cwd.mkdir(parents=True)
        for kind in kinds:
            with contextlib.ExitStack() as stack:
                states = {
                    count: stack.enter_context(_state(kind, count, args, work, cwd))
                    for count in (2, 1_000)
                }
                report(kind, _alternated(states, samples))


@contextlib.contextmanager
def _state(
    kind: str, prompts: int, args: argparse.Namespace, work: Path, cwd: Path
) -> Iterator[subprocess.Popen[str]]:
    """A fresh database holding ``prompts`` prompts, and the process that answers for it."""
    made = (
        sqlite_database(work)
        if kind == "sqlite"
        else postgres_database(args.postgres_url, suffix=str(prompts))
    )
    log_path = work / f"{kind}-{prompts}.log"
    with made as database, log_path.open("w") as log:
        env = server_env(database, cwd.parent)
        prepare(env)
        script = ROOT / "benchmarks" / "_prompts_first_turn_inprocess.py"
        argv = [PYTHON, str(script), "--cwd", str(cwd), "--prompts", str(prompts)]
        child = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,  # Django's warnings; the place to look when it fails
            text=True,
        )
        try:
            _answer(child)  # made and warmed
            yield child
        except BenchmarkError as error:
            raise BenchmarkError(f"{error}:\n{tail(log_path)}") from None
        finally:
            if child.stdin is not None:
                child.stdin.close()
            child.wait(timeout=60)


def _answer(child: subprocess.Popen[str], command: str | None = None) -> Any:
    assert child.stdin is not None and child.stdout is not None
    if command is not None:
        child.stdin.write(command + "\n")
        child.stdin.flush()
    line = child.stdout.readline()
    if not line:
        raise BenchmarkError(f"the in-process measurement ended (exit {child.wait()})")
    return json.loads(line)


def _alternated(states: dict[int, subprocess.Popen[str]], samples: int) -> dict[str, Any]:
    """``samples`` first turns of each state in alternating rounds (each state going
    first in turn), and a later turn's SQL in each."""
    seconds: dict[int, list[float]] = {count: [] for count in states}
    order = list(states)
    for _ in range(max(1, samples // ROUND)):
        order.reverse()
        for count in order:
            seconds[count] += _answer(states[count], f"turns {ROUND}")
    few, many = sorted(states)
    return {
        "prompts_few": few,
        "prompts_many": many,
        "few": seconds[few],
        "many": seconds[many],
        "later_few": _answer(states[few], "later"),
        "later_many": _answer(states[many], "later"),
    }


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(values) * 1e3:8.3f} ms  p95 {p95 * 1e3:8.3f} ms"


def _shape(sql: str) -> str:
    """A statement without its literal values (quoted texts, numbers)."""
    return re.sub(r"'[^']*'|\b\d+\b", "?", sql)


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
    # The two databases give their rows other ids and tokens: compare the statements
    # with their literal values left out.
    same = [_shape(sql) for sql in later_few] == [_shape(sql) for sql in later_many]
    print(
        f"  later turn: {len(later_few)} queries with {data['prompts_few']}, {len(later_many)} "
        f"with {data['prompts_many']:,}; the same statements: {'yes' if same else 'NO'}"
    )
    for sql in later_many:
        print(f"    {sql[:140]}")


if __name__ == "__main__":
    main()
