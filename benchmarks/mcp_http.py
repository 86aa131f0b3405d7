"""MCP over Streamable HTTP benchmark: a later turn's ``prompts/get`` at the server's ``/mcp``.

It serves a deployment as ``mcp_stdio.py`` does (``_support.served``: a fresh SQLite
file, migrated, gunicorn with 2 gthread workers × 2 threads, DEBUG off), creates an
agent host, saves the default template plus ``[git:branch]``, ``[git:status]`` and
``[file:AGENTS.md]`` and makes a real git repository. Then the official ``mcp`` SDK's
Streamable HTTP client talks to ``/mcp`` with the host's token, and this process
measures, sample by sample interleaved:

* **a later turn** — ``prompts/get system-prompt`` of a conversation whose first turn
  is done: one POST, the server's stateless MCP exchange (a fresh session manager on an
  event loop of its own, the backend's database read handed back to the worker thread),
  the answer validated by the SDK. Every answer is checked to be the same text and
  description as the first turn's. On a 2025-11-25 handshake connection and on a
  2026-07-28 one.
* **peers**, in the same loop: ``tools/list`` on the same connection (an MCP request
  that reads nothing: the floor of an MCP exchange at ``/mcp``), and the
  conversation's ``resolve`` over the REST API (one ``httpx.Client`` POST on a
  keep-alive connection, JSON decoded): the same later turn without MCP.

What MCP costs over the REST API is the difference of the two p50s. Figures are p50
and p95 over the samples (``time.perf_counter_ns``); nothing is asserted, the exit
status is non-zero only when the benchmark could not run. Everything started is
stopped on exit, Ctrl-C and SIGTERM included.

Run: ``.venv/bin/python benchmarks/mcp_http.py [--samples N] [--quick]``
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
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

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

WORKERS = 2
THREADS = 2
MODEL = "bench-model"
HOST = "bench-mcp-http-host"
WARMUP = 30


@dataclass
class Figures:
    mode: str
    get: list[float] = field(default_factory=list)  # ns per prompts/get
    floor: list[float] = field(default_factory=list)  # ns per tools/list
    rest: list[float] = field(default_factory=list)  # ns per resolve over REST
    prompt_chars: int = 0


def create_agent_host(env: dict[str, str]) -> str:
    output = run([PYTHON, "manage.py", "create_agent_host", HOST], env, "create_agent_host")
    token = output.strip().splitlines()[-1].strip() if output.strip() else ""
    if len(token) != 40:
        raise BenchmarkError(f"unexpected create_agent_host output: {output!r}")
    return token


def text_of(result: types.GetPromptResult) -> str:
    content = result.messages[0].content
    if not isinstance(content, types.TextContent):
        raise BenchmarkError("prompts/get answered no text")
    return content.text


async def measure(server: Server, token: str, repo: Path, mode: str, samples: int) -> Figures:
    figures = Figures(mode)
    conversation = f"bench-mcp-http-{mode}"
    arguments = {"conversation_id": conversation, "cwd": str(repo), "model": MODEL}
    rest_headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    resolve = f"{server.url}/api/conversations/{conversation}/system-prompt/resolve"
    options: dict[str, Any] = {"mode": "legacy"} if mode == "2025-11-25" else {}
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as mcp_http:
        transport = streamable_http_client(f"{server.url}/mcp", http_client=mcp_http)
        async with McpClient(transport, cache=None, read_timeout_seconds=60, **options) as mcp:
            if mcp.protocol_version != mode:
                raise BenchmarkError(f"negotiated {mcp.protocol_version}, not {mode}")
            first = await mcp.get_prompt("system-prompt", arguments)
            text = git_prompt_check(text_of(first), f"{mode}: the first turn over /mcp")
            figures.prompt_chars = len(text)
            with httpx.Client(headers=rest_headers, timeout=30) as rest:
                for _ in range(WARMUP):
                    await mcp.get_prompt("system-prompt", arguments)
                    await mcp.list_tools()
                    rest.post(resolve, json={"cwd": str(repo), "model": MODEL})
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
                    answer = rest.post(resolve, json={"cwd": str(repo), "model": MODEL})
                    data = answer.json()
                    figures.rest.append(time.perf_counter_ns() - start)
                    if answer.status_code != 200 or data["system_prompt"] != text:
                        raise BenchmarkError(f"resolve over REST answered {answer.status_code}")
    return figures


def ms(values: list[float]) -> str:
    return f"p50 {p50(values) / 1e6:7.3f} ms   p95 {p95(values) / 1e6:7.3f} ms"


def report(all_figures: list[Figures], samples: int) -> Iterator[str]:
    yield (
        f"Python {platform.python_version()}, mcp {metadata.version('mcp')}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs; "
        f"{samples} samples a measurement; gunicorn {WORKERS} gthread workers × {THREADS}"
    )
    for figures in all_figures:
        extra = (p50(figures.get) - p50(figures.rest)) / 1e6
        yield ""
        yield f"MCP {figures.mode} at /mcp, a {figures.prompt_chars}-character prompt:"
        yield f"  prompts/get, a later turn     {ms(figures.get)}"
        yield f"  tools/list (the /mcp floor)   {ms(figures.floor)}"
        yield f"  resolve over REST             {ms(figures.rest)}"
        yield f"  MCP over REST, p50            {extra:+7.3f} ms"


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="sysprompt-bench-mcp-http-") as folder:
        yield Path(folder)


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
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
                    say(f"measuring MCP {mode} at /mcp, {samples} samples")
                    results.append(
                        anyio.run(measure, deployment.server, token, repo, mode, samples)
                    )
        except BenchmarkError as error:
            raise SystemExit(f"mcp_http: {error}") from None
        except KeyboardInterrupt:
            raise SystemExit("mcp_http: interrupted; servers stopped") from None
    for line in report(results, samples):
        print(line)


if __name__ == "__main__":
    main()
