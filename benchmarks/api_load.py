"""API load benchmark: resolve against health, construct against git status, in one run.

For each database (a fresh SQLite file, then a fresh PostgreSQL database) it migrates,
creates a superuser with an API token, starts gunicorn (2 gthread workers, DEBUG off,
its own settings on the command line) and measures:

* ``resolve`` under load. N conversations are constructed first; then wrk (a C load
  generator; a Python client would be the bottleneck on two cores) POSTs ``resolve`` for
  random ones among them over keep-alive connections, alternating, run by run, with
  ``GET /api/health`` driven the same way. Health is the peer: the same stack (gunicorn,
  Django, DRF, token authentication, a query) without the application's work.
  Printed: requests/s, p50 and p99 (read exactly from wrk's latency histogram in a Lua
  ``done()``), p99/p50, answers other than 200, socket errors, the CPU per request of
  the gunicorn processes and of the PostgreSQL backends, and resolve ÷ health
  throughput (the median of the ratios of adjacent runs, which cancels slow drifts in
  what else the machine is doing).
* ``construct`` of the default template plus ``[git:branch]``, ``[git:status]`` and
  ``[file:AGENTS.md]`` on a real repository: as a whole HTTP request on one keep-alive
  connection (a raw socket client, so the time is the server's), and as the in-process
  service call (with the render alone beside it), each interleaved with one
  ``git status --short`` process — the peer: the app reads the same values in-process
  with pygit2 and starts no process. The target is checked on the HTTP figure. An HTTP health
  request, interleaved too, gives the floor: git status plus the cost of any
  authenticated request, which no construct can go under.
* with ``--million`` (PostgreSQL): resolve on random stored conversations with 1,000
  and then 1,000,000 rows in the table (filled with ``INSERT … SELECT generate_series``),
  on one connection (latency) and on ``--connections`` (throughput).

Targets are printed as PASS or MISS, never asserted: other work on the machine makes
absolute figures noisy; the ratios to a peer measured alongside much less so.

Needs wrk and git on PATH and, for PostgreSQL, a server on which ``--postgres-url`` may
create databases. Everything it starts or creates is stopped or dropped on exit,
Ctrl-C and SIGTERM included.

With ``--construct-only`` only the construct figures are measured (no wrk needed).

Run: ``.venv/bin/python benchmarks/api_load.py [--quick] [--database sqlite|postgres|both]
[--duration S] [--connections N] [--million] [--construct-only]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402

from benchmarks._support import (  # noqa: E402
    GUNICORN,
    PYTHON,
    ROOT,
    WRK,
    BenchmarkError,
    Client,
    CpuMeter,
    Database,
    Load,
    RawRequest,
    Server,
    WrkResult,
    database_version,
    git_prompt_check,
    git_status_seconds,
    make_repo,
    save_git_template,
    say,
    served,
    terminate_on_sigterm,
    wrk,
)

WORKERS = 2
# Threads per gthread worker. A request is CPU-bound Python under one GIL per worker,
# and two workers already fill the two cores, so threads only help to overlap one
# request's waits (a PostgreSQL round trip, git on a first turn) with another's Python.
# Two per worker are enough for that; more add GIL hand-offs (a thread that wants the
# GIL waits up to the 5 ms switch interval), which inflate p99, and database connections
# (Django keeps one per thread) without adding throughput.
THREADS = 2
MODEL = "bench-model"
FILL_SIZES = (1_000, 1_000_000)


@dataclass(frozen=True)
class Config:
    duration: int
    rounds: int
    connections: int
    threads: int
    conversations: int
    construct_samples: int
    million: bool
    construct_only: bool
    postgres_url: str
    workdir: Path
    wrk_threads: int = 1  # one C thread sends thousands of req/s; the cores go to the app


# --- measurements --------------------------------------------------------------------


@dataclass
class Runs:
    """Several wrk runs of one load; each figure is the median over the runs."""

    results: list[WrkResult] = field(default_factory=list)

    def median(self, pick: Callable[[WrkResult], float]) -> float:
        values = [pick(r) for r in self.results if not math.isnan(pick(r))]
        return statistics.median(values) if values else math.nan

    @property
    def rps(self) -> float:
        return self.median(lambda r: r.rps)

    @property
    def p50(self) -> float:
        return self.median(lambda r: r.p50_ms)

    @property
    def p99(self) -> float:
        return self.median(lambda r: r.p99_ms)

    @property
    def tail(self) -> float:
        """The median over the runs of each run's p99/p50."""
        return self.median(lambda r: r.p99_ms / r.p50_ms)

    @property
    def app_cpu(self) -> float:
        return self.median(lambda r: r.app_cpu_ms)

    @property
    def db_cpu(self) -> float:
        return self.median(lambda r: r.db_cpu_ms)

    @property
    def bad(self) -> int:
        return sum(r.non_2xx + r.socket_errors for r in self.results)

    @property
    def non_200(self) -> int:
        return sum(r.non_2xx for r in self.results)

    @property
    def socket_errors(self) -> int:
        return sum(r.socket_errors for r in self.results)

    @property
    def bad_example(self) -> str:
        return next((r.bad_example for r in self.results if r.bad_example), "")


