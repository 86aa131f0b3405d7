"""First turns with git values per second against the number of git readers (1, 2, 4).

For each reader count, a fresh gunicorn (one gthread worker, ``--threads`` threads,
``SYSPROMPT_GIT_WORKERS`` = the count, DEBUG off, SQLite) serves a template with
``[git:branch]``, ``[git:status]`` and ``[file:AGENTS.md]`` on a small real repository
(``_support.make_repo``). One first turn warms the readers; then ``--turns`` first
turns of different conversations are sent ``--concurrency`` at a time, each on its own
connection, and the run prints the turns per second, the median and slowest turn, and
how many answered anything but 201 (a 503 is a read given up as busy). The peer is the
one-reader server, measured in the same run. ``--load N`` keeps N CPU-burning processes
running meanwhile (a loaded machine), as the burst test does.

The readers are queued for at most ``SYSPROMPT_GIT_QUEUE_TIMEOUT`` (10 s by default)
before a read's own ``SYSPROMPT_GIT_TIMEOUT`` starts, so a burst waits its turn instead
of answering 503 on a loaded machine (issue 24, point 8).

    .venv/bin/python benchmarks/git_pool.py [--turns N] [--concurrency N] [--load N]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    GIT_PROMPT_PARTS,
    PYTHON,
    BenchmarkError,
    Client,
    Server,
    gunicorn,
    make_repo,
    prepare,
    save_git_template,
    say,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)

READERS = (1, 2, 4)
BURN = "while True: pass"


@contextlib.contextmanager
def cpu_burners(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes that each keep a core busy, stopped (by their own pids) on
    exit: a loaded machine."""
    burners: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            burners.append(subprocess.Popen([PYTHON, "-c", BURN], stdin=subprocess.DEVNULL))
        yield burners
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()


@dataclasses.dataclass(frozen=True)
class Turn:
    status: int
    seconds: float
    prompt: str


def first_turn(server: Server, conversation: str, cwd: Path) -> Turn:
    started = time.monotonic()
    with Client(server) as client:
        client.connection.timeout = 120
        path = f"/api/conversations/{conversation}/system-prompt/resolve"
        status, answer = client.request("POST", path, {"cwd": str(cwd)})
    prompt = answer.get("system_prompt") if isinstance(answer, dict) else None
    return Turn(status, time.monotonic() - started, prompt or str(answer))


def first_turns(server: Server, cwd: Path, names: Sequence[str], concurrency: int) -> list[Turn]:
    """The first turns of ``names``, ``concurrency`` at a time (all started together
    when ``concurrency`` is their number)."""
    turns: list[Turn] = []
    lock = threading.Lock()
    pending = iter(names)
    start = threading.Barrier(concurrency)

    def work() -> None:
        start.wait()
        while True:
            with lock:
                name = next(pending, None)
            if name is None:
                return
            turn = first_turn(server, name, cwd)
            with lock:
                turns.append(turn)

    threads = [threading.Thread(target=work) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return turns


@contextlib.contextmanager
def git_server(
    work: Path, root: Path, *, readers: int, threads: int, extra: dict[str, str] | None = None
) -> Iterator[Server]:
    """gunicorn (one worker) with ``readers`` git readers on a fresh SQLite database
    in ``work``, serving the template with git values."""
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(work))
        env = server_env(database, root) | {"SYSPROMPT_GIT_WORKERS": str(readers)}
        env |= extra or {}
        token = prepare(env)
        log = work / f"gunicorn-{readers}.log"
        server = stack.enter_context(gunicorn(env, token, workers=1, threads=threads, log=log))
        save_git_template(server)
        yield server


@dataclasses.dataclass(frozen=True)
class Figures:
    readers: int
    turns_per_second: float
    median: float
    slowest: float
    failed: int


def measure(
    readers: int, repo: Path, root: Path, *, turns: int, concurrency: int, load: int
) -> Figures:
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="git-pool-")))
        server = stack.enter_context(git_server(work, root, readers=readers, threads=concurrency))
        warm = first_turn(server, "warm", repo)
        if warm.status != 201 or not all(part in warm.prompt for part in GIT_PROMPT_PARTS):
            raise BenchmarkError(f"the warm-up turn answered {warm.status}: {warm.prompt}")
        names = [f"c{readers}-{n}" for n in range(turns)]
        stack.enter_context(cpu_burners(load))
        started = time.monotonic()
        done = first_turns(server, repo, names, concurrency)
        elapsed = time.monotonic() - started
    seconds = [turn.seconds for turn in done]
    failed = sum(turn.status != 201 for turn in done)
    return Figures(readers, len(done) / elapsed, statistics.median(seconds), max(seconds), failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--load", type=int, default=0, help="CPU-burning processes")
    options = parser.parse_args()
    terminate_on_sigterm()
    with tempfile.TemporaryDirectory(prefix="git-pool-repo-") as folder:
        root = Path(folder)
        repo = make_repo(root / "repo")
        results = []
        for readers in READERS:
            say(f"{readers} reader(s): {options.turns} first turns")
            results.append(
                measure(
                    readers,
                    repo,
                    root,
                    turns=options.turns,
                    concurrency=options.concurrency,
                    load=options.load,
                )
            )
    peer = results[0].turns_per_second
    print(
        f"{options.turns} first turns with git values, {options.concurrency} at a time, "
        f"{options.load} CPU burners, one gunicorn worker:"
    )
    for figures in results:
        print(
            f"  {figures.readers} reader(s): {figures.turns_per_second:6.1f} turns/s "
            f"({figures.turns_per_second / peer:.2f}x one reader), median "
            f"{figures.median * 1000:.0f} ms, slowest {figures.slowest * 1000:.0f} ms, "
            f"{figures.failed} not 201"
        )


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        raise SystemExit(f"git_pool: {error}") from None
