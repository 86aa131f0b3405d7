"""Eight concurrent exports of a large library, against gunicorn: the worker's memory.

Starts gunicorn (one gthread worker with eight threads, DEBUG off) on a fresh SQLite
database holding a library of ``--megabytes`` of fragment text (250 variants of about
256 KB by default, 62.5 MiB: words drawn at random, so the zip stays large), then sends
eight ``GET /api/library/export`` at once and reads each whole answer. It prints the
worker's resident memory (``/proc/<pid>/status``) before, its peak during the exports
(``VmHWM``, reset first through ``/proc/<pid>/clear_refs``) and after, and checks the
eight archives are the same bytes.

``--checkout DIR`` serves another source tree with the same measurement (the commit
before, unpacked with ``git archive main | tar -x -C DIR``), one after the other in the
same run. Linux only (``/proc``).

    .venv/bin/python benchmarks/export_memory.py [--megabytes N] [--checkout DIR]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import http.client
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    ROOT,
    BenchmarkError,
    Server,
    gunicorn,
    prepare,
    run,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)
from benchmarks.memory_attack import memory_mb, reset_peak, worker_pid  # noqa: E402

EXPORTS = 8
VARIANT_BYTES = 262_000

FILL = """
import os, random
from django.utils import timezone
from sysprompt.library.models import Fragment, FragmentVersion
count, size = int(os.environ["FILL_COUNT"]), int(os.environ["FILL_BYTES"])
chosen = random.Random(11)
words = ["alpha", "branch", "commit", "deploy", "error", "format", "gate", "hook",
         "index", "json", "kernel", "lint", "merge", "node", "option", "patch"]
now = timezone.now()
for number in range(count):
    text = []
    total = 0
    while total < size:
        piece = " ".join(chosen.choice(words) + str(chosen.randrange(1000)) for _ in range(12))
        text.append(piece)
        total += len(piece) + 1
    fragment = Fragment.objects.create(name=f"big/fragment-{number:04}", created_at=now)
    FragmentVersion.objects.create(
        fragment=fragment, provider="", model="", number=1, text="\\n".join(text)[:size],
        source="user", created_at=now,
    )
print(count)
"""


def export(server: Server) -> tuple[int, int, str]:
    """(status, bytes, sha256) of one export read to the end."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    try:
        connection.request(
            "GET", "/api/library/export", headers={"Authorization": f"Token {server.token}"}
        )
        response = connection.getresponse()
        digest = hashlib.sha256()
        size = 0
        while chunk := response.read(1 << 16):
            digest.update(chunk)
            size += len(chunk)
        return response.status, size, digest.hexdigest()
    finally:
        connection.close()


def measure(checkout: Path, megabytes: float) -> str:
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="export-memory-")))
        database = stack.enter_context(sqlite_database(work))
        env = server_env(database, work)
        token = prepare(env)
        count = max(1, round(megabytes * 1_048_576 / VARIANT_BYTES))
        fill = [sys.executable, "manage.py", "shell", "--no-imports", "-c", FILL]
        sizes = {"FILL_COUNT": str(count), "FILL_BYTES": str(VARIANT_BYTES)}
        run(fill, {**env, **sizes}, "filling the library")
        log = work / "gunicorn.log"
        server = stack.enter_context(
            gunicorn(env, token, workers=1, threads=EXPORTS, log=log, checkout=checkout)
        )
        pid = worker_pid(server)
        warm = export(server)  # every module loaded, one export's worth of memory seen
        if warm[0] != 200:
            raise BenchmarkError(f"the export answered {warm[0]}")
        _, before = memory_mb(pid)
        reset_peak(pid)
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(EXPORTS) as pool:
            answers = list(pool.map(lambda _: export(server), range(EXPORTS)))
        seconds = time.perf_counter() - started
        peak, after = memory_mb(pid)
        if {answer[0] for answer in answers} != {200} or len({a[2] for a in answers}) != 1:
            raise BenchmarkError(f"the exports differ or failed: {answers}")
        served = "this checkout" if checkout == ROOT else str(checkout)
        return (
            f"{served}: {EXPORTS} concurrent exports of {count} variants "
            f"({count * VARIANT_BYTES / 1_048_576:.1f} MiB of text, zip {answers[0][1]:,} "
            f"bytes) in {seconds:.1f} s: worker RSS {before:.1f} MB before, peak "
            f"{peak:.1f} MB (+{peak - before:.1f}), {after:.1f} MB after"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=62.5)
    parser.add_argument("--checkout", type=Path, action="append", default=[])
    options = parser.parse_args()
    terminate_on_sigterm()
    for checkout in [ROOT, *options.checkout]:
        print(measure(checkout, options.megabytes), flush=True)


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        raise SystemExit(f"export_memory: {error}") from None
