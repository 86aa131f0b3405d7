"""Memory attacks on the preview, against gunicorn: what one request can take.

Starts gunicorn (one gthread worker, DEBUG off) on a fresh SQLite database, creates a
superuser with an API token, then sends ``POST /api/system-prompt/preview`` with:

* the peer: the default template, in a folder with an ``AGENTS.md``;
* 1,000 symlinks to one 1 MB file, each referenced once (``[file:l000]…[file:l999]``);
* 26,000 ``[file:big]`` (a 260 KB template);
* 1,000 distinct 1 MB files, each referenced once (the read budget stops it early).

For each it prints the answer's bytes, the seconds, and the worker's peak RSS during
the request (``VmHWM``, reset before each request through ``/proc/<pid>/clear_refs``)
and its RSS after. Target: every peak under 200 MB. Linux only (``/proc``).

    .venv/bin/python benchmarks/memory_attack.py
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    BenchmarkError,
    Server,
    group_members,
    gunicorn,
    prepare,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)

MB = 1_000_000
TARGET_PEAK_MB = 200.0


def worker_pid(server: Server) -> int:
    workers = [pid for pid in group_members(server.pgid) if pid != server.pgid]
    if len(workers) != 1:
        raise BenchmarkError(f"expected one gunicorn worker, found {workers}")
    return workers[0]


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmHWM, VmRSS) of ``pid`` in MB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return (int(fields["VmHWM"].split()[0]) / 1000, int(fields["VmRSS"].split()[0]) / 1000)


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # 5: reset the peak RSS (VmHWM)


def preview(server: Server, cwd: Path, template: str | None) -> tuple[int, int, float]:
    """(status, answer bytes, seconds) of one preview on a fresh connection."""
    body: dict[str, str] = {"cwd": str(cwd)}
    if template is not None:
        body["template"] = template
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    headers = {"Authorization": f"Token {server.token}", "Content-Type": "application/json"}
    started = time.perf_counter()
    try:
        connection.request("POST", "/api/system-prompt/preview", json.dumps(body), headers)
        response = connection.getresponse()
        size = 0
        while chunk := response.read(1 << 20):
            size += len(chunk)
        return response.status, size, time.perf_counter() - started
    finally:
        connection.close()


def make_files(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Run the tests before you commit.\n")
    line = b"".join(b"%09d\n" % n for n in range(MB // 10))  # 1 MB of text
    (project / "big").write_bytes(line)
    for index in range(1000):
        (project / f"l{index:03}").symlink_to(project / "big")
    distinct = project / "distinct"
    distinct.mkdir()
    for index in range(1000):
        (distinct / f"d{index:03}").write_bytes(b"%03d" % index + line[3:])
    return project


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    terminate_on_sigterm()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memory-attack-")))
        print("making 1,000 links, one 1 MB file and 1,000 distinct 1 MB files …", flush=True)
        project = make_files(work)
        database = stack.enter_context(sqlite_database(work))
        env = server_env(database, work)
        token = prepare(env)
        log = work / "gunicorn.log"
        server = stack.enter_context(gunicorn(env, token, workers=1, threads=1, log=log))
        pid = worker_pid(server)
        attacks: list[tuple[str, str | None]] = [
            ("peer: default template", None),
            ("1,000 links to one 1 MB file", "".join(f"[file:l{i:03}]" for i in range(1000))),
            ("26,000 x [file:big]", "[file:big]" * 26_000),
            (
                "1,000 distinct 1 MB files",
                "".join(f"[file:distinct/d{i:03}]" for i in range(1000)),
            ),
        ]
        print(f"gunicorn worker {pid}; RSS at start {memory_mb(pid)[1]:.1f} MB\n")
        print(
            f"{'attack':<32} {'status':>6} {'answer bytes':>14} {'seconds':>8} "
            f"{'peak RSS MB':>12} {'RSS after MB':>13}"
        )
        worst = 0.0
        for name, template in attacks:
            reset_peak(pid)
            status, size, seconds = preview(server, project, template)
            peak, after = memory_mb(pid)
            worst = max(worst, peak)
            print(
                f"{name:<32} {status:>6} {size:>14,} {seconds:>8.2f} {peak:>12.1f} {after:>13.1f}"
            )
        verdict = "met" if worst < TARGET_PEAK_MB else "MISSED"
        print(f"\ntarget: worker peak RSS < {TARGET_PEAK_MB:.0f} MB: {worst:.1f} MB, {verdict}")


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        raise SystemExit(f"memory_attack: {error}") from None
