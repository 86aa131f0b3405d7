"""The in-process half of ``prompts_first_turn.py``: one database in one state — two
prompts (``default`` and ``bench/target``), or 1,000 (998 more, each with a template
version and a ``production`` label row) — answering the driver's commands on stdin, so
that the driver can take samples from both states in alternation (a noisy machine
slows both alike).

Commands, one per line, each answered with one JSON line: ``turns N`` — the seconds of
N first turns (an agent host's ``resolve`` of a new conversation naming
``bench/target``, through Django's whole request path); ``later`` — the SQL of a later
turn; ``quit``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

PROMPTS = 1_000
TARGET = "bench/target"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--prompts", type=int, choices=(2, PROMPTS), required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from sysprompt.accounts.services import agent_host_ensure
    from sysprompt.prompts.models import Prompt, TemplateVersion
    from sysprompt.releases.models import Label

    host = agent_host_ensure(name="bench-host")
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Token {host.token}")
    now = timezone.now()
    target = Prompt.objects.create(name=TARGET, created_at=now, updated_at=now)
    TemplateVersion.objects.create(
        prompt=target,
        number=1,
        text="You answer in [prompt:cwd] as [prompt:model].",
        created_at=now,
    )
    if args.prompts == PROMPTS:
        Prompt.objects.bulk_create(
            [
                Prompt(name=f"team{i % 20:02}/bot-{i:04}", created_at=now, updated_at=now)
                for i in range(PROMPTS - Prompt.objects.count())
            ],
            batch_size=500,
        )
        others = list(
            Prompt.objects.exclude(pk=target.pk)
            .exclude(name="default")
            .values_list("pk", flat=True)
        )
        TemplateVersion.objects.bulk_create(
            [
                TemplateVersion(prompt_id=pk, number=n + 2, text=f"Bot {n}.", created_at=now)
                for n, pk in enumerate(others)
            ],
            batch_size=500,
        )
        Label.objects.bulk_create(
            [
                Label(
                    prompt_id=pk, name="production", target="latest", created_at=now, updated_at=now
                )
                for pk in others
            ],
            batch_size=500,
        )
    if connection.vendor == "postgresql":  # what autovacuum does in time; both states alike
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    counter = iter(range(10**9))

    def turn(conversation: str) -> Any:
        answer = api.post(
            f"/api/conversations/{conversation}/system-prompt/resolve",
            {"cwd": args.cwd, "model": "bench-model", "prompt": TARGET},
            content_type="application/json",
        )
        assert answer.status_code in (200, 201), answer.content[:300]
        return answer

    def first_turns(samples: int) -> list[float]:
        seconds = []
        for _ in range(samples):
            conversation = f"first-{next(counter)}"
            start = time.perf_counter()
            made = turn(conversation)
            seconds.append(time.perf_counter() - start)
            assert made.status_code == 201
        return seconds

    def later_turn_queries() -> list[str]:
        turn("later")
        with CaptureQueriesContext(connection) as queries:
            assert turn("later").status_code == 200
        return [query["sql"] for query in queries.captured_queries]

    first_turns(5)  # warm: parse the template, open the connection
    print(json.dumps({"prompts": Prompt.objects.count()}), flush=True)
    for line in sys.stdin:
        command, *rest = line.split()
        if command == "turns":
            answer: Any = first_turns(int(rest[0]))
        elif command == "later":
            answer = later_turn_queries()
        else:
            break
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
