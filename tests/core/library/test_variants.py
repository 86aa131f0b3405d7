"""Library §2.2: variant keys and the order in which variants are chosen."""

from __future__ import annotations

import pytest

from sysprompt_core.errors import InvalidVariantKey
from sysprompt_core.library.variants import (
    DEFAULT,
    VariantKey,
    choose_variant,
    variant_candidates,
)

P = VariantKey("anthropic")
PM = VariantKey("anthropic", "claude-sonnet-4-5")
OTHER = VariantKey("openai", "gpt-5")


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        ("Anthropic", "Claude Sonnet 4.5", ("anthropic", "claude-sonnet-4-5")),
        ("OpenAI", None, ("openai", None)),
        (None, None, (None, None)),
        (" open ai ", "GPT 5", ("open-ai", "gpt-5")),
    ],
)
def test_variant_key_when_valid_is_normalised(
    provider: str | None, model: str | None, expected: tuple[str | None, str | None]
) -> None:
    key = VariantKey(provider, model)
    assert (key.provider, key.model) == expected


@pytest.mark.parametrize(
    ("provider", "model", "message"),
    [
        (None, "gpt-5", "needs a provider"),
        ("--", None, "no letter or digit"),
        ("openai", "", "no letter or digit"),
    ],
)
def test_variant_key_when_invalid_is_refused(
    provider: str | None, model: str | None, message: str
) -> None:
    with pytest.raises(InvalidVariantKey, match=message):
        VariantKey(provider, model)


def test_variant_key_when_equal_after_normalising_is_one_key() -> None:
    assert VariantKey("OpenAI", "GPT 5") == VariantKey("openai", "gpt-5") == OTHER
    assert len({VariantKey("OpenAI", "GPT 5"), OTHER}) == 1
    assert str(OTHER) == "openai/gpt-5" and str(DEFAULT) == "—/—"


@pytest.mark.parametrize(
    ("available", "provider", "model", "chosen"),
    [
        ({PM, P, DEFAULT}, "anthropic", "claude-sonnet-4-5", PM),
        ({PM, P, DEFAULT}, "Anthropic", "Claude Sonnet 4.5", PM),
        ({P, DEFAULT}, "anthropic", "claude-sonnet-4-5", P),
        ({DEFAULT}, "anthropic", "claude-sonnet-4-5", DEFAULT),
        ({PM, P}, "anthropic", "claude-opus-4", P),
        ({PM, DEFAULT}, "anthropic", None, DEFAULT),
        ({PM, P, DEFAULT}, None, None, DEFAULT),
        ({PM, P, DEFAULT}, None, "claude-sonnet-4-5", DEFAULT),
        ({PM, P, DEFAULT}, "---", "claude-sonnet-4-5", DEFAULT),
        ({PM, P}, "anthropic", "", P),
        ({PM, P}, None, None, None),
        ({OTHER}, "anthropic", "gpt-5", None),
        (set(), "anthropic", "claude-sonnet-4-5", None),
        ([OTHER, DEFAULT], "OPENAI", "gpt 5", OTHER),
    ],
)
def test_choose_variant_when_available(
    available: set[VariantKey], provider: str | None, model: str | None, chosen: VariantKey | None
) -> None:
    assert choose_variant(available, provider, model) == chosen


@pytest.mark.parametrize(
    ("provider", "model", "candidates"),
    [
        ("anthropic", "claude-sonnet-4-5", (PM, P, DEFAULT)),
        ("anthropic", None, (P, DEFAULT)),
        (None, "gpt-5", (DEFAULT,)),
        (None, None, (DEFAULT,)),
    ],
)
def test_variant_candidates_when_context(
    provider: str | None, model: str | None, candidates: tuple[VariantKey, ...]
) -> None:
    assert variant_candidates(provider, model) == candidates
