"""Fragment impact benchmark: the impact report of a change of a fragment's text that
100 prompts include, each with 20 recent conversations (2,000 contexts: each
conversation its own), against the same report for a fragment one prompt includes (20
conversations), measured in the same run, samples interleaved.

For each database (SQLite, and PostgreSQL unless ``--database sqlite``) a fresh
database is migrated; then, in one process: a library of 20 fragments (``tone`` among
them), 100 prompts ``bench/pNNN`` whose templates include ``tone`` (and read
``var:who`` and ``prompt:model``), one prompt ``solo/one`` that alone includes
``solo``; 20 conversations of each prompt's ``production`` (which follows latest),
each with its own variables, constructed within the window. Each sample asks
``fragment_impact`` for ``tone`` (100 prompts) and for ``solo`` (1 prompt), taking
turns at going first.

Target (named prompts §5): the 100-prompt report ≤ 5 s. Printed, never asserted. Run:
``.venv/bin/python benchmarks/fragment_impact.py [--quick] [--database sqlite|postgres|both]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
    database_arguments,
    make_repo,
    measured_per_database,
    terminate_on_sigterm,
)

PROMPTS = 100
CONVERSATIONS = 20
FRAGMENTS = 20
TARGET_S = 5.0


def main() -> None:
    terminate_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    database_arguments(parser)
    parser.add_argument("--inprocess", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cwd", help=argparse.SUPPRESS)
    args = parser.parse_args()
    samples = args.samples or (3 if args.quick else 7)
    if args.inprocess:
        measure(cwd=args.cwd, samples=samples)
        return
    with tempfile.TemporaryDirectory(prefix="bench-fragment-impact-") as scratch:
        roots = Path(scratch) / "roots"
        repo = make_repo(roots / "project")
        print(f"samples: {samples} of each report, interleaved; repository {repo}")
        script = ROOT / "benchmarks" / "fragment_impact.py"
        argv = [PYTHON, str(script), "--inprocess", "--cwd", str(repo), "--samples", str(samples)]
        for kind, data in measured_per_database(args, argv, work=Path(scratch), roots=roots):
            report(kind, data)


def measure(*, cwd: str, samples: int) -> None:
    """The in-process half: set the data up, time both reports; print one JSON line."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db.models import Max
    from django.utils import timezone

    from benchmarks._support import BENCH_USERNAME
    from sysprompt.library import services as library
    from sysprompt.prompts.models import ConversationPrompt, Prompt, TemplateVersion
    from sysprompt.releases.fragments import fragment_impact

    user = get_user_model()._default_manager.get(username=BENCH_USERNAME)
    for n in range(FRAGMENTS):
        name = "tone" if n == 0 else f"f{n:02d}"
        library.variant_save(name=name, text=f"Fragment {name}: be precise.\n", author=user)
    library.variant_save(name="solo", text="Solo: be brief.\n", author=user)
    now = timezone.now()

    def prompt_with(name: str, fragment: str) -> Prompt:
        made = Prompt.objects.create(name=name, created_at=now, updated_at=now)
        top = TemplateVersion.objects.aggregate(top=Max("number"))["top"] or 0
        text = (
            f"You are {name}, on [prompt:model].\n[fragment:{fragment}]\n[fragment:f01]\n"
            "[if var:who]Working for [var:who].[endif]\n"
        )
        TemplateVersion.objects.create(number=top + 1, prompt=made, text=text, created_at=now)
        return made

    def conversations(of: Prompt) -> None:
        ConversationPrompt.objects.bulk_create(
            ConversationPrompt(
                prompt=of,
                conversation_id=f"{of.name}-{n}",
                system_prompt="frozen",
                cwd=cwd,
                model="gpt-5",
                provider="openai",
                variables={"who": f"customer {n}"},
                created_at=now,
                constructed_at=now,
                owner=user,
            )
            for n in range(CONVERSATIONS)
        )

    for n in range(PROMPTS):
        conversations(prompt_with(f"bench/p{n:03d}", "tone"))
    conversations(prompt_with("solo/one", "solo"))

    seconds: dict[str, list[float]] = {"many": [], "one": []}
    shape: dict[str, Any] = {}
    for sample in range(samples):
        order = ("many", "one") if sample % 2 == 0 else ("one", "many")
        for which in order:
            fragment = "tone" if which == "many" else "solo"
            started = time.perf_counter()
            found = fragment_impact(name=fragment, text=f"Changed {fragment}: be kind.\n")
            seconds[which].append(time.perf_counter() - started)
            summary = found.summary
            shape[which] = {
                "prompts": len(found.prompts),
                "labels": sum(len(part.labels) for part in found.prompts),
                "contexts": summary.contexts,
                "changed": summary.contexts_changed,
                "conversations": summary.conversations,
                "truncated": found.truncated,
            }
    print(json.dumps({"seconds": seconds, "shape": shape}))


def report(kind: str, data: dict[str, Any]) -> None:
    seconds, shape = data["seconds"], data["shape"]
    many, one = statistics.median(seconds["many"]), statistics.median(seconds["one"])
    print(f"\n== {kind}")
    for which, what in (("many", f"{PROMPTS} prompts"), ("one", "1 prompt")):
        s = shape[which]
        print(
            f"  {what:<12} p50 {statistics.median(seconds[which]):7.3f} s  max "
            f"{max(seconds[which]):7.3f} s  ({s['prompts']} prompts, {s['labels']} labels, "
            f"{s['contexts']:,} contexts, {s['changed']:,} changed, "
            f"{s['conversations']:,} conversations, truncated {s['truncated']})"
        )
    verdict = "PASS" if many <= TARGET_S else "MISS"
    print(
        f"  {PROMPTS} prompts: {many:.3f} s (target <= {TARGET_S:.0f} s: {verdict}); "
        f"{many / one:.1f}x the 1-prompt report"
    )


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        sys.exit(f"benchmark failed: {error}")
