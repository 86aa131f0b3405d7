"""Client benchmark: a cached turn against Langfuse's cached get_prompt and against resolve.

For each database (a fresh SQLite file by default; ``--database postgres|both``) it
serves a deployment as ``api_load.py`` does (``_support.served``: migrated, gunicorn
with 2 gthread workers × 2 threads, DEBUG off, its settings on the command line),
creates an agent host (``manage.py create_agent_host``: the token a real host calls
with), saves the default template plus ``[git:branch]``, ``[git:status]`` and
``[file:AGENTS.md]`` and measures, in this one process:

* **a later turn** — ``Client.system_prompt(...)`` of a conversation whose first turn
  is done: answered from the client's cache, no request (a counting transport checks
  that none is sent). Timed in batches (``time.perf_counter_ns`` around ``--batch``
  calls; one sample is one batch's time per call), interleaved sample by sample with:

  - ``AsyncClient.system_prompt`` awaited, the same cached turn of the async client;
  - **peer A**, Langfuse's Python SDK ``get_prompt`` answered from its cache: a fake
    Langfuse API on 127.0.0.1 answers the SDK's ``GET /api/public/v2/prompts/{name}``
    once with the same prompt text; tracing is off and the cache TTL is a day, so no
    request, refresh or flush runs while it is timed (the fake server counts requests);
  - the floor: ``dict.get`` of the same result in the same loop;
  - **peer B**, the same conversation's ``resolve`` over HTTP: one ``httpx.Client``
    POST on a keep-alive connection and the JSON decoded, once per sample.

  Targets: the cached turn at least as fast as Langfuse's (``get_prompt`` ÷ cached
  ≥ 1×), and at least 100× faster than ``resolve`` over HTTP.
* **a first turn** — a new conversation id per sample, interleaved: (a) server-side
  resolution, a default ``Client.system_prompt`` (the server's ``resolve`` reads git
  and AGENTS.md in the repository, ``_support.make_repo``; the server says it leaves
  nothing to the host, so the client sends no values and, after its first build, asks
  no references); (b) host-local values,
  ``Client(resolve_locally=True)``: ``GET /api/system-prompt/references`` (with its
  ETag), git and files read in this process, and ``values`` sent with ``resolve``.
  Before (b) is measured the server is asked whether it offers the references and
  honours ``values`` (a probe value must reach the prompt); when it does not, (b) is
  reported unavailable, with the reason, and (a) is still measured. The two prompts
  are checked equal sample by sample.

Figures are p50 and p95 over the samples; ratios are of the p50s. Targets are printed
as PASS or MISS, never asserted; the exit status is non-zero only when the benchmark
could not run. Everything started or created is stopped or dropped on exit, Ctrl-C and
SIGTERM included.

Run: ``.venv/bin/python benchmarks/client.py [--quick] [--database sqlite|postgres|both]
[--samples N] [--first-samples N] [--batch N]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from benchmarks._client_support import (  # noqa: E402
    MAX_AGE,
    CountingTransport,
    FakeLangfuse,
    LangfusePeer,
    async_batch,
    dict_batch,
    event_loop,
    make_langfuse_peer,
    p50,
    p95,
    sync_batch,
)
from benchmarks._support import (  # noqa: E402
    GUNICORN,
    PYTHON,
    BenchmarkError,
    Server,
    database_version,
    git_prompt_check,
    make_repo,
    run,
    save_git_template,
    say,
    served,
    terminate_on_sigterm,
)
from sysprompt_client import AsyncClient, Client, PromptResult, SyspromptError  # noqa: E402

WORKERS = 2
THREADS = 2
MODEL = "bench-model"
HOST = "bench-host"
PROBE = "values-probe-branch"
LANGFUSE_TARGET = 1.0  # get_prompt from its cache ÷ a cached turn: not slower
HTTP_TARGET = 100.0  # resolve over HTTP ÷ a cached turn
WARMUP = 20


@dataclass(frozen=True)
class Config:
    samples: int
    first_samples: int
    batch: int
    postgres_url: str
    workdir: Path
    repo: Path


@dataclass
class Result:
    label: str
    version: str
    prompt_chars: int = 0
    cached: list[float] = field(default_factory=list)  # ns per call, one value per batch
    cached_async: list[float] = field(default_factory=list)
    langfuse: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)
    resolve_http: list[float] = field(default_factory=list)  # ns per request
    first_server: list[float] = field(default_factory=list)  # ns per first turn
    first_local: list[float] = field(default_factory=list)
    local_unavailable: str | None = None
    references: tuple[str, ...] = ()
    cached_requests: int = 0  # requests the sync client sent during the cached timing
    langfuse_requests: int = 0  # requests the fake Langfuse got during the timing


# --- setting up ----------------------------------------------------------------------


def create_agent_host(env: dict[str, str]) -> str:
    """``manage.py create_agent_host``: the host's API token (its last output line)."""
    output = run([PYTHON, "manage.py", "create_agent_host", HOST], env, "create_agent_host")
    lines = output.strip().splitlines()
    token = lines[-1].strip() if lines else ""
    if len(token) != 40:
        raise BenchmarkError(f"unexpected create_agent_host output: {output!r}")
    return token


