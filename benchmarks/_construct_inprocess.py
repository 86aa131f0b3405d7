"""Time ``services.conversation_prompt_construct`` in-process, against one git status.

Run by ``api_load.py`` in a child process with the server's environment (Django can be
set up once per process, and each database needs its own settings). Prints one JSON
object: the seconds of each construct, of each render alone (``rendering.prompt_render``:
template, variables, git; no write) and of each interleaved ``git status --short``.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--conversation-id", default="bench-construct-inprocess")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    from django.contrib.auth import get_user_model

    from benchmarks._support import BENCH_USERNAME, git_status_seconds
    from sysprompt.prompts.rendering import prompt_render
    from sysprompt.prompts.services import conversation_prompt_construct

    user = get_user_model()._default_manager.get(username=BENCH_USERNAME)

    def construct() -> str | None:
        stored = conversation_prompt_construct(
            conversation_id=args.conversation_id, cwd=args.cwd, model="bench-model", user=user
        )
        return stored.prompt.system_prompt

    def render() -> None:
        prompt_render(cwd=args.cwd, model="bench-model", conversation_id=args.conversation_id)

    prompt = construct()  # warm: parse the template, open the connection
    render()
    git_status_seconds(Path(args.cwd))
    constructs, renders, statuses = [], [], []
    for _ in range(args.samples):
        start = time.perf_counter()
        construct()
        constructs.append(time.perf_counter() - start)
        start = time.perf_counter()
        render()
        renders.append(time.perf_counter() - start)
        statuses.append(git_status_seconds(Path(args.cwd)))
    data = {"construct": constructs, "render": renders, "git_status": statuses, "prompt": prompt}
    json.dump(data, sys.stdout)


if __name__ == "__main__":
    main()
