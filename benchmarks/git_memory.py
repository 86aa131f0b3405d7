"""git: on a huge repository, against gunicorn: the memory one and eight reads take.

Builds a repository of ``--files`` untracked files (300,000 by default, listed one by
one), starts gunicorn (one gthread worker, ``--threads`` threads, DEBUG off, SQLite),
and measures the summed resident memory of the server's process group (gunicorn and,
where there are any, its git readers), sampled every 10 ms from ``/proc``:

* idle, after one preview of a small repository with ``[git:branch]``;
* one preview of ``[git:status]`` in the huge repository: its answer, the peak, and
  what is still held ``--settle`` seconds (3) after it answered;
* eight such previews at once, while four other conversations make their first turn
  with ``[git:branch]`` in the small repository: the peak, what is held ``--settle``
  seconds after, and what those first turns got (201 with the branch, 503 to retry, or
  a prompt frozen without the branch — which must never happen).

Run: ``.venv/bin/python benchmarks/git_memory.py [--files N] [--threads N] [--settle S]
[--env SYSPROMPT_GIT_MEMORY_LIMIT=…]``. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    BenchmarkError,
    Client,
    ResidentSampler,
    Server,
    group_resident,
    gunicorn,
    make_repo,
    prepare,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
    untracked_repository,
)

MB = 1_000_000
BRANCH = "feature/bench"  # make_repo's
SETTLE_SECONDS = [3.0]
"""How long after the reads what is still held is measured (``--settle``)."""


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def preview(server: Server, cwd: Path, template: str) -> tuple[int, Any]:
    with Client(server) as client:
        client.connection.timeout = 120
        return client.request(
            "POST", "/api/system-prompt/preview", {"cwd": str(cwd), "template": template}
        )


def first_turn(server: Server, conversation: str, cwd: Path) -> tuple[int, Any]:
    with Client(server) as client:
        client.connection.timeout = 120
        path = f"/api/conversations/{conversation}/system-prompt/resolve"
        return client.request("POST", path, {"cwd": str(cwd)})


def resident(server: Server) -> int:
    return sum(group_resident(server.pgid).values())


def breakdown(server: Server) -> str:
    """Resident MB by role: gunicorn's master and worker, and the git readers."""
    roles: dict[str, list[float]] = {}
    for pid, size in group_resident(server.pgid).items():
        try:
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        role = "master" if pid == server.pgid else "worker" if parent == server.pgid else "git"
        roles.setdefault(role, []).append(size / MB)
    return ", ".join(
        f"{role} " + " + ".join(f"{size:.1f}" for size in sorted(sizes))
        for role, sizes in sorted(roles.items())
    )


def status_of(answer: Any) -> str:
    if not isinstance(answer, dict):
        return repr(answer)[:120]
    variables = answer.get("variables") or {}
    value = variables.get("git:status")
    if isinstance(value, str):
        return f"a value of {len(value):,} characters"
    reasons = answer.get("reasons") or {}
    return f"missing: {reasons.get('git:status', '?')}"


def one_read(server: Server, huge: Path, idle: int) -> None:
    with ResidentSampler(server.pgid) as sampler:
        started = time.perf_counter()
        code, answer = preview(server, huge, "[git:status]")
        seconds = time.perf_counter() - started
        time.sleep(SETTLE_SECONDS[0])
    held = resident(server)
    print(f"one read: {code} after {seconds:.2f} s, git:status {status_of(answer)}")
    print(
        f"  peak {sampler.peak / MB:.1f} MB (+{(sampler.peak - idle) / MB:.1f}), "
        f"held {SETTLE_SECONDS[0]:g} s after: {held / MB:.1f} MB (+{(held - idle) / MB:.1f}): "
        f"{breakdown(server)}"
    )


def eight_reads(server: Server, huge: Path, small: Path, idle: int) -> None:
    answers: list[tuple[int, Any]] = []
    turns: dict[str, tuple[int, Any]] = {}
    lock = threading.Lock()

    def read() -> None:
        answer = preview(server, huge, "[git:status]")
        with lock:
            answers.append(answer)

    def turn(conversation: str) -> None:
        time.sleep(0.2)  # while the eight reads run
        answer = first_turn(server, conversation, small)
        with lock:
            turns[conversation] = answer

    threads = [threading.Thread(target=read) for _ in range(8)]
    threads += [threading.Thread(target=turn, args=(f"other-{n}",)) for n in range(4)]
    with ResidentSampler(server.pgid) as sampler:
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        time.sleep(SETTLE_SECONDS[0])
    held = resident(server)
    kinds: dict[str, int] = {}
    for _, answer in answers:
        kind = status_of(answer).split(":")[0] if "missing" in status_of(answer) else "value"
        reason = status_of(answer).removeprefix("missing: ")[:48] if kind == "missing" else kind
        kinds[reason] = kinds.get(reason, 0) + 1
    print(f"eight reads at once: all answered after {seconds:.2f} s; git:status: {kinds}")
    print(
        f"  peak {sampler.peak / MB:.1f} MB (+{(sampler.peak - idle) / MB:.1f}), "
        f"held {SETTLE_SECONDS[0]:g} s after: {held / MB:.1f} MB (+{(held - idle) / MB:.1f}): "
        f"{breakdown(server)}"
    )
    with_git = retry = without = 0
    for code, answer in turns.values():
        prompt = answer.get("system_prompt") if isinstance(answer, dict) else None
        if code == 503:
            retry += 1
        elif isinstance(prompt, str) and prompt.startswith(f"On {BRANCH}."):
            with_git += 1
        else:
            without += 1
    print(
        f"  other conversations' first turns meanwhile: {with_git} stored with the branch, "
        f"{retry} answered 503 (retry), {without} frozen without the branch"
    )


def warm_up(server: Server, small: Path) -> None:
    """Previews of ``[git:branch]``, two at a time: the server with its readers started."""
    answers: list[tuple[int, Any]] = []
    for _ in range(3):
        pair = [
            threading.Thread(target=lambda: answers.append(preview(server, small, "[git:branch]")))
            for _ in range(2)
        ]
        for thread in pair:
            thread.start()
        for thread in pair:
            thread.join()
    for code, answer in answers:
        if code != 200 or (answer.get("variables") or {}).get("git:branch") != BRANCH:
            raise BenchmarkError(f"the warm-up preview failed: {code} {answer}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=300_000)
    parser.add_argument("--threads", type=int, default=12)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before 'held'")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server")
    args = parser.parse_args()
    SETTLE_SECONDS[0] = args.settle
    terminate_on_sigterm()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="git-memory-")))
        root = work / "root"
        say(f"building a repository of {args.files:,} untracked files")
        huge = untracked_repository(root / "huge", args.files)
        small = make_repo(root / "small")
        database = stack.enter_context(sqlite_database(work))
        env = server_env(database, root)
        for pair in args.env:
            key, _, value = pair.partition("=")
            env[key] = value
        token = prepare(env)
        log = work / "gunicorn.log"
        server = stack.enter_context(gunicorn(env, token, workers=1, threads=args.threads, log=log))
        with Client(server) as client:
            client.expect({200}, "PUT", "/api/system-prompt", {"template": "On [git:branch]."})
        warm_up(server, small)
        time.sleep(1)
        idle = resident(server)
        extra = " ".join(args.env) or "default settings"
        print(f"repository: {args.files:,} untracked files; server: 1 worker, {extra}")
        print(f"idle: {idle / MB:.1f} MB: {breakdown(server)}")
        one_read(server, huge, idle)
        eight_reads(server, huge, small, idle)


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        raise SystemExit(f"git_memory: {error}") from None
