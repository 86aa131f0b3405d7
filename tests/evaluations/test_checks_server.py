"""Issue 31, points 1, 2 and 5, against a real server: gunicorn (one gthread worker,
DEBUG off) on its own SQLite file, its address space bounded (``prlimit --as``) so an
attack that gets through fails there instead of taking the machine's memory.

* Point 2: cases whose ``regex`` check or JSON Schema holds a pattern with a huge
  counted repeat (``a{4294967294}``: 13 characters, about 20 GB if compiled; six
  distinct ``a{200000…}``, kept by the regex module's cache: 50 MB each) answer 400
  naming the check, and the worker's peak memory stays where it was. Before, each was
  compiled in the request and kept.
* Point 5: a case with 20 checks of ``{"allOf": [{}×20000]}`` answers 400 naming the
  check within seconds (it took 173 s to answer 201), and ``not`` nested 400 deep
  answers 400, not 500.
* Point 1: a schema whose ``#`` reference sits under an ``$id`` inside an unknown
  keyword answers 400 naming the check, and nothing connects to the ``$id``.

The server's database is its own SQLite file whatever ``DATABASE_URL`` the suite runs
with (as in ``tests/editor/test_bounds_server.py``).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from benchmarks._support import (
    Server,
    group_members,
    gunicorn,
    prepare,
    server_env,
    sqlite_database,
)
from tests.core.evaluations.listening import Listener, id_trick

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not Path("/proc/self/status").exists(), reason="Linux /proc"
)

ADDRESS_SPACE = 3 * 1024**3
"""What the server's processes may map: several times what they use, far below what the
attacks asked for."""
ANSWER_SECONDS = 10.0
"""What a refused case may take to answer on a loaded 2-core machine (about 0.1 s here);
the schema attack took 173 s."""
GROWTH_BYTES = 100 * 1024**2
"""What the attacks of point 2 may add to the worker's peak memory (the six patterns
alone were 330 MB when compiled and kept)."""


@dataclass(frozen=True)
class Served:
    server: Server
    client: httpx.Client

    def case(self, name: str, checks: list[dict[str, object]]) -> tuple[int, object, float]:
        """POST a case holding ``checks``: the status, the answer and the seconds it took."""
        body = {"name": name, "messages": [{"role": "user", "content": "q"}], "checks": checks}
        data = json.dumps(body, separators=(",", ":"))
        started = time.perf_counter()
        answer = self.client.post("/api/suites/attacks/cases", content=data)
        return answer.status_code, answer.json(), time.perf_counter() - started

    def worker_peak(self) -> int:
        """The peak resident bytes (``VmHWM``) of the gunicorn worker (the one child of
        the master)."""
        peaks = []
        for pid in group_members(self.server.pgid):
            status = dict(
                line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            )
            if int(status["PPid"]) == self.server.pgid:
                peaks.append(int(status["VmHWM"].split()[0]) * 1024)
        (peak,) = peaks
        return peak


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("checks-server")
    (folder / "root").mkdir()
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(folder))
        env = server_env(database, folder / "root")
        token = prepare(env)
        server = stack.enter_context(
            gunicorn(
                env,
                token,
                workers=1,
                threads=2,
                log=folder / "gunicorn.log",
                prefix=["prlimit", f"--as={ADDRESS_SPACE}", "--"],
            )
        )
        client = stack.enter_context(
            httpx.Client(
                base_url=server.url,
                headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
                timeout=120,
            )
        )
        made = client.post("/api/suites", json={"name": "attacks"})
        assert made.status_code == 201, made.text
        yield Served(server, client)


def refused(served: Served, checks: list[dict[str, object]], field: str) -> str:
    """The message of the 400 that names ``field``, asserted to come within seconds."""
    status, answer, seconds = served.case("bad", checks)
    assert status == 400, (status, answer)
    assert isinstance(answer, dict) and field in answer, answer
    assert seconds < ANSWER_SECONDS, f"{seconds:.1f} s"
    message: str = answer[field][0]
    return message


HUGE = "a{4294967294}"


def test_checks_server_huge_patterns_refused_and_memory_stays(served: Served) -> None:
    before = served.worker_peak()

    said = [
        refused(served, [{"type": "regex", "pattern": HUGE}], "checks[0].pattern"),
        refused(served, [{"type": "regex", "pattern": "a{5000000}"}], "checks[0].pattern"),
        refused(served, [{"type": "json_schema", "schema": {"pattern": HUGE}}], "checks[0].schema"),
        refused(
            served,
            [{"type": "json_schema", "schema": {"patternProperties": {HUGE: {}}}}],
            "checks[0].schema",
        ),
    ]
    for count in range(200_000, 200_006):  # six distinct patterns
        refused(served, [{"type": "regex", "pattern": f"a{{{count}}}"}], "checks[0].pattern")

    assert all("a counted repeat may ask for at most 1,000" in message for message in said), said
    assert served.worker_peak() - before < GROWTH_BYTES


def deep(levels: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(levels):
        value = {"not": value}
    return value


def test_checks_server_large_and_deep_schemas_refused_naming_the_check(served: Served) -> None:
    wide: list[dict[str, object]] = [
        {"type": "json_schema", "schema": {"allOf": [{}] * 20_000}}
    ] * 20

    too_large = refused(served, wide, "checks[0].schema")
    too_deep = refused(served, [{"type": "json_schema", "schema": deep(400)}], "checks[0].schema")

    assert "a schema may hold at most 1,000 values" in too_large
    assert "nests objects and arrays more than 32 deep" in too_deep


def test_checks_server_id_trick_refused_and_nothing_connects(served: Served) -> None:
    listener = Listener()
    try:
        message = refused(
            served,
            [{"type": "json_schema", "schema": id_trick(listener.url)}],
            "checks[0].schema",
        )
    finally:
        listener.close()

    assert "only the root may have an $id" in message
    assert listener.connections == []
