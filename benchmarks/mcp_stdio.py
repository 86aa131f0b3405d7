"""MCP over stdio benchmark: a later turn's ``prompts/get`` of ``sysprompt-mcp``.

It serves a deployment as ``client.py`` does (``_support.served``: a fresh SQLite file,
migrated, gunicorn with 2 gthread workers × 2 threads, DEBUG off), creates an agent host
(``manage.py create_agent_host``), saves the default template plus ``[git:branch]``,
``[git:status]`` and ``[file:AGENTS.md]`` and makes a real git repository
(``_support.make_repo``). Then ``python -m sysprompt_client.mcp`` (what the
``sysprompt-mcp`` script runs) is started by the official ``mcp`` SDK's stdio client,
configured by ``SYSPROMPT_URL``, ``SYSPROMPT_TOKEN`` and ``SYSPROMPT_CWD`` (the
repository; polling off), and measured, in this one process, sample by sample
interleaved:

* **a later turn** — ``prompts/get system-prompt`` of a conversation whose first turn
  is done, over stdio: the JSON-RPC request written to the child's stdin, the child's
  ``sysprompt_client.Client`` answering from its cache (no HTTP request: the process
  logs at INFO, where httpx logs every request it sends, and its log must show none
  while it is timed, and some before: the first turn's),
  the answer read from its stdout and validated by the SDK. Every answer is checked
  to be the same text and description as the first turn's. Measured on a 2025-11-25
  handshake connection (what the MCP hosts of today speak) and on a 2026-07-28 one.
* **peers**, in the same loop: ``tools/list`` on the same connection (an MCP request
  answered without the backend: the floor of any request over stdio, the SDK's client
  and server included); ``Client.system_prompt`` in this process, the
  same kind of cache hit without MCP; and the conversation's ``resolve`` over HTTP (one
  ``httpx.Client`` POST on a keep-alive connection, JSON decoded): what the turn would
  cost without the client's cache.

Target: the later turn's p50 ≤ 2 ms over stdio. Figures are p50 and p95 over the
samples (one call each, ``time.perf_counter_ns``). The target is printed as PASS or
MISS, never asserted; the exit status is non-zero only when the benchmark could not
run. Everything started is stopped on exit, Ctrl-C and SIGTERM included.

Run: ``.venv/bin/python benchmarks/mcp_stdio.py [--samples N] [--quick]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio  # noqa: E402
import httpx  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client as McpClient  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from benchmarks._client_support import p50, p95  # noqa: E402
from benchmarks._support import (  # noqa: E402
    PYTHON,
    BenchmarkError,
    Server,
    git_prompt_check,
    make_repo,
    run,
    save_git_template,
    say,
    served,
    terminate_on_sigterm,
)
from sysprompt_client import Client  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
THREADS = 2
MODEL = "bench-model"
HOST = "bench-mcp-host"
TARGET_MS = 2.0
WARMUP = 30


@dataclass
class Figures:
    mode: str
    get: list[float] = field(default_factory=list)  # ns per prompts/get
    floor: list[float] = field(default_factory=list)  # ns per tools/list
    direct: list[float] = field(default_factory=list)  # ns per Client.system_prompt
    http: list[float] = field(default_factory=list)  # ns per resolve over HTTP
    prompt_chars: int = 0
    requests_during: int = 0  # gunicorn log lines of the conversation while timed


def create_agent_host(env: dict[str, str]) -> str:
    output = run([PYTHON, "manage.py", "create_agent_host", HOST], env, "create_agent_host")
    token = output.strip().splitlines()[-1].strip() if output.strip() else ""
    if len(token) != 40:
        raise BenchmarkError(f"unexpected create_agent_host output: {output!r}")
    return token


def requests_of(log: Path) -> int:
    """The HTTP requests the MCP process sent so far: httpx logs each at INFO
    (``HTTP Request: POST …``) on the process's stderr, which is this file."""
    return log.read_text(errors="replace").count("HTTP Request: ")


def text_of(result: types.GetPromptResult) -> str:
    content = result.messages[0].content
    if not isinstance(content, types.TextContent):
        raise BenchmarkError("prompts/get answered no text")
    return content.text


