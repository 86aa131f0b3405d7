"""The in-process half of ``prompts_first_turn.py``: an agent host's first turn (``resolve``
of a new conversation naming ``bench/target``) and a later turn, with two prompts, then
with 1,000, in one process through Django's whole request path.

Run in a child process with the benchmark database's environment (migrated). The two
states cannot share a database at once, so the first turns with two prompts (``default``
and the target) are timed first, then 998 more prompts are made (each with a template
version and a ``production`` label row) and the same first turns are timed again.
Prints one JSON object: the seconds of every first turn, and the SQL of a later turn in
each state.
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
    parser.add_argument("--samples", type=int, required=True)
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
    results: dict[str, Any] = {"later_few": later_turn_queries()}
    results["prompts_few"] = Prompt.objects.count()
    results["few"] = first_turns(args.samples)

    others = [
        Prompt(name=f"team{i % 20:02}/bot-{i:04}", created_at=now, updated_at=now)
        for i in range(PROMPTS - Prompt.objects.count())
    ]
    Prompt.objects.bulk_create(others, batch_size=500)
    made = Prompt.objects.exclude(pk=target.pk).exclude(name="default")
    TemplateVersion.objects.bulk_create(
        [
            TemplateVersion(prompt_id=pk, number=n + 2, text=f"Bot {n}.", created_at=now)
            for n, pk in enumerate(made.values_list("pk", flat=True))
        ],
        batch_size=500,
    )
    Label.objects.bulk_create(
        [
            Label(prompt_id=pk, name="production", target="latest", created_at=now, updated_at=now)
            for pk in made.values_list("pk", flat=True)
        ],
        batch_size=500,
    )
    if connection.vendor == "postgresql":  # what autovacuum does after such an insert
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    results["prompts_many"] = Prompt.objects.count()
    results["later_many"] = later_turn_queries()
    results["many"] = first_turns(args.samples)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
