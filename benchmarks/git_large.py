"""git: values on a real repository of 100,000 files: the git reader against the git CLI.

Builds the repository in a temporary folder (100,000 committed files in 1,000
directories; then 10 modified, 1 staged and 5 untracked), then prints, as medians of
the samples, interleaved in one run:

* the read of ``git:branch`` and ``git:status`` as the server does it (``GitResolver``:
  a warm git reader process, confined; a time limit long enough, one read at a time),
* the same read in a thread of this process (``read_repository``, as before the
  readers), and
* one ``git --no-optional-locks status --short`` process (the peer), and
* libgit2's own status in C (``pygit2.Repository(...).status()``, one thread): the floor
  of any single-threaded libgit2 read, whereas git lstat()s the files in parallel
  threads (``core.preloadIndex``),

checks that they give the same status, and shows the time limit: with a limit shorter
than the read, the resolver answers Missing at the deadline (its reader is killed).

Run: ``.venv/bin/python benchmarks/git_large.py [--files N] [--samples N]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import GIT_IDENTITY, git, git_status_seconds  # noqa: E402
from sysprompt_core.variables import ResolveContext, ResolverOptions, Value  # noqa: E402
from sysprompt_core.variables.git import GitResolver, read_repository  # noqa: E402

PER_DIRECTORY = 100


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def build(path: Path, files: int) -> None:
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch=main")
    for number in range(files):
        folder = path / f"d{number // PER_DIRECTORY:04}"
        if number % PER_DIRECTORY == 0:
            folder.mkdir()
        (folder / f"f{number % PER_DIRECTORY:03}.txt").write_text(f"file {number}\n")
    git(path, "add", "-A")
    subprocess.run(
        ["git", *GIT_IDENTITY, "commit", "--quiet", "-m", "many files"],
        cwd=path,
        check=True,
    )
    for number in range(10):
        (path / f"d{number:04}" / "f000.txt").write_text(f"modified {number}\n")
    last = f"d{(files - 1) // PER_DIRECTORY:04}/f000.txt"
    (path / last).write_text("staged\n")
    git(path, "add", last)
    for number in range(5):
        (path / f"untracked-{number}.txt").write_text("new\n")
    git(path, "status", "--short")  # refresh the index once, as a developer's shell would


def in_thread(context: ResolveContext) -> dict[str, Value]:
    """The read in a thread of this process (no deadline needed here)."""
    assert context.directory is not None
    values: dict[str, Value] = {}
    reader = threading.Thread(
        target=read_repository,
        args=(("branch", "status"), context.directory, context.options, values.__setitem__),
    )
    reader.start()
    reader.join()
    return values


def ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=15)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sysprompt-git-large-"))
    try:
        repo = folder / "repo"
        say(f"building a repository of {args.files:,} files in {repo}")
        started = time.perf_counter()
        build(repo, args.files)
        say(f"built in {time.perf_counter() - started:.1f}s")
        options = ResolverOptions(allowed_roots=(str(folder),), git_timeout=60)
        context = ResolveContext(cwd=str(repo), options=options)
        resolver = GitResolver()
        expected = subprocess.run(
            ["git", "--no-optional-locks", "status", "--short"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.removesuffix("\n")
        values = resolver.resolve(["branch", "status"], context)  # warm the page cache
        if values != {"branch": "main", "status": expected}:
            raise SystemExit(f"git_large: the values differ from the CLI's: {values!r}")
        if in_thread(context) != values:
            raise SystemExit("git_large: the read in a thread differs from the reader's")
        git_status_seconds(repo)
        inprocess: list[float] = []
        threaded: list[float] = []
        cli: list[float] = []
        readers: set[int] = set()
        floor: list[float] = []
        for _ in range(args.samples):
            start = time.perf_counter()
            libgit2 = pygit2.Repository(str(repo))
            libgit2.status()
            libgit2.free()
            floor.append(time.perf_counter() - start)
            start = time.perf_counter()
            resolver.resolve(["branch", "status"], context)
            inprocess.append(time.perf_counter() - start)
            readers.update(resolver.pool.pids())
            start = time.perf_counter()
            in_thread(context)
            threaded.append(time.perf_counter() - start)
            cli.append(git_status_seconds(repo))
        limit = statistics.median(inprocess) / 4
        short = ResolveContext(
            cwd=str(repo),
            options=ResolverOptions(allowed_roots=(str(folder),), git_timeout=limit),
        )
        start = time.perf_counter()
        timed = resolver.resolve(["status"], short)
        answered = time.perf_counter() - start
        print(
            f"repository: {args.files:,} files, {len(expected.splitlines())} status lines; "
            f"median of {args.samples}"
        )
        print(f"  git reader: git:branch + git:status {ms(inprocess)}  ({len(readers)} reader)")
        print(f"  the same read in a thread           {ms(threaded)}")
        print(f"  git status --short (one process)    {ms(cli)}")
        ratio = statistics.median(inprocess) / statistics.median(cli)
        print(f"  git reader ÷ CLI                    {ratio:8.2f}×")
        ratio = statistics.median(threaded) / statistics.median(cli)
        print(f"  in a thread ÷ CLI                   {ratio:8.2f}×")
        ratio = statistics.median(floor) / statistics.median(cli)
        print(f"  floor: libgit2's own status (C)     {ms(floor)} = {ratio:.2f}× CLI")
        print(
            f"  time limit {limit * 1000:.1f} ms: answered after {answered * 1000:.1f} ms "
            f"with {timed['status']!r}"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
