"""Events benchmark: what 10 webhook subscriptions add to a template save.

For each database (SQLite, and PostgreSQL unless ``--database sqlite``) a fresh database
is migrated and given 10 subscriptions to ``template.saved`` (no worker runs: the
events wait in the outbox, as they do between a save and the worker's next look).
Then, in blocks that alternate — the 10 subscriptions active, then all switched off by
one ``UPDATE`` between blocks, outside the timing — the same save is timed:

* ``http`` — ``PUT /api/system-prompt`` on one keep-alive connection to gunicorn (one
  worker, one thread): the request an author's save is. With the subscriptions active
  it also writes the event to the outbox in the save's transaction (one row: the worker
  fans it out to the 10 subscriptions); switched off, only the audit record (which
  every save writes).
* ``service`` — ``prompts.services.template_save`` called in-process: the same work
  without HTTP, so the share the events take is seen at its largest.

Target (printed, never asserted): a save with 10 subscriptions ≤ 1.1 × a save without
any, over HTTP. Run: ``.venv/bin/python benchmarks/events_save.py [--quick]
[--database sqlite|postgres|both]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    PYTHON,
    BenchmarkError,
    Client,
    gunicorn,
    postgres_database,
    prepare,
    run,
    server_env,
    sqlite_database,
    terminate_on_sigterm,
)

TARGET = 1.1
SUBSCRIPTIONS = 10

SETUP = """
import os
from django.contrib.auth import get_user_model
from sysprompt.events import services
user = get_user_model().objects.get(username="bench")
for n in range(int(os.environ["BENCH_SUBSCRIPTIONS"])):
    services.webhook_create(
        url=f"https://hooks{n}.example.com/sysprompt", events=["template.saved"], author=user
    )
"""

TOGGLE = """
import os
from sysprompt.events.models import Webhook
Webhook.objects.update(active=os.environ["BENCH_ACTIVE"] == "1")
"""

SERVICE = """
import json, os, time
from django.contrib.auth import get_user_model
from sysprompt.events.models import Webhook
from sysprompt.prompts.services import template_save
user = get_user_model().objects.get(username="bench")
blocks, size = int(os.environ["BENCH_BLOCKS"]), int(os.environ["BENCH_SIZE"])
times = {"with": [], "without": []}
for block in range(blocks):
    for active in (True, False) if block % 2 == 0 else (False, True):
        Webhook.objects.update(active=active)
        for n in range(size):
            started = time.perf_counter()
            template_save(text=f"service {block} {n} {active}", author=user)
            times["with" if active else "without"].append(time.perf_counter() - started)
print(json.dumps(times))
"""


def shell(env: dict[str, str], code: str, **values: str) -> str:
    return run(
        [PYTHON, "manage.py", "shell", "--no-imports", "-c", code],
        {**env, **{f"BENCH_{key.upper()}": value for key, value in values.items()}},
        "manage.py shell",
    )


def main() -> None:
    terminate_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    args = parser.parse_args()
    blocks, size = (10, 20) if args.quick else (30, 30)
    kinds = ("sqlite", "postgres") if args.database == "both" else (args.database,)
    print(f"{blocks} blocks of {size} saves each way, alternating; {SUBSCRIPTIONS} subscriptions")
    with tempfile.TemporaryDirectory(prefix="bench-events-save-") as scratch:
        work = Path(scratch)
        for kind in kinds:
            with contextlib.ExitStack() as stack:
                database = stack.enter_context(
                    sqlite_database(work)
                    if kind == "sqlite"
                    else postgres_database(args.postgres_url)
                )
                env = {**server_env(database, work), "LOG_LEVEL": "WARNING"}
                token = prepare(env)
                shell(env, SETUP, subscriptions=str(SUBSCRIPTIONS))
                server = stack.enter_context(
                    gunicorn(env, token, workers=1, threads=1, log=work / f"{kind}.log")
                )
                http = _http(server, env, blocks, size)
                service = json.loads(shell(env, SERVICE, blocks=str(blocks), size=str(size)))
                report(kind, http, service)


def _http(server: object, env: dict[str, str], blocks: int, size: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"with": [], "without": []}
    with Client(server) as client:  # type: ignore[arg-type]
        for n in range(20):  # warm-up
            client.expect({200}, "PUT", "/api/system-prompt", {"template": f"warm {n}"})
        for block in range(blocks):
            for active in (True, False) if block % 2 == 0 else (False, True):
                shell(env, TOGGLE, active="1" if active else "0")
                for n in range(size):
                    started = time.perf_counter()
                    client.expect(
                        {200}, "PUT", "/api/system-prompt", {"template": f"http {block} {n}"}
                    )
                    times["with" if active else "without"].append(time.perf_counter() - started)
    return times


def _line(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"    {name:<30} p50 {statistics.median(values) * 1e3:7.3f} ms  p95 {p95 * 1e3:7.3f} ms"


def report(kind: str, http: dict[str, list[float]], service: dict[str, list[float]]) -> None:
    print(f"\n== {kind}")
    for label, times in (("PUT /api/system-prompt", http), ("template_save in-process", service)):
        ratio = statistics.median(times["with"]) / statistics.median(times["without"])
        print(f"  {label}")
        print(_line(f"with {SUBSCRIPTIONS} subscriptions", times["with"]))
        print(_line("without any", times["without"]))
        if label.startswith("PUT"):
            verdict = "PASS" if ratio <= TARGET else "MISS"
            print(f"    ratio {ratio:.3f}x (target <= {TARGET}x: {verdict})")
        else:
            print(f"    ratio {ratio:.3f}x (the events' share without HTTP)")


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        sys.exit(f"benchmark failed: {error}")
