"""Preview token-count benchmark: the preview's latency with token counts on and off,
in the same run.

It makes a real repository (``_support.make_repo``), a fresh SQLite database (migrated,
with the ``bench`` superuser) and, in a child process with the production-like
environment (DEBUG off), sends previews through Django's full request path (URL
routing, middleware, the view, the template or the serializer), in-process:

* ``editor``: ``POST /editor/preview`` as htmx sends it (the 6 KB template of
  ``preview_latency.py``, provider ``openai``, model ``gpt-4o``: exact counts);
* ``api``: ``POST /api/system-prompt/preview`` with the same body (token auth);
* ``editor 100 KB``: the editor's preview of that template with ~94 KB more of
  static instructions, the size the counting target is set at.

Each sample changes the text as a keystroke does, so the prompt is new and no cache
serves its count: **at the end** (the usual case: the shared prefix, ending at
``[system:date]``, is unchanged and its count comes from the cache) and **at the
start** (the prefix changes too: both are counted). "off" is the preview as it was
before counting: every count replaced by characters ÷ 4 (``sysprompt_core.tokens.count``
swapped for the old arithmetic); "on" and "off" take turns sample by sample, the order
alternating, after a warm-up. Printed: the medians of both, and on/off (target: ≤ 1.10,
the preview's latency grows by at most 10 %).

With ``--callgrind`` (valgrind installed) it also counts instructions: the child runs
under ``valgrind --tool=callgrind`` four times (on/off × two numbers of previews, the
same set-up and warm-up each time), and the difference between the two numbers gives
the instructions of one preview, on and off, free of the set-up's.

Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/preview_tokens.py [--quick] [--samples N] [--callgrind]``
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TARGET_RATIO = 1.10
WARMUP = 5
LARGE_EXTRA = 94 * 1024
CASES = ("editor", "api", "editor_100k")
COUNTING: list[float] = []
EDITS = ("end", "start")


# --- the child: previews in-process ----------------------------------------------------------


def _large(template: str) -> str:
    rule = (
        "- Keep every answer short, precise and about the code at hand; cite the file "
        "and line you mean, and never invent an API you have not read.\n"
    )
    return template.replace("# How to work", rule * (LARGE_EXTRA // len(rule)) + "# How to work")


@contextlib.contextmanager
def _counting(on: bool) -> Iterator[None]:
    """Counts as they are (on), or characters ÷ 4 as they were before (off)."""
    from sysprompt_core import tokens

    if on:
        real_on = tokens.count

        def timed(
            text: str,
            *,
            provider: str | None = None,
            model: str | None = None,
            ratio: float | None = None,
        ) -> tokens.TokenCount:
            started = time.perf_counter()
            try:
                return real_on(text, provider=provider, model=model, ratio=ratio)
            finally:
                COUNTING.append(time.perf_counter() - started)

        tokens.count = timed
        try:
            yield
        finally:
            tokens.count = real_on
        return
    real = tokens.count

    def quarter(
        text: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        ratio: float | None = None,
    ) -> tokens.TokenCount:
        return tokens.TokenCount(-(-len(text) // 4), False, "o200k_base", provider)

    tokens.count = quarter
    try:
        yield
    finally:
        tokens.count = real


def _child(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from benchmarks._support import BENCH_USERNAME
    from sysprompt_core import tokens

    template = Path(args.template).read_text()
    user = get_user_model()._default_manager.get(username=BENCH_USERNAME)
    web = Client(SERVER_NAME="127.0.0.1")
    web.force_login(user)
    api = Client(
        SERVER_NAME="127.0.0.1", HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}"
    )
    body = {"cwd": args.cwd, "provider": "openai", "model": "gpt-4o"}
    texts = {"editor": template, "api": template, "editor_100k": _large(template)}
    tokens.encoding("o200k_base")  # loaded once per process, as a server does at its first

    def send(case: str, text: str) -> None:
        if case == "api":
            response = api.post(
                "/api/system-prompt/preview",
                {**body, "template": text},
                content_type="application/json",
            )
        else:
            response = web.post(
                "/editor/preview", {**body, "template": text}, HTTP_HX_REQUEST="true"
            )
        if response.status_code != 200 or b"token" not in response.content:
            raise SystemExit(f"{case}: {response.status_code} {response.content[:300]!r}")

    def edited(case: str, edit: str, n: int) -> str:
        mark = f"Ticket: ACME-{n}\n" if edit == "end" else f"[{n}] "
        return texts[case] + mark if edit == "end" else mark + texts[case]

    if args.calls is not None:  # under callgrind: one mode, a fixed number of previews
        with _counting(args.mode == "on"):
            for n in range(WARMUP):
                send("editor", edited("editor", "end", 10_000 + n))
            for n in range(args.calls):
                send("editor", edited("editor", "end", n))
        return

    times: dict[str, list[float]] = {}
    sample = 0
    for case in CASES:
        samples = args.samples if case != "editor_100k" else max(10, args.samples // 4)
        for edit in EDITS:
            for n in range(-WARMUP, samples):
                order = ("on", "off") if n % 2 == 0 else ("off", "on")
                for mode in order:
                    sample += 1
                    text = edited(case, edit, sample)
                    COUNTING.clear()
                    with _counting(mode == "on"):
                        started = time.perf_counter()
                        send(case, text)
                        elapsed = time.perf_counter() - started
                    if n >= 0:
                        times.setdefault(f"{case}/{edit}/{mode}", []).append(elapsed)
                        if mode == "on":
                            counting = times.setdefault(f"{case}/{edit}/counting", [])
                            counting.append(sum(COUNTING))
    print(json.dumps({"times": times, "chars": {k: len(v) for k, v in texts.items()}}))


# --- the parent: database, repository, report ------------------------------------------------


@contextlib.contextmanager
def _prepared() -> Iterator[tuple[dict[str, str], Path, Path]]:
    from benchmarks._support import make_repo, prepare, server_env, sqlite_database

    with tempfile.TemporaryDirectory(prefix="bench-preview-tokens-") as scratch:
        work = Path(scratch)
        roots = work / "roots"
        repo = make_repo(roots / "project")
        with sqlite_database(work) as database:
            env = server_env(database, roots)
            prepare(env)
            template = work / "template.txt"
            template.write_text(_template())
            yield env, repo, template


def _template() -> str:
    """The TEMPLATE of preview_latency.py, read without importing it (playwright)."""
    tree = ast.parse((Path(__file__).parent / "preview_latency.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["TEMPLATE"]:
            value = ast.literal_eval(node.value)
            if isinstance(value, str):
                return value
    raise SystemExit("preview_latency.py has no TEMPLATE")


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(values) * 1e3:7.2f} ms  p95 {p95 * 1e3:7.2f} ms"


def _report(data: dict[str, Any]) -> None:
    times: dict[str, list[float]] = data["times"]
    chars = data["chars"]
    for case in CASES:
        for edit in EDITS:
            on, off = times[f"{case}/{edit}/on"], times[f"{case}/{edit}/off"]
            ratio = statistics.median(on) / statistics.median(off)
            verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
            inside = statistics.median(times[f"{case}/{edit}/counting"]) * 1e3
            print(
                f"{case:<12} ({chars[case]:>7,} chars) typed at the {edit:<5} n={len(on):<4}"
                f" on: {_ms(on)} | off: {_ms(off)} | on/off {ratio:.3f} "
                f"(target <= {TARGET_RATIO:.2f}: {verdict}) | counting itself p50 {inside:.3f} ms"
            )


def _callgrind(env: dict[str, str], repo: Path, template: Path, calls: tuple[int, int]) -> None:
    from benchmarks._support import PYTHON, ROOT

    if shutil.which("valgrind") is None:
        print("callgrind: valgrind is not installed; skipped")
        return
    totals: dict[tuple[str, int], int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as out:
        for mode in ("on", "off"):
            for count in calls:
                target = Path(out) / f"callgrind.{mode}.{count}"
                argv = [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={target}",
                    PYTHON,
                    __file__,
                    "--child",
                    "--cwd",
                    str(repo),
                    "--template",
                    str(template),
                    "--mode",
                    mode,
                    "--calls",
                    str(count),
                ]
                done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
                found = re.search(r"Collected : (\d+)", done.stderr)
                if done.returncode != 0 or found is None:
                    print(f"callgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
                    return
                totals[(mode, count)] = int(found.group(1))
    low, high = calls
    per = {
        mode: (totals[(mode, high)] - totals[(mode, low)]) / (high - low) for mode in ("on", "off")
    }
    print(
        f"callgrind, editor preview typed at the end, instructions per preview "
        f"({high} − {low} previews): on {per['on'] / 1e6:,.1f} M, off {per['off'] / 1e6:,.1f} M,"
        f" on/off {per['on'] / per['off']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cwd", help=argparse.SUPPRESS)
    parser.add_argument("--template", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=("on", "off"), help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    from benchmarks._support import PYTHON, run, terminate_on_sigterm

    terminate_on_sigterm()
    samples = args.samples or (30 if args.quick else 150)
    with contextlib.ExitStack() as stack:
        env, repo, template = stack.enter_context(_prepared())
        load = os.getloadavg()
        print(
            f"samples: {samples} per figure ({max(10, samples // 4)} at 100 KB), "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        )
        argv = [
            PYTHON,
            __file__,
            "--child",
            "--cwd",
            str(repo),
            "--template",
            str(template),
            "--samples",
            str(samples),
        ]
        _report(json.loads(run(argv, env, "the in-process measurement").splitlines()[-1]))
        if args.callgrind:
            _callgrind(env, repo, template, (2, 12) if args.quick else (5, 25))
        load = os.getloadavg()
        print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
