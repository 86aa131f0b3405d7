"""The in-process half of ``prompts_list.py``: time ``GET /api/prompts`` (its first and
last page of 100) and the Prompts page (its first and last 100 rows) with one prompt,
then with 10,000, in one process through Django's whole request path (middleware,
authentication, the view, JSON or the template).

Run in a child process with the benchmark database's environment (migrated, with the
``bench`` superuser). Prints one JSON object with the seconds of every sample.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

PROMPTS = 10_000
PAGE = 100


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    from django.conf import settings

    # The pages' static URLs without collectstatic's manifest (as the tests serve them).
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }

    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from benchmarks._support import BENCH_USERNAME
    from sysprompt.prompts.catalog import default_prompt
    from sysprompt.prompts.models import Prompt, TemplateVersion
    from sysprompt.releases.models import Label

    user = get_user_model().objects.get(username=BENCH_USERNAME)
    token = Token.objects.get(user=user).key
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Token {token}")
    web = Client(HTTP_HOST="127.0.0.1")
    web.force_login(user)
    default_prompt()

    def timed(call: Callable[[], Any], check: Callable[[Any], None]) -> list[float]:
        check(call())  # warm, and what it answers is right
        seconds = []
        for _ in range(args.samples):
            start = time.perf_counter()
            call()
            seconds.append(time.perf_counter() - start)
        return seconds

    def api_page(url: str, rows: int) -> tuple[Callable[[], Any], Callable[[Any], None]]:
        def check(answer: Any) -> None:
            assert answer.status_code == 200, answer.content[:300]
            assert len(answer.json()["results"]) == rows, len(answer.json()["results"])

        return (lambda: api.get(url)), check

    def web_page(
        params: dict[str, str], rows: int
    ) -> tuple[Callable[[], Any], Callable[[Any], None]]:
        def check(answer: Any) -> None:
            assert answer.status_code == 200, answer.content[:300]
            found = answer.content.count(b"<tr data-prompt=")
            assert found == rows, found

        return (lambda: web.get("/prompts/", params)), check

    results: dict[str, Any] = {}
    results["api_one"] = timed(*api_page(f"/api/prompts?page_size={PAGE}", 1))
    results["page_one"] = timed(*web_page({}, 1))

    now = timezone.now()
    Prompt.objects.bulk_create(
        [
            Prompt(
                name=f"team{i % 20:02}/area{i % 7}/prompt-{i:05}",
                description=f"Prompt {i} of the benchmark.",
                tags=[f"t{i % 5}"],
                created_at=now,
                updated_at=now,
            )
            for i in range(PROMPTS - 1)
        ],
        batch_size=1000,
    )
    ids = list(Prompt.objects.exclude(name="default").values_list("id", flat=True))
    TemplateVersion.objects.bulk_create(
        [
            TemplateVersion(prompt_id=pk, number=n + 1, text=f"Template {n}.", created_at=now)
            for n, pk in enumerate(ids)
        ],
        batch_size=1000,
    )
    Label.objects.bulk_create(
        [
            Label(prompt_id=pk, name="staging", target="latest", created_at=now, updated_at=now)
            for pk in ids[::3]
        ],
        batch_size=1000,
    )
    assert Prompt.objects.count() == PROMPTS

    first = api.get(f"/api/prompts?page_size={PAGE}").json()
    url = first["next"]
    pages = 1
    last_url = None
    while url:
        last_url = url
        answer = api.get(url).json()
        url = answer["next"]
        pages += 1
    assert last_url is not None and pages == PROMPTS // PAGE, pages
    last_path = last_url.split("127.0.0.1", 1)[-1]
    names = list(Prompt.objects.order_by("name").values_list("name", flat=True))
    results["api_first"] = timed(*api_page(f"/api/prompts?page_size={PAGE}", PAGE))
    results["api_last"] = timed(*api_page(last_path, PAGE))
    results["api_folder"] = timed(*api_page(f"/api/prompts?folder=team07&page_size={PAGE}", PAGE))
    results["page_first"] = timed(*web_page({}, PAGE))
    results["page_last"] = timed(*web_page({"after": names[-PAGE - 1]}, PAGE))
    results["pages"] = pages
    print(json.dumps(results))


if __name__ == "__main__":
    main()
