"""The in-process half of ``library.py``: set up the library, time construct and resolve.

Run in a child process with the benchmark database's environment (migrated, with the
``bench`` superuser). Prints one JSON object with the seconds of every sample.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

PROVIDER = "anthropic"
MODEL = "claude-sonnet-4-5"
FRAGMENTS = 20


def fragment_text(n: int, flavour: str) -> str:
    """About 600 bytes of guidance with a few variables and a block."""
    return (
        f"## Section {n} ({flavour})\n"
        + "".join(
            f"- Rule {n}.{k}: keep the change small, explain why, and run the tests.\n"
            for k in range(6)
        )
        + "[if tool:shell]\nThe shell is available in [prompt:cwd].\n[endif]\n"
        + "Model: [prompt:model] via [prompt:provider].\n"
    )


ROOT_HEAD = "You are a coding assistant on branch [git:branch].\n[file:AGENTS.md]\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--samples", type=int, required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from benchmarks._support import BENCH_USERNAME
    from sysprompt.library import services as library
    from sysprompt.prompts import services
    from sysprompt.prompts.validation import host_context_check

    user = get_user_model()._default_manager.get(username=BENCH_USERNAME)
    for n in range(1, FRAGMENTS + 1):
        name = f"f{n:02d}"
        library.variant_save(name=name, text=fragment_text(n, "default"), author=user)
        library.variant_save(
            name=name, provider=PROVIDER, text=fragment_text(n, "provider"), author=user
        )
        library.variant_save(
            name=name,
            provider=PROVIDER,
            model=MODEL,
            text=fragment_text(n, "model"),
            author=user,
        )
    library_root = ROOT_HEAD + "".join(f"[fragment:f{n:02d}]\n" for n in range(1, FRAGMENTS + 1))
    # A fragment's rendering loses one trailing line ending, and its line keeps its own.
    inline_root = ROOT_HEAD + "".join(fragment_text(n, "model") for n in range(1, FRAGMENTS + 1))
    host = host_context_check(provider=PROVIDER, tools=["shell", "grep"])

    def construct(conversation_id: str) -> str | None:
        stored = services.conversation_prompt_construct(
            conversation_id=conversation_id, cwd=args.cwd, model=MODEL, user=user, host=host
        )
        return stored.prompt.system_prompt

    def resolve(conversation_id: str) -> str | None:
        stored = services.conversation_prompt_resolve(
            conversation_id=conversation_id, cwd=args.cwd, model=MODEL, user=user, host=host
        )
        return stored.prompt.system_prompt

    # Each sample saves the form it times as the current template (not timed).
    services.template_save(text=library_root, author=user)
    from_library = construct("bench-library")
    services.template_save(text=inline_root, author=user)
    from_inline = construct("bench-inline")
    if from_library != from_inline or from_library is None:
        raise SystemExit("the library and the inline template do not give the same prompt")

    figures: dict[str, list[float]] = {
        "construct_library": [],
        "construct_inline": [],
        "resolve_library": [],
        "resolve_inline": [],
    }
    for _ in range(args.samples):
        for form, text in (("library", library_root), ("inline", inline_root)):
            services.template_save(text=text, author=user)
            start = time.perf_counter()
            construct(f"bench-{form}")
            figures[f"construct_{form}"].append(time.perf_counter() - start)
            start = time.perf_counter()
            resolve(f"bench-{form}")
            figures[f"resolve_{form}"].append(time.perf_counter() - start)

    counts: dict[str, int] = {}
    for form in ("library", "inline"):
        with CaptureQueriesContext(connection) as queries:
            resolve(f"bench-{form}")
        counts[form] = len(queries.captured_queries)
    json.dump(
        {
            **figures,
            "prompt_chars": len(from_library),
            "resolve_queries_library": counts["library"],
            "resolve_queries_inline": counts["inline"],
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
