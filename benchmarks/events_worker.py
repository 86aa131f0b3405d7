"""Events benchmark: how many events per second the worker delivers, on SQLite.

A fresh SQLite database is migrated; one subscription points at a local receiver
(``_receiver.py``, its own process, answering 204); ``--events`` template saves
write as many events to the outbox (the worker not yet running). Then
``manage.py events_worker`` (the database backend, as ``scripts/serve`` starts it;
then again with ``--processes 2``, on as many new events) delivers them: the figure is
the attempts between its first and its last divided by the time between them (the
worker's start-up is not counted), with every delivery delivered and the attempts
answered 204 counted.

The peers, in the same run: the same signed bodies POSTed to the same receiver one
after another by a plain loop (``sending.post``: check, send, read) — the HTTP part
alone, without the queue and the database — once on the worker's kept connections
(``sending.sender``), once with a new connection each (resolve, check, connect).

Target (printed, never asserted): >= 200 events per second. Run:
``.venv/bin/python benchmarks/events_worker.py [--events N]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    PYTHON,
    ROOT,
    BenchmarkError,
    free_port,
    prepare,
    run,
    server_env,
    sqlite_database,
    stop_group,
    terminate_on_sigterm,
)

TARGET = 200.0

SUBSCRIBE = """
import os
from django.contrib.auth import get_user_model
from sysprompt.events import services
user = get_user_model().objects.get(username="bench")
services.webhook_create(url=os.environ["BENCH_URL"], events=["template.saved"], author=user)
"""

ENQUEUE = """
import os
from django.contrib.auth import get_user_model
from sysprompt.events.models import Attempt
from sysprompt.prompts.services import template_save
Attempt.objects.all().delete()  # the figures count this round's attempts only
user = get_user_model().objects.get(username="bench")
for n in range(int(os.environ["BENCH_EVENTS"])):
    template_save(text=f"version {n}", author=user)
"""

PEER = """
import json, sys, time
from sysprompt.conf import app_settings
from sysprompt.events import signing
from sysprompt.events.sending import post, sender
from sysprompt.events.models import Event, Webhook
conf = app_settings()
webhook = Webhook.objects.get()
bodies = [
    (event.message_id, signing.body(signing.payload(type=event.type, created_at=event.created_at,
     data=event.data, text=event.text, include_text=False)))
    for event in Event.objects.order_by("id")
]
result = {"count": len(bodies)}
for name, via in (("kept", sender(conf)), ("new", None)):
    started = time.perf_counter()
    for message_id, content in bodies:
        headers = signing.signed_headers(
            secret=webhook.secret, message_id=message_id, content=content
        )
        assert post(url=webhook.url, content=content, headers=headers, conf=conf, via=via).delivered
    result[name] = time.perf_counter() - started
print(json.dumps(result))
"""

RESULT = """
import json
from django.db.models import Count, Max, Min
from sysprompt.events.models import Attempt, Delivery, Event
log = Attempt.objects.aggregate(first=Min("at"), last=Max("at"), count=Count("id"))
print(json.dumps({
    "attempts": log["count"],
    "pending": Delivery.objects.filter(state="pending").count(),
    "unsent": Event.objects.filter(fanned_out=False).count(),
    "seconds": (log["last"] - log["first"]).total_seconds() if log["count"] else 0,
    "ok": Attempt.objects.filter(status_code=204).count(),
}))
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
    parser.add_argument("--events", type=int, default=2000, help="events per figure")
    parser.add_argument(
        "--processes", type=int, nargs="+", default=[1, 2], help="worker processes per figure"
    )
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="bench-events-") as scratch,
        contextlib.ExitStack() as stack,
    ):
        work = Path(scratch)
        database = stack.enter_context(sqlite_database(work))
        env = server_env(database, work)
        port = free_port()
        env.update(
            SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS="127.0.0.1",
            SYSPROMPT_WEBHOOK_ALLOW_PRIVATE="127.0.0.1",
            LOG_LEVEL="WARNING",
        )
        prepare(env)
        receiver = subprocess.Popen(
            [PYTHON, str(ROOT / "benchmarks" / "_receiver.py"), str(port)],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        stack.callback(stop_group, receiver)
        assert receiver.stdout is not None and receiver.stdout.readline().strip() == "ready"
        url = f"http://127.0.0.1:{port}/hooks"
        shell(env, SUBSCRIBE, url=url)
        print(f"{args.events:,} events per figure (SQLite), one subscription, receiver on {url}")
        for processes in args.processes:
            shell(env, ENQUEUE, events=str(args.events))
            result = _deliver(env, work, processes, args.events)
            rate = (result["attempts"] - 1) / result["seconds"]
            verdict = "PASS" if rate >= TARGET else "MISS"
            print(
                f"  worker, {processes} process{'es' if processes > 1 else ''}: "
                f"{result['attempts']:,} attempts ({result['ok']:,} answered 204) in "
                f"{result['seconds']:.2f} s = {rate:,.0f} events/s, {1e3 / rate:.2f} ms each "
                f"(target >= {TARGET:g}: {verdict})"
            )
        peer = json.loads(shell(env, PEER))
        for name, words in (("kept", "kept connections"), ("new", "a new connection each")):
            peer_rate = peer["count"] / peer[name]
            print(
                f"  peer, the HTTP part alone (sending.post in a loop, {words}): "
                f"{peer_rate:,.0f} events/s = {1e3 / peer_rate:.2f} ms each"
            )


def _deliver(env: dict[str, str], work: Path, processes: int, events: int) -> dict[str, Any]:
    """Start the worker, wait until every event is delivered, stop it; the log's figures."""
    with contextlib.ExitStack() as stack:
        log = stack.enter_context((work / "worker.log").open("ab"))
        worker = subprocess.Popen(
            [PYTHON, "manage.py", "events_worker", "--interval", "0.05"]
            + ["--processes", str(processes)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        stack.callback(stop_group, worker)
        deadline = time.monotonic() + 600
        while True:
            result: dict[str, Any] = json.loads(shell(env, RESULT))
            if result["pending"] == 0 and result["unsent"] == 0:
                return result
            if worker.poll() is not None or time.monotonic() > deadline:
                raise BenchmarkError(f"the worker stopped or stalled: {result}")
            time.sleep(1)


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        sys.exit(f"benchmark failed: {error}")
