"""Previews of many different large templates keep a real server within the parse
cache's bound (issue 24, point 9).

gunicorn (one gthread worker, one thread, DEBUG off, SQLite) with
``SYSPROMPT_PARSE_CACHE_BYTES`` set to :data:`PARSE_CACHE_BYTES`; after one small
preview (every path warmed), 40 previews through the API of different 256 KB
templates of blocks, each testing a variable of its own (the kind that takes the most
memory parsed: ``benchmarks/parse_cache_memory.py``). The worker's resident memory,
read from ``/proc``, grows by less than the setting, the requests' own working set
included. Before, each draft previewed was kept by the cache, charged by the size of
its nodes counted one by one (a block-heavy template at 1.7 times what it keeps, so
the charge did not track the memory), and lint held every tag of the text at once:
the same previews grew the worker by 27 to 32 MB with this setting (37 MB with the
default 32 MiB; 50 MB a worker with four threads).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks._support import (
    Server,
    gunicorn,
    prepare,
    resident_bytes,
    server_env,
    sqlite_database,
)
from benchmarks.memory_attack import worker_pid
from benchmarks.parse_cache_memory import PREVIEWS, preview, template

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not Path("/proc/self/status").exists(), reason="Linux /proc"
)

MIB = 1024 * 1024
PARSE_CACHE_BYTES = 24 * MIB
"""The bound here, smaller than the default (32 MiB) but above what one preview of a
256 KB template with 20,000 tags takes while it runs (about 12 MB: the parse, the
values, lint, the JSON), which the allocator keeps for the next request."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("parse-cache-server")
    project = folder / "project"
    project.mkdir()
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(folder))
        env = server_env(database, folder) | {"SYSPROMPT_PARSE_CACHE_BYTES": str(PARSE_CACHE_BYTES)}
        token = prepare(env)
        log = folder / "gunicorn.log"
        yield stack.enter_context(gunicorn(env, token, workers=1, threads=1, log=log)), project


def test_parse_cache_server_previews_of_40_large_templates_stay_within_the_setting(
    served: tuple[Server, Path],
) -> None:
    server, project = served
    assert preview(server, project, "Hello [prompt:model].") == 200
    worker = worker_pid(server)
    before = resident_bytes(worker)

    statuses = {preview(server, project, template(seed)) for seed in range(PREVIEWS)}

    grown = resident_bytes(worker) - before
    assert statuses == {200}
    assert worker_pid(server) == worker  # the same worker, not a fresh one
    assert grown < PARSE_CACHE_BYTES, f"+{grown / MIB:.1f} MiB"
