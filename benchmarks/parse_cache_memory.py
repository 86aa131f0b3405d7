"""The parse cache's memory in a real server: 40 previews of different 256 KB templates.

Starts gunicorn (one gthread worker, one thread, DEBUG off) on a fresh SQLite database,
previews a small template once (the worker's baseline), then previews 40 different
templates of 256 KB each (just under ``MAX_TEMPLATE_BYTES``; ``[if var:…]a[endif]``
with a variable of its own in each block, the kind that takes the most memory parsed),
and prints the worker's resident memory (``VmRSS`` from ``/proc``) before and after,
the growth, and the growth against ``SYSPROMPT_PARSE_CACHE_BYTES`` (32 MiB by
default). A draft previewed is parsed without being kept by the process's cache of
parsed texts (issue 24, point 9), and the cache charges what it keeps as the allocator
hands it out; before, each draft was kept, charged by its nodes counted one by one
(1.7 times what a block-heavy one keeps), and the growth was the cache's plus the
requests' working set, past the setting (+37 MB with the default here; before that
the cache kept 32 templates of any size, and the library's cache 256 more).

``--checkout DIR`` serves another source tree with the same measurement (the commit
before, unpacked with ``git archive main | tar -x -C DIR``), so the two are compared
on one machine. Linux only (``/proc``).

    .venv/bin/python benchmarks/parse_cache_memory.py [--checkout DIR] [--cache-bytes N]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    ROOT,
    BenchmarkError,
    Server,
    gunicorn,
    prepare,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)
from benchmarks.memory_attack import memory_mb, worker_pid  # noqa: E402
from sysprompt_core.limits import DEFAULT_PARSE_CACHE_BYTES  # noqa: E402

PREVIEWS = 40
TEMPLATE_BYTES = 256 * 1024 - 64


def template(seed: int) -> str:
    """About 256 KB of blocks, each testing a variable of its own."""
    pieces, size, number = [], 0, 0
    while size < TEMPLATE_BYTES - 40:
        piece = f"[if var:v{seed}_{number}]a[endif]"
        pieces.append(piece)
        size += len(piece)
        number += 1
    return "".join(pieces)


def preview(server: Server, cwd: Path, text: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    headers = {"Authorization": f"Token {server.token}", "Content-Type": "application/json"}
    try:
        body = json.dumps({"cwd": str(cwd), "template": text, "model": "m"})
        connection.request("POST", "/api/system-prompt/preview", body, headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--cache-bytes", type=int, help="SYSPROMPT_PARSE_CACHE_BYTES")
    options = parser.parse_args()
    terminate_on_sigterm()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="parse-cache-")))
        project = work / "project"
        project.mkdir()
        database = stack.enter_context(sqlite_database(work))
        env = server_env(database, work)
        if options.cache_bytes:
            env["SYSPROMPT_PARSE_CACHE_BYTES"] = str(options.cache_bytes)
        token = prepare(env)
        log = work / "gunicorn.log"
        server = stack.enter_context(
            gunicorn(env, token, workers=1, threads=1, log=log, checkout=options.checkout)
        )
        pid = worker_pid(server)
        if preview(server, project, "Hello [prompt:model].") != 200:
            raise BenchmarkError("the warm-up preview failed")
        _, before = memory_mb(pid)
        statuses = {preview(server, project, template(seed)) for seed in range(PREVIEWS)}
        if statuses != {200}:
            raise BenchmarkError(f"previews answered {statuses}")
        peak, after = memory_mb(pid)
        served = "this checkout" if options.checkout == ROOT else str(options.checkout)
        setting = (options.cache_bytes or DEFAULT_PARSE_CACHE_BYTES) / 1_000_000
        grown = after - before
        print(
            f"{served}: {PREVIEWS} previews of different {TEMPLATE_BYTES:,}-byte templates: "
            f"worker RSS {before:.1f} MB before, {after:.1f} MB after "
            f"(+{grown:.1f} MB, {grown / setting:.2f}x PARSE_CACHE_BYTES of "
            f"{setting:.1f} MB), peak {peak:.1f} MB"
        )


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        raise SystemExit(f"parse_cache_memory: {error}") from None
