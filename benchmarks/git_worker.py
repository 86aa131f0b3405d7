"""git: values through a confined worker process against the in-process read in a thread.

On a small real repository (about 120 files, branch ``feature/bench``, three modified
files, one staged, two untracked: ``_support.make_repo``), interleaved sample by sample
in one run, the median of:

* ``GitResolver().resolve(["branch", "status"], …)``: the request sent to a warm git
  reader process confined by Landlock, its answer parsed (what the server does now);
* the same with Landlock switched off (what Landlock itself costs);
* the peer: the same read (``read_repository``) in a thread of this process, waited for
  with the deadline, as the resolver read before the readers existed.

Target: the worker ≤ 1.1× the peer. It also checks that all three give the same values.

Run: ``.venv/bin/python benchmarks/git_worker.py [--samples N]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import make_repo  # noqa: E402
from sysprompt_core.variables import Missing, ResolveContext, ResolverOptions, Value  # noqa: E402
from sysprompt_core.variables.git import GitResolver, read_repository  # noqa: E402

NAMES = ("branch", "status")
TARGET = 1.1


def in_thread(names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
    """The read in a thread, as the resolver did it before the worker processes."""
    directory = context.directory
    assert directory is not None
    values: dict[str, Value] = {}
    lock = threading.Lock()
    finished = threading.Event()

    def publish(name: str, value: Value) -> None:
        with lock:
            values[name] = value

    def work() -> None:
        try:
            read_repository(names, directory, context.options, publish)
        finally:
            finished.set()

    threading.Thread(target=work, daemon=True).start()
    finished.wait(context.options.git_timeout)
    with lock:
        return {name: values.get(name, Missing("timed out")) for name in names}


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sysprompt-git-worker-") as folder:
        repo = make_repo(Path(folder) / "repo")
        contexts = {
            landlock: ResolveContext(
                cwd=str(repo),
                options=ResolverOptions(allowed_roots=(folder,), git_landlock=landlock),
            )
            for landlock in (True, False)
        }
        confined, unconfined = GitResolver(), GitResolver()
        readers: dict[str, Callable[[], dict[str, Value]]] = {
            "worker (Landlock)": lambda: confined.resolve(NAMES, contexts[True]),
            "worker (no Landlock)": lambda: unconfined.resolve(NAMES, contexts[False]),
            "peer: in-process, in a thread": lambda: in_thread(NAMES, contexts[True]),
        }
        answers = {label: read() for label, read in readers.items()}  # warm: start workers
        if len({repr(sorted(answer.items())) for answer in answers.values()}) != 1:
            raise SystemExit(f"git_worker: the readers disagree: {answers!r}")
        if not all(isinstance(value, str) for value in answers["worker (Landlock)"].values()):
            raise SystemExit(f"git_worker: a value is missing: {answers!r}")
        times: dict[str, list[float]] = {label: [] for label in readers}
        for _ in range(args.samples):
            for label, read in readers.items():
                start = time.perf_counter()
                read()
                times[label].append(time.perf_counter() - start)
        peer = ms(times["peer: in-process, in a thread"])
        status = answers["worker (Landlock)"]["status"]
        lines = len(status.splitlines()) if isinstance(status, str) else 0
        print(f"small repository: ~120 files, {lines} status lines; median of {args.samples}")
        for label, samples in times.items():
            print(f"  {label:<32} {ms(samples):7.3f} ms  {ms(samples) / peer:5.2f}×")
        ratio = ms(times["worker (Landlock)"]) / peer
        verdict = "met" if ratio <= TARGET else "MISSED"
        print(f"target: worker ≤ {TARGET}× the in-thread read: {ratio:.2f}×, {verdict}")
        confined.pool.close()
        unconfined.pool.close()


if __name__ == "__main__":
    main()
