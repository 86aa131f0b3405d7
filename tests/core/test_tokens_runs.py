"""Token counts of long runs of whitespace (issue 31, point 3).

tiktoken's pre-tokenizer matches a stretch of whitespace that ends a run with a
backtracking pattern (``\\s+(?!\\S)``), which fails past about 1,000,000 characters with
a Rust panic (``pyo3_runtime.PanicException``, a ``BaseException``): sixteen variables of
65,000 spaces side by side were enough to end a server's worker. The counter cuts such
stretches into bounded parts whose counts add up exactly, and makes a panic a failed
count."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sysprompt_core import tokens
from sysprompt_core.tokens import TokenCounter, chunks, count, encoding

ATTACK = "Values: " + " " * 65_000 * 16 + "end."
"""Sixteen ``[var:…]`` values of 65,000 spaces side by side, as a prompt renders them."""

MODELS = {"o200k_base": "gpt-4o", "cl100k_base": "gpt-4"}

WHITESPACE = [" ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\xa0", "\u2003"]
WHITESPACE += ["\u2028", "\u3000", "\x1c"]  # \x1c: Python's whitespace, not the encodings'
WORDS = [
    "a",
    "Word",
    "ABC",
    "!",
    "...",
    "/",
    "'s",
    "1234",
    "中文",
    "🚀",
    "é",
    "x!",
    "<|endoftext|>",
]


def test_tiktoken_alone_panics_on_the_attacks_run() -> None:
    """The attack is real: tiktoken itself, in a process of its own, panics."""
    script = (
        "import sys\n"
        "from sysprompt_core.tokens import encoding\n"
        "try:\n"
        "    encoding('o200k_base').encode_ordinary(sys.stdin.read())\n"
        "except BaseException as exc:\n"
        "    print(type(exc).__module__, type(exc).__name__, isinstance(exc, Exception))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=ATTACK,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )

    assert done.stdout.split() == ["pyo3_runtime", "PanicException", "False"]


@pytest.mark.parametrize("name", list(MODELS))
def test_count_of_the_attack_is_exact(name: tokens.Encoding) -> None:
    """Checked piece by piece against tiktoken's own BPE, without its pattern: "Values",
    ":", the spaces but the last (one piece), " end", "."."""
    bpe = encoding(name)
    spaces = " " * (65_000 * 16)  # of 65,000 × 16 + 1, the last one goes with "end"
    expected = (
        len(bpe.encode_ordinary("Values:"))
        + len(bpe._encode_single_piece(spaces.encode()))
        + len(bpe.encode_ordinary(" end."))
    )

    counted = TokenCounter().count(ATTACK, provider="openai", model=MODELS[name])

    assert (counted.tokens, counted.failure) == (expected, None)


def test_count_of_the_attack_without_cuts_is_a_failed_count_not_a_panic() -> None:
    """With no whitespace cut (a run limit above the run), tiktoken does panic: the
    count fails, and says why; the process goes on."""
    counted = TokenCounter(run=10**7).count(ATTACK, provider="openai", model="gpt-4o")

    assert counted.tokens is None
    assert counted.failure is not None and "tiktoken failed on a part of" in counted.failure
    assert counted.exact is True  # what it would have been
    assert (counted.label(), counted.short) == ("tokens unavailable", "—")
    assert counted.note.startswith("unavailable: tiktoken failed")
    assert count("still counting", provider="openai", model="gpt-4o").tokens == 2


@pytest.mark.parametrize(
    "text",
    [
        ATTACK,
        "\n" + "\t" * 1_100_000,
        "x" + " \t" * 550_000 + "y",
        "a\n\n" + "\u3000 \xa0" * 370_000 + "!",
        "x" + " " * 1000 + "\n" + " " * 1_100_000 + "y",
    ],
    ids=["spaces", "tabs", "space-tab", "unicode-spaces", "two-runs"],
)
def test_parts_never_hold_a_run_tiktoken_would_fail_on(text: str) -> None:
    for name, model in MODELS.items():
        counted = TokenCounter().count(text, provider="openai", model=model)
        assert counted.failure is None, name
        assert counted.tokens is not None and counted.tokens > 0
    for part in chunks(text):
        tail = re.search(r"[^\r\n\S\x1c-\x1f]*\Z", part)
        assert tail is not None and len(tail.group()) <= 2 * tokens.RUN_CHARS


def whitespace_runs() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=60).map("".join)


@settings(max_examples=500, deadline=None)
@example(parts=[" \t   \t "], size=11, run=2, name="cl100k_base")  # merges across two cuts
@example(parts=["x", " \t" * 40, "y"], size=5, run=8, name="o200k_base")  # cuts moved
@example(parts=["!", "\n" * 3, " " * 300, "a"], size=3, run=128, name="o200k_base")
@given(
    parts=st.lists(st.one_of(whitespace_runs(), st.sampled_from(WORDS)), max_size=40),
    size=st.integers(min_value=1, max_value=40),
    run=st.integers(min_value=1, max_value=64),
    name=st.sampled_from(list(MODELS)),
)
def test_count_with_runs_cut_equals_the_whole(
    parts: list[str], size: int, run: int, name: tokens.Encoding
) -> None:
    """Texts tiktoken counts whole, safely, cut with a low run limit: the sum is the
    whole's count."""
    text = "".join(parts)

    counted = TokenCounter(chunk=size, run=run).count(text, provider="openai", model=MODELS[name])

    assert "".join(chunks(text, size, run)) == text
    assert counted.tokens == len(encoding(name).encode_ordinary(text))