async def measure(server: Server, token: str, repo: Path, mode: str, samples: int) -> Figures:
    figures = Figures(mode)
    log = server.log.with_name(f"mcp-{mode}.log")
    conversation = f"bench-mcp-{mode}"
    arguments = {"conversation_id": conversation, "model": MODEL}
    params = StdioServerParameters(
        command=PYTHON,
        args=["-m", "sysprompt_client.mcp"],
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", ""),
            "PYTHONPATH": os.pathsep.join(
                str(ROOT / part) for part in ("packages/core/src", "packages/client/src", ".")
            ),
            "SYSPROMPT_URL": server.url,
            "SYSPROMPT_TOKEN": token,
            "SYSPROMPT_CWD": str(repo),
            "SYSPROMPT_MCP_POLL_SECONDS": "0",
            "SYSPROMPT_MCP_LOG_LEVEL": "INFO",  # httpx logs every request it sends
        },
        cwd=str(repo),
    )
    headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    resolve = f"{server.url}/api/conversations/{conversation}/system-prompt/resolve"
    options: dict[str, Any] = {"mode": "legacy"} if mode == "2025-11-25" else {}
    with (
        Client(server.url, token, max_age=86400) as direct,
        httpx.Client(headers=headers, timeout=30) as http,
        log.open("a", encoding="utf-8") as errlog,
    ):
        transport = stdio_client(params, errlog=errlog)
        async with McpClient(transport, cache=None, read_timeout_seconds=60, **options) as mcp:
            first = await mcp.get_prompt("system-prompt", arguments)
            text = git_prompt_check(text_of(first), f"{mode}: the first turn over MCP")
            figures.prompt_chars = len(text)
            direct.system_prompt(conversation, cwd=str(repo), model=MODEL)  # its first turn
            for _ in range(WARMUP):
                await mcp.get_prompt("system-prompt", arguments)
                await mcp.list_tools()
            errlog.flush()
            before = requests_of(log)
            if before == 0:
                raise BenchmarkError(f"{mode}: the MCP process's log shows no request at all")
            for _ in range(samples):
                start = time.perf_counter_ns()
                later = await mcp.get_prompt("system-prompt", arguments)
                figures.get.append(time.perf_counter_ns() - start)
                if later.messages != first.messages or later.description != first.description:
                    raise BenchmarkError(f"{mode}: a later turn differs from the first")
                start = time.perf_counter_ns()
                await mcp.list_tools()
                figures.floor.append(time.perf_counter_ns() - start)
                start = time.perf_counter_ns()
                cached = direct.system_prompt(conversation, cwd=str(repo), model=MODEL)
                figures.direct.append(time.perf_counter_ns() - start)
                if cached.text != text:
                    raise BenchmarkError(f"{mode}: the direct client's prompt differs")
            figures.requests_during = requests_of(log) - before
            for _ in range(max(20, samples // 10)):  # the HTTP peer: fewer, it is slow
                start = time.perf_counter_ns()
                answer = http.post(resolve, json={"cwd": str(repo), "model": MODEL})
                answer.json()
                figures.http.append(time.perf_counter_ns() - start)
                if answer.status_code != 200:
                    raise BenchmarkError(f"resolve over HTTP answered {answer.status_code}")
    return figures


def ms(values: list[float]) -> str:
    return f"p50 {p50(values) / 1e6:7.3f} ms   p95 {p95(values) / 1e6:7.3f} ms"


def report(all_figures: list[Figures], samples: int) -> Iterator[str]:
    yield (
        f"Python {platform.python_version()}, mcp {metadata.version('mcp')}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs; "
        f"{samples} samples a measurement"
    )
    for figures in all_figures:
        verdict = "PASS" if p50(figures.get) / 1e6 <= TARGET_MS else "MISS"
        yield ""
        yield f"MCP {figures.mode} over stdio, a {figures.prompt_chars}-character prompt:"
        yield f"  prompts/get, a later turn     {ms(figures.get)}   [{verdict} ≤ {TARGET_MS} ms]"
        yield f"  tools/list (the stdio floor)  {ms(figures.floor)}"
        yield f"  Client.system_prompt (cache)  {ms(figures.direct)}"
        yield f"  resolve over HTTP             {ms(figures.http)}   ({len(figures.http)} samples)"
        yield (
            f"  HTTP requests of the MCP process while timed: {figures.requests_during}"
            " (0: every later turn came from the cache)"
        )


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="sysprompt-bench-mcp-") as folder:
        yield Path(folder)


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="200 samples (default 1000)")
    return parser.parse_args()


def main() -> None:
    args = parse()
    terminate_on_sigterm()
    samples = args.samples or (200 if args.quick else 1000)
    results: list[Figures] = []
    with workdir() as folder:
        say(f"making a git repository in {folder}")
        repo = make_repo(folder / "roots" / "project")
        try:
            with served(
                "sqlite",
                workdir=folder,
                roots=folder / "roots",
                postgres_url="",
                workers=WORKERS,
                threads=THREADS,
            ) as deployment:
                token = create_agent_host(deployment.env)
                save_git_template(deployment.server)
                for mode in ("2025-11-25", "2026-07-28"):
                    say(f"measuring MCP {mode} over stdio, {samples} samples")
                    results.append(
                        anyio.run(measure, deployment.server, token, repo, mode, samples)
                    )
        except BenchmarkError as error:
            raise SystemExit(f"mcp_stdio: {error}") from None
        except KeyboardInterrupt:
            raise SystemExit("mcp_stdio: interrupted; servers stopped") from None
    for line in report(results, samples):
        print(line)


if __name__ == "__main__":
    main()