def check_prompt(result: PromptResult, what: str, *, cached: bool = False) -> str:
    """The prompt came as asked and the git and file variables really resolved."""
    if result.is_fallback or result.from_cache is not cached:
        raise BenchmarkError(
            f"{what}: is_fallback={result.is_fallback}, from_cache={result.from_cache}"
        )
    return git_prompt_check(result.text, f"{what}: the prompt")


# --- a later turn --------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """One database's server and what every measurement needs."""

    server: Server
    token: str  # the agent host's
    config: Config
    result: Result

    @property
    def cwd(self) -> str:
        return str(self.config.repo)

    def say(self, message: str) -> None:
        say(f"{self.result.label}: {message}")


def resolve_path(conversation_id: str) -> str:
    return f"/api/conversations/{conversation_id}/system-prompt/resolve"


def measure_cached(session: Session, peer: LangfusePeer | str) -> None:
    """The cached turn, its peers and resolve over HTTP, interleaved sample by sample."""
    config, result, cwd = session.config, session.result, session.cwd
    conversation = f"bench-cached-{result.label}"
    transport = CountingTransport()
    headers = {
        "Authorization": f"Token {session.token}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    body = json.dumps({"cwd": cwd, "model": MODEL}).encode()
    url = session.server.url + resolve_path(conversation)
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(
            Client(session.server.url, session.token, max_age=MAX_AGE, transport=transport)
        )
        loop = stack.enter_context(event_loop())
        aclient = AsyncClient(session.server.url, session.token, max_age=MAX_AGE)
        stack.callback(lambda: loop.run_until_complete(aclient.aclose()))
        http = stack.enter_context(httpx.Client(timeout=30))

        first = client.system_prompt(conversation, cwd=cwd, model=MODEL)
        text = check_prompt(first, "the first turn")
        cached = client.system_prompt(conversation, cwd=cwd, model=MODEL)
        check_prompt(cached, "the second turn", cached=True)
        if cached.text != text:
            raise BenchmarkError("the cached turn answered another prompt")
        if client.system_prompt(conversation, cwd=cwd, model=MODEL) is not cached:
            raise BenchmarkError("a cached turn did not answer the cached result itself")
        other = loop.run_until_complete(aclient.system_prompt(conversation, cwd=cwd, model=MODEL))
        if other.text != text:
            raise BenchmarkError("the async client's first turn answered another prompt")
        result.prompt_chars = len(text)
        floor = {conversation: cached}

        def resolve_once() -> int:
            start = time.perf_counter_ns()
            response = http.post(url, content=body, headers=headers)
            data: Any = response.json()
            elapsed = time.perf_counter_ns() - start
            if response.status_code != 200 or data.get("system_prompt") != text:
                raise BenchmarkError(f"resolve answered {response.status_code}: {data}")
            return elapsed

        batch = config.batch
        steps: list[tuple[list[float], Callable[[], int]]] = [
            (result.cached, partial(sync_batch, client, conversation, cwd, MODEL, batch)),
            (
                result.cached_async,
                partial(async_batch, loop, aclient, conversation, cwd, MODEL, batch),
            ),
            (result.floor, partial(dict_batch, floor, conversation, batch)),
        ]
        if isinstance(peer, LangfusePeer):
            name = f"sysprompt-bench-{result.label}"
            try:
                peer.prime(name, text)
            except Exception as error:
                raise BenchmarkError(f"Langfuse's get_prompt stopped working: {error}") from error
            steps.append((result.langfuse, partial(peer.batch, name, batch)))
        fake_before = peer.fake.count() if isinstance(peer, LangfusePeer) else 0

        session.say(f"later turns: {config.samples} samples × {batch} calls, interleaved")
        sent_before = transport.requests
        for sample in range(-WARMUP, config.samples):
            order = steps if sample % 2 == 0 else steps[::-1]
            for values, measure in order:
                elapsed = measure()
                if sample >= 0:
                    values.append(elapsed / batch)
            elapsed = resolve_once()
            if sample >= 0:
                result.resolve_http.append(elapsed)
        result.cached_requests = transport.requests - sent_before
        if isinstance(peer, LangfusePeer):
            result.langfuse_requests = peer.fake.count() - fake_before
        if client.system_prompt(conversation, cwd=cwd, model=MODEL) is not cached:
            raise BenchmarkError("the cached entry changed while it was timed")


# --- a first turn --------------------------------------------------------------------


def probe_host_local(session: Session) -> str | None:
    """Why host-local values cannot be measured on this server, or None when they can:
    the references must be offered, and a value sent with ``resolve`` must be used."""
    headers = {"Authorization": f"Token {session.token}", "Accept": "application/json"}
    base = session.server.url
    with httpx.Client(timeout=30, headers=headers) as http:
        params = {"provider": "", "model": MODEL}
        response = http.get(base + "/api/system-prompt/references", params=params)
        if response.status_code != 200:
            return (
                f"GET /api/system-prompt/references answered {response.status_code} "
                f"{response.reason_phrase} (the server does not offer the references a host "
                "resolves), so Client(resolve_locally=True) would send no values and only "
                "repeat (a)"
            )
        with Client(base, session.token) as client:
            session.result.references = client.references(model=MODEL)
        if "git:branch" not in session.result.references:
            return f"the references lack git:branch: {session.result.references}"
        values = {"git:branch": PROBE}
        payload = {"cwd": session.cwd, "model": MODEL, "values": values}
        response = http.post(
            base + resolve_path(f"values-probe-{session.result.label}"), json=payload
        )
        if response.status_code not in (200, 201):
            return f"resolve with values answered {response.status_code}: {response.text[:300]}"
        if f"Branch: {PROBE}\n" not in (response.json().get("system_prompt") or ""):
            return "resolve ignores `values` (a git:branch sent by the host is not in the prompt)"
    return None


def first_turn(client: Client, conversation_id: str, cwd: str, what: str) -> tuple[int, str]:
    start = time.perf_counter_ns()
    try:
        answer = client.system_prompt(conversation_id, cwd=cwd, model=MODEL)
    except SyspromptError as error:
        raise BenchmarkError(f"{what}: {type(error).__name__}: {error}") from error
    elapsed = time.perf_counter_ns() - start
    return elapsed, check_prompt(answer, what)


def measure_first_turns(session: Session) -> None:
    """A new conversation per sample: server-side resolution, and host-local values."""
    config, result, cwd = session.config, session.result, session.cwd
    result.local_unavailable = probe_host_local(session)
    url, token = session.server.url, session.token
    with contextlib.ExitStack() as stack:
        server_side = stack.enter_context(Client(url, token, max_age=MAX_AGE))
        host_local = None
        if result.local_unavailable is None:
            host_local = stack.enter_context(
                Client(url, token, max_age=MAX_AGE, resolve_locally=True)
            )
        kinds = "server-side" + (" and host-local" if host_local else "")
        session.say(f"first turns ({kinds}): {config.first_samples} samples, interleaved")
        label = result.label
        for sample in range(-WARMUP // 4, config.first_samples):
            steps: list[tuple[str, Client, list[float]]] = [
                ("server", server_side, result.first_server)
            ]
            if host_local is not None:
                steps.append(("local", host_local, result.first_local))
            texts = []
            for kind, client, values in steps if sample % 2 == 0 else steps[::-1]:
                conversation = f"first-{label}-{kind}-{sample}"
                elapsed, text = first_turn(client, conversation, cwd, f"first turn ({kind})")
                texts.append(text)
                if sample >= 0:
                    values.append(elapsed)
            if len(set(texts)) != 1:
                raise BenchmarkError(f"the two first turns built different prompts:\n{texts}")


# --- one database --------------------------------------------------------------------


def bench_database(label: str, config: Config, peer: LangfusePeer | str) -> Result:
    with served(
        label,
        workdir=config.workdir,
        roots=config.repo.parent,
        postgres_url=config.postgres_url,
        workers=WORKERS,
        threads=THREADS,
    ) as deployment:
        host_token = create_agent_host(deployment.env)
        server = deployment.server
        save_git_template(server)
        result = Result(label=label, version=database_version(deployment.database))
        session = Session(server, host_token, config, result)
        measure_cached(session, peer)
        measure_first_turns(session)
        return result
    raise AssertionError("unreachable")


# --- the report ----------------------------------------------------------------------


def micro(ns: float) -> str:
    return f"{ns / 1e3:9.3f} µs"


def milli(ns: float) -> str:
    return f"{ns / 1e6:9.2f} ms"


NAME = 62


def row(name: str, values: list[float], unit: Callable[[float], str]) -> str:
    return f"  {name:{NAME}}{unit(p50(values))}{unit(p95(values))}"


def header(title: str) -> list[str]:
    return [f"\n{title}", f"  {'':{NAME}}{'p50':>12}{'p95':>12}"]


def target(name: str, value: float, limit: float) -> str:
    verdict = "PASS" if value >= limit else "MISS"
    return f"  {name:{NAME + 12}}{value:11.2f}×  {verdict}"


def report(result: Result, config: Config, peer: LangfusePeer | str) -> list[str]:
    r = result
    lines = [
        f"\n== {r.label} ({r.version}): prompt {r.prompt_chars:,} characters "
        "(default template + git:branch, git:status, file:AGENTS.md)",
        *header(
            f"later turn, per call: {config.samples} samples of {config.batch} calls, "
            "interleaved sample by sample"
        ),
        row("sysprompt Client.system_prompt, from its cache", r.cached, micro),
        row("sysprompt AsyncClient.system_prompt awaited, from its cache", r.cached_async, micro),
    ]
    if isinstance(peer, LangfusePeer):
        lines.append(
            row(f"peer A: Langfuse {peer.version} get_prompt, from its cache", r.langfuse, micro)
        )
    else:
        lines.append(f"  peer A: Langfuse get_prompt unavailable: {peer}")
    lines += [
        row("floor: dict.get of the same result, same loop", r.floor, micro),
        row("peer B: resolve over HTTP (httpx, keep-alive, JSON decoded)", r.resolve_http, milli),
        f"  requests sent while the cached turns were timed: sysprompt {r.cached_requests}"
        + (f", Langfuse {r.langfuse_requests}" if isinstance(peer, LangfusePeer) else ""),
        *header(
            f"first turn: a new conversation per sample, {config.first_samples} samples, "
            "interleaved"
        ),
        row("(a) server-side resolution: Client.system_prompt (resolve)", r.first_server, milli),
    ]
    if r.local_unavailable is None:
        lines.append(
            row("(b) host-local values: Client(resolve_locally=True)", r.first_local, milli)
        )
        lines.append(f"  references the host resolved: {', '.join(r.references)}")
    else:
        lines.append(f"  (b) host-local values: unavailable: {r.local_unavailable}")

    lines.append("\ntargets (ratios of the p50s)")
    peer_name = (
        "Langfuse get_prompt" if isinstance(peer, LangfusePeer) else "dict.get (no Langfuse)"
    )
    peer_values = r.langfuse if isinstance(peer, LangfusePeer) else r.floor
    lines.append(
        target(
            f"{peer_name} ÷ sysprompt cached turn ≥ {LANGFUSE_TARGET:g}×",
            p50(peer_values) / p50(r.cached),
            LANGFUSE_TARGET,
        )
    )
    lines.append(
        target(
            f"{peer_name} ÷ sysprompt async cached turn ≥ {LANGFUSE_TARGET:g}×",
            p50(peer_values) / p50(r.cached_async),
            LANGFUSE_TARGET,
        )
    )
    lines.append(
        target(
            f"resolve over HTTP ÷ sysprompt cached turn ≥ {HTTP_TARGET:g}×",
            p50(r.resolve_http) / p50(r.cached),
            HTTP_TARGET,
        )
    )
    if r.local_unavailable is None:
        ratio = p50(r.first_local) / p50(r.first_server)
        name = "first turn: host-local ÷ server-side (no target)"
        lines.append(f"  {name:{NAME + 12}}{ratio:11.2f}×")
    else:
        name = "first turn: host-local ÷ server-side"
        lines.append(f"  {name:{NAME + 12}}{'n/a':>12}  (unavailable)")
    return lines


def versions(results: list[Result], peer: LangfusePeer | str) -> str:
    done = subprocess.run([GUNICORN, "--version"], capture_output=True, text=True)
    langfuse = f"langfuse {peer.version}" if isinstance(peer, LangfusePeer) else "no langfuse"
    return (
        f"Python {platform.python_version()}, httpx {metadata.version('httpx')}, {langfuse}, "
        f"{done.stdout.strip()} ({WORKERS} gthread workers × {THREADS} threads), "
        f"{', '.join(r.version for r in results)}; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )


# --- main ----------------------------------------------------------------------------


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sysprompt-bench-client-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few hundred samples (< 1 min)")
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument(
        "--samples", type=int, help="later-turn samples, each one batch (2000; quick: 300)"
    )
    parser.add_argument("--first-samples", type=int, help="first-turn samples (600; quick: 150)")
    parser.add_argument("--batch", type=int, default=1000, help="cached calls per sample (1000)")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a database of the server to create the benchmark database on "
        "(default: $BENCH_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/postgres)",
    )
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        parser.error("git is not on PATH")
    for name in ("samples", "first_samples", "batch"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main() -> None:
    args = parse()
    terminate_on_sigterm()
    labels = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    results: list[Result] = []
    with workdir() as folder, FakeLangfuse() as fake:
        say(f"making a git repository in {folder}")
        config = Config(
            samples=args.samples or (300 if args.quick else 2000),
            first_samples=args.first_samples or (150 if args.quick else 600),
            batch=args.batch,
            postgres_url=args.postgres_url,
            workdir=folder,
            repo=make_repo(folder / "roots" / "project"),
        )
        peer = make_langfuse_peer(fake)
        if not isinstance(peer, LangfusePeer):
            say(f"peer A falls back to dict.get: {peer}")
        try:
            for label in labels:
                results.append(bench_database(label, config, peer))
        except BenchmarkError as error:
            raise SystemExit(f"client: {error}") from None
        except KeyboardInterrupt:
            raise SystemExit("client: interrupted; servers stopped, databases dropped") from None
        finally:
            if isinstance(peer, LangfusePeer):
                peer.close()
    print(versions(results, peer))
    for result in results:
        for line in report(result, config, peer):
            print(line)


if __name__ == "__main__":
    main()