def paired_ratio(top: Runs, bottom: Runs, pick: Callable[[WrkResult], float]) -> float:
    """The median of ``pick(top) / pick(bottom)`` over runs made one after the other."""
    pairs = zip(top.results, bottom.results, strict=True)
    return statistics.median(pick(a) / pick(b) for a, b in pairs)


@dataclass
class Fill:
    rows: int
    seconds: float
    single: Runs = field(default_factory=Runs)
    loaded: Runs = field(default_factory=Runs)


@dataclass
class DatabaseResult:
    label: str
    version: str
    health: Runs = field(default_factory=Runs)
    resolve: Runs = field(default_factory=Runs)
    construct_http: list[float] = field(default_factory=list)
    health_http: list[float] = field(default_factory=list)
    git_status_http: list[float] = field(default_factory=list)
    construct_inprocess: list[float] = field(default_factory=list)
    render_inprocess: list[float] = field(default_factory=list)
    git_status_inprocess: list[float] = field(default_factory=list)
    fills: list[Fill] = field(default_factory=list)

    @property
    def throughput_ratio(self) -> float:
        return paired_ratio(self.resolve, self.health, lambda r: r.rps)

    @property
    def construct_ratio(self) -> float:
        return ms(self.construct_http) / ms(self.git_status_http)


def resolve_load(prefix: str, last: int, repo: Path) -> Load:
    """POST resolve for conversation ``prefix + n``, n random in 1..last."""
    return Load(
        method="POST",
        before=f"/api/conversations/{prefix}",
        after="/system-prompt/resolve",
        first=1,
        last=last,
        body=json.dumps({"cwd": str(repo), "model": MODEL}),
    )


HEALTH = Load(method="GET", before="/api/health")


@dataclass
class Bench:
    """One database's server, with what the measurements need."""

    config: Config
    server: Server
    database: Database
    env: dict[str, str]
    repo: Path
    meter: CpuMeter
    result: DatabaseResult

    def wrk(self, load: Load, connections: int, duration: int | None = None) -> WrkResult:
        return wrk(
            self.server,
            load,
            duration=duration or self.config.duration,
            connections=connections,
            threads=self.config.wrk_threads,
            workdir=self.config.workdir,
            meter=self.meter,
        )

    def say(self, message: str) -> None:
        say(f"{self.result.label}: {message}")


def bench_load(bench: Bench) -> None:
    """Construct the conversations, then alternate health and resolve runs under wrk."""
    config, result = bench.config, bench.result
    bench.say(f"constructing {config.conversations} conversations")
    body = {"cwd": str(bench.repo), "model": MODEL}
    with Client(bench.server) as client:
        for n in range(1, config.conversations + 1):
            path = f"/api/conversations/bench-{n}/system-prompt/resolve"
            client.expect({201}, "POST", path, body)
    resolve = resolve_load("bench-", config.conversations, bench.repo)
    bench.say(f"warming up, then {config.rounds} × {config.duration}s of health and resolve")
    bench.wrk(HEALTH, config.connections, duration=1)
    bench.wrk(resolve, config.connections, duration=1)
    for _ in range(config.rounds):
        result.health.results.append(bench.wrk(HEALTH, config.connections))
        result.resolve.results.append(bench.wrk(resolve, config.connections))


