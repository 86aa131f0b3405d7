"""The in-process half of ``releases.py``: set up a library, releases and labels; time
construct and a first turn today and through labels, a later turn, creating a release
of 1,000 variants, and an impact report over 200 contexts.

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

from sysprompt.prompts.catalog import default_prompt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

from benchmarks._library_inprocess import (  # noqa: E402
    FRAGMENTS,
    MODEL,
    PROVIDER,
    ROOT_HEAD,
    fragment_text,
)

IMPACT_CONTEXTS = 200
RELEASE_VARIANTS = 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--release-samples", type=int, required=True)
    parser.add_argument("--impact-samples", type=int, required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from benchmarks._support import BENCH_USERNAME
    from sysprompt.library import services as library
    from sysprompt.prompts import services
    from sysprompt.prompts.models import ConversationPrompt
    from sysprompt.prompts.validation import host_context_check
    from sysprompt.releases import selectors as releases
    from sysprompt.releases import services as release_services
    from sysprompt.releases.impact import impact_report

    user = get_user_model()._default_manager.get(username=BENCH_USERNAME)
    release_services.production_ensure()

    # --- the library of library.py, released; production → that release ----------------
    for n in range(1, FRAGMENTS + 1):
        name = f"f{n:02d}"
        library.variant_save(name=name, text=fragment_text(n, "default"), author=user)
        library.variant_save(
            name=name, provider=PROVIDER, text=fragment_text(n, "provider"), author=user
        )
        library.variant_save(
            name=name, provider=PROVIDER, model=MODEL, text=fragment_text(n, "model"), author=user
        )
    root = ROOT_HEAD + "".join(f"[fragment:f{n:02d}]\n" for n in range(1, FRAGMENTS + 1))
    services.template_save(text=root, author=user)
    release = release_services.release_create(message="bench", author=user).release.number
    release_services.label_set(name="production", target={"release": release}, author=user)
    release_services.label_set(name="staging", target="latest", author=user)
    split = {"split": [{"release": release, "weight": 5000}, {"release": "latest", "weight": 5000}]}
    release_services.label_set(name="ab", target=split, author=user)
    host = host_context_check(provider=PROVIDER, tools=["shell", "grep"])

    paths: dict[str, Callable[..., Any]] = {
        "today": lambda **kw: kw,  # the default chooser: the working copy, no label
        "release": lambda **kw: {**kw, "build": releases.conversation_build(None)},
        "latest_label": lambda **kw: {**kw, "build": releases.conversation_build("staging")},
        "split": lambda **kw: {**kw, "build": releases.conversation_build("ab")},
    }

    def construct(path: str, conversation_id: str) -> str | None:
        call = paths[path](
            conversation_id=conversation_id, cwd=args.cwd, model=MODEL, user=user, host=host
        )
        return services.conversation_prompt_construct(**call).prompt.system_prompt

    def resolve(path: str, conversation_id: str) -> str | None:
        call = paths[path](
            conversation_id=conversation_id, cwd=args.cwd, model=MODEL, user=user, host=host
        )
        return services.conversation_prompt_resolve(**call).prompt.system_prompt

    prompts = {path: construct(path, f"check-{path}") for path in paths}
    if len(set(prompts.values())) != 1 or prompts["today"] is None:
        raise SystemExit(f"the paths do not build the same prompt: {list(prompts)}")

    figures: dict[str, list[float]] = {}
    order = list(paths)
    for sample in range(args.samples):
        order = order[1:] + order[:1]  # each path takes each place in turn
        for path in order:
            start = time.perf_counter()
            construct(path, f"construct-{path}")
            figures.setdefault(f"construct_{path}", []).append(time.perf_counter() - start)
            start = time.perf_counter()
            resolve(path, f"first-{path}-{sample}")  # a new conversation: a first turn
            figures.setdefault(f"first_turn_{path}", []).append(time.perf_counter() - start)
            start = time.perf_counter()
            resolve(path, f"construct-{path}")  # a later turn
            figures.setdefault(f"later_turn_{path}", []).append(time.perf_counter() - start)

    later_queries = {}
    for path in paths:
        with CaptureQueriesContext(connection) as queries:
            resolve(path, f"construct-{path}")
        later_queries[path] = [query["sql"] for query in queries.captured_queries]

    # --- a release of a library of 1,000 variants ----------------------------------------
    keys = [(None, None), (PROVIDER, None), (PROVIDER, MODEL), ("openai", None)]
    existing = len(releases.working_copy_snapshot().variants)
    for n in range((RELEASE_VARIANTS - existing) // len(keys)):
        for provider, model in keys:
            library.variant_save(
                name=f"big/{n:03d}", provider=provider, model=model, text=f"x {n}", author=user
            )
    snapshot = releases.working_copy_snapshot()
    variant_count = len(snapshot.variants)
    for sample in range(args.release_samples):
        library.variant_save(name="big/000", text=f"edit {sample}", author=user)  # not timed
        start = time.perf_counter()
        releases.working_copy_snapshot()
        figures.setdefault("snapshot_read", []).append(time.perf_counter() - start)
        start = time.perf_counter()
        made = release_services.release_create(author=user)
        figures.setdefault("release_create", []).append(time.perf_counter() - start)
        assert made.created
    release_rows = made.release.fragments.count()

    # --- impact over 200 recorded contexts of the 20-fragment template -------------------
    production = release_services.release_create(message="impact before", author=user)
    release_services.label_set(
        name="production", target={"release": production.release.number}, author=user
    )
    for n in range(1, 6):  # the candidate (the working copy) changes five fragments
        library.variant_save(
            name=f"f{n:02d}",
            provider=PROVIDER,
            model=MODEL,
            text=fragment_text(n, "model") + "One more rule.\n",
            author=user,
        )
    now = timezone.now()
    ConversationPrompt.objects.bulk_create(
        ConversationPrompt(
            prompt=default_prompt(),
            conversation_id=f"impact-{n}",
            system_prompt="frozen",
            cwd=args.cwd,
            model=MODEL if n % 2 else f"{MODEL}-{n % 4}",
            provider=PROVIDER,
            tools=["shell", "grep"] if n % 3 else ["shell"],
            variables={"context": str(n)},
            constructed_at=now,
            created_at=now,
            owner_id=user.pk,
            label="production",
        )
        for n in range(IMPACT_CONTEXTS)
    )
    for _ in range(args.impact_samples):
        start = time.perf_counter()
        report = impact_report(label="production", candidate="latest")
        figures.setdefault("impact", []).append(time.perf_counter() - start)
        start = time.perf_counter()
        for n in range(IMPACT_CONTEXTS):  # the peer: one side, as many constructs
            construct("release", f"impact-peer-{n % 20}")
        figures.setdefault("constructs_200", []).append(time.perf_counter() - start)
    summary = report.summary

    json.dump(
        {
            **figures,
            "prompt_chars": len(prompts["today"]),
            "later_turn_queries": later_queries,
            "release_variants": variant_count,
            "release_rows": release_rows,
            "impact_contexts": summary.contexts,
            "impact_changed": summary.contexts_changed,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