def bench_construct(bench: Bench) -> None:
    """Save the git template, then time construct and git status, interleaved."""
    config, result, repo = bench.config, bench.result, bench.repo
    bench.say(f"construct with git variables over HTTP, {config.construct_samples} samples")
    body = {"cwd": str(repo), "model": MODEL}
    path = "/api/conversations/bench-construct-http/system-prompt/construct"
    save_git_template(bench.server)
    with Client(bench.server) as client:
        for _ in range(3):
            prompt = client.expect({200, 201}, "POST", path, body)["system_prompt"]
        git_prompt_check(prompt)
    with (
        RawRequest(bench.server, "POST", path, body) as construct,
        RawRequest(bench.server, "GET", "/api/health") as health,
    ):
        git_status_seconds(repo)
        for _ in range(config.construct_samples):
            for request, times in (
                (construct, result.construct_http),
                (health, result.health_http),
            ):
                start = time.perf_counter()
                code, answer = request.send()
                times.append(time.perf_counter() - start)
                if code != 200:
                    raise BenchmarkError(f"{request.what} answered {code}: {answer[:300]!r}")
            result.git_status_http.append(git_status_seconds(repo))

    bench.say(f"construct in-process, {config.construct_samples} samples")
    argv = [
        PYTHON,
        str(ROOT / "benchmarks" / "_construct_inprocess.py"),
        f"--cwd={repo}",
        f"--samples={config.construct_samples}",
    ]
    done = subprocess.run(argv, cwd=ROOT, env=bench.env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchmarkError(f"in-process construct failed:\n{done.stdout}{done.stderr}")
    data = json.loads(done.stdout)
    git_prompt_check(data["prompt"])
    result.construct_inprocess = data["construct"]
    result.render_inprocess = data["render"]
    result.git_status_inprocess = data["git_status"]


FILL = """
INSERT INTO sysprompt_conversationprompt
    (conversation_id, system_prompt, sha256, template_version, cwd, model,
     constructed_at, created_at, owner_id)
SELECT 'fill-' || n, %(prompt)s, %(digest)s, NULL, %(cwd)s, %(model)s, now(), now(),
    (SELECT owner_id FROM sysprompt_conversationprompt WHERE conversation_id = 'bench-1')
FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS n
"""


def bench_million(bench: Bench) -> None:
    """Resolve on random stored conversations with 1k, then 1M rows in the table."""
    config, result = bench.config, bench.result
    with psycopg.connect(bench.database.url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT system_prompt, sha256 FROM sysprompt_conversationprompt"
            " WHERE conversation_id = 'bench-1'"
        ).fetchone()
        if row is None:
            raise BenchmarkError("conversation bench-1 is missing")
        prompt, digest = row
        connection.execute("DELETE FROM sysprompt_conversationprompt")
        filled = 0
        for size in FILL_SIZES:
            bench.say(f"filling the table to {size:,} conversations")
            start = time.perf_counter()
            values = {"prompt": prompt, "digest": digest, "cwd": str(bench.repo), "model": MODEL}
            connection.execute(FILL, {**values, "first": filled + 1, "last": size})
            connection.execute("VACUUM ANALYZE sysprompt_conversationprompt")
            # Write the fill's pages out now, not during the measurement.
            connection.execute("CHECKPOINT")
            fill = Fill(rows=size, seconds=time.perf_counter() - start)
            filled = size
            load = resolve_load("fill-", size, bench.repo)
            bench.say(f"resolve at {size:,} rows on 1 and {config.connections} connections")
            bench.wrk(load, config.connections, duration=1)
            for _ in range(config.rounds):
                fill.single.results.append(bench.wrk(load, 1))
                fill.loaded.results.append(bench.wrk(load, config.connections))
            result.fills.append(fill)


def bench_database(label: str, repo: Path, config: Config) -> DatabaseResult:
    with contextlib.ExitStack() as stack:
        deployment = stack.enter_context(
            served(
                label,
                workdir=config.workdir,
                roots=config.workdir,
                postgres_url=config.postgres_url,
                workers=WORKERS,
                threads=config.threads,
            )
        )
        server, database = deployment.server, deployment.database
        meter = CpuMeter(server, database.url if label == "postgres" else None)
        stack.callback(meter.close)
        result = DatabaseResult(label=label, version=database_version(database))
        bench = Bench(config, server, database, deployment.env, repo, meter, result)
        if not config.construct_only:
            bench_load(bench)
        bench_construct(bench)
        if config.million and label == "postgres":
            bench_million(bench)
        return result
    raise AssertionError("unreachable")


# --- the report ----------------------------------------------------------------------


def ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1000


def cpu(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def load_table(results: list[DatabaseResult], config: Config) -> list[str]:
    lines = [
        f"\nresolve and health: {config.connections} keep-alive connections, "
        f"median of {config.rounds} runs × {config.duration}s",
        f"  {'':19}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'p99/p50':>9}{'non-200':>9}"
        f"{'sock err':>9}{'app CPU':>9}{'db CPU':>8}  (CPU: ms per request)",
    ]
    for r in results:
        for name, runs in (("health", r.health), ("resolve", r.resolve)):
            lines.append(
                f"  {r.label:10}{name:9}{runs.rps:8.0f}{runs.p50:9.2f}{runs.p99:9.2f}"
                f"{runs.tail:9.2f}{runs.non_200:9d}{runs.socket_errors:9d}"
                f"{cpu(runs.app_cpu):>9}{cpu(runs.db_cpu):>8}"
            )
            if runs.bad_example:
                lines.append(f"  {'':19}first answer other than 200: {runs.bad_example}")
        lines.append(
            f"  {r.label:10}{'resolve ÷ health throughput, median of run pairs':51}"
            f"{r.throughput_ratio:.2f}×"
        )
    return lines


def construct_table(results: list[DatabaseResult], config: Config) -> list[str]:
    lines = [
        "\nconstruct (default template + git:branch, git:status, file:AGENTS.md) and one "
        f"git status --short, interleaved, median of {config.construct_samples}",
        f"  {'':31}{'construct ms':>13}{'git status ms':>15}{'ratio':>8}",
    ]
    for r in results:
        for how, construct, status in (
            ("HTTP (the target)", r.construct_http, r.git_status_http),
            ("HTTP health instead", r.health_http, r.git_status_http),
            ("in-process service", r.construct_inprocess, r.git_status_inprocess),
            ("in-process render", r.render_inprocess, r.git_status_inprocess),
        ):
            ratio = ms(construct) / ms(status)
            lines.append(
                f"  {r.label:10}{how:21}{ms(construct):13.2f}{ms(status):15.2f}{ratio:7.2f}×"
            )
        floor = ms(r.git_status_http) + ms(r.health_http)
        lines.append(
            f"  {r.label:10}floor: git status + HTTP health = {floor:.2f} ms "
            f"({floor / ms(r.git_status_http):.2f}× git status); construct spends "
            f"{ms(r.construct_http) - floor:.2f} ms more"
        )
    return lines


def million_table(results: list[DatabaseResult], config: Config) -> list[str]:
    lines = []
    for r in results:
        if not r.fills:
            continue
        lines += [
            f"\n{r.label}: resolve on random stored conversations, median of {config.rounds} "
            f"runs × {config.duration}s",
            f"  {'':11}{'fill s':>8}{'1 connection':>14}{'':8}"
            f"{f'{config.connections} connections':>16}",
            f"  {'rows':>11}{'':8}{'p50 ms':>14}{'p99 ms':>8}{'req/s':>16}{'p50 ms':>8}"
            f"{'p99 ms':>8}{'app CPU':>9}{'db CPU':>8}{'non-200':>9}",
        ]
        for fill in r.fills:
            one, many = fill.single, fill.loaded
            lines.append(
                f"  {fill.rows:11,}{fill.seconds:8.1f}{one.p50:14.2f}{one.p99:8.2f}"
                f"{many.rps:16.0f}{many.p50:8.2f}{many.p99:8.2f}"
                f"{cpu(many.app_cpu):>9}{cpu(many.db_cpu):>8}{one.bad + many.bad:9d}"
            )
        small, large = r.fills[0], r.fills[-1]
        lines.append(
            f"  {'1M ÷ 1k':>11}{'':8}{large.single.p50 / small.single.p50:13.2f}×"
            f"{large.single.p99 / small.single.p99:7.2f}×"
            f"{large.loaded.rps / small.loaded.rps:15.2f}×"
            f"{large.loaded.p50 / small.loaded.p50:7.2f}×"
            f"{large.loaded.p99 / small.loaded.p99:7.2f}×"
            f"{large.loaded.app_cpu / small.loaded.app_cpu:8.2f}×"
            f"{large.loaded.db_cpu / small.loaded.db_cpu:7.2f}×"
        )
    return lines


def target(label: str, value: float, limit: float, at_least: bool = False) -> str:
    met = value >= limit if at_least else value <= limit
    return f"  {label:60}{value:6.2f}×  {'PASS' if met else 'MISS'}"


def targets(results: list[DatabaseResult]) -> list[str]:
    lines = ["\ntargets"]
    for r in results:
        name = r.label
        lines.append(
            target(f"{name}: resolve ≥ 0.7× health throughput", r.throughput_ratio, 0.7, True)
        )
        lines.append(target(f"{name}: resolve p99 ≤ 3× p50", r.resolve.tail, 3.0))
        lines.append(target(f"{name}: health p99 ≤ 3× p50", r.health.tail, 3.0))
        lines.append(target(f"{name}: construct (HTTP) ≤ 1.5× git status", r.construct_ratio, 1.5))
        if r.fills:
            small, large = r.fills[0], r.fills[-1]
            lines.append(
                target(
                    f"{name}: resolve p50 at 1M rows ≤ 1.2× at 1k (1 connection)",
                    large.single.p50 / small.single.p50,
                    1.2,
                )
            )
        bad = r.health.bad + r.resolve.bad + sum(f.single.bad + f.loaded.bad for f in r.fills)
        verdict = "PASS" if bad == 0 else "MISS"
        lines.append(f"  {name + ': answers other than 200, socket errors':60}{bad:6d}   {verdict}")
    return lines


def versions(results: list[DatabaseResult], config: Config) -> str:
    wrk_version = subprocess.run([WRK, "--version"], capture_output=True, text=True).stdout
    gunicorn_version = subprocess.run([GUNICORN, "--version"], capture_output=True, text=True)
    return (
        f"Python {platform.python_version()}, {gunicorn_version.stdout.strip()} "
        f"({WORKERS} gthread workers × {config.threads} threads), "
        f"wrk {wrk_version.split()[1] if wrk_version else '?'} ({config.wrk_threads} thread), "
        f"{', '.join(r.version for r in results)}; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )


# --- main ----------------------------------------------------------------------------


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sysprompt-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke test")
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--duration", type=int, help="seconds per wrk run (5; quick: 2)")
    parser.add_argument("--rounds", type=int, help="wrk runs per figure (5; quick: 3)")
    parser.add_argument(
        "--connections", type=int, default=16, help="concurrent keep-alive clients (16)"
    )
    parser.add_argument(
        "--threads", type=int, default=THREADS, help=f"threads per worker ({THREADS})"
    )
    parser.add_argument(
        "--conversations", type=int, help="conversations constructed first (1000; quick: 200)"
    )
    parser.add_argument(
        "--million", action="store_true", help="resolve with 1k and 1M stored rows (PostgreSQL)"
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a database of the server to create the benchmark database on "
        "(default: $BENCH_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/postgres)",
    )
    parser.add_argument(
        "--construct-only",
        action="store_true",
        help="measure only construct against git status (no wrk)",
    )
    args = parser.parse_args(argv)
    if args.million and args.database == "sqlite":
        parser.error("--million runs on PostgreSQL: use --database postgres or both")
    for tool in ("git",) if args.construct_only else (WRK, "git"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not on PATH")
    return args


def main() -> None:
    args = parse()
    terminate_on_sigterm()
    labels = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    with workdir() as folder:
        config = Config(
            duration=args.duration or (2 if args.quick else 5),
            rounds=args.rounds or (3 if args.quick else 5),
            connections=args.connections,
            threads=args.threads,
            conversations=args.conversations or (200 if args.quick else 1000),
            construct_samples=40 if args.quick else 300,
            million=args.million,
            construct_only=args.construct_only,
            postgres_url=args.postgres_url,
            workdir=folder,
        )
        say(f"making a git repository in {folder}")
        repo = make_repo(folder / "repo")
        try:
            results = [bench_database(label, repo, config) for label in labels]
        except BenchmarkError as error:
            raise SystemExit(f"api_load: {error}") from None
        except KeyboardInterrupt:
            raise SystemExit("api_load: interrupted; servers stopped, databases dropped") from None
    if config.construct_only:
        for line in construct_table(results, config):
            print(line)
        return
    print(versions(results, config))
    report = load_table(results, config) + construct_table(results, config)
    for line in report + million_table(results, config) + targets(results):
        print(line)


if __name__ == "__main__":
    main()
