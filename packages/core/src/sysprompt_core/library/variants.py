"""Variants of a fragment, and which one a conversation uses.

A fragment has a default variant ``VariantKey(None, None)`` and optional variants for a
provider ``VariantKey("anthropic", None)`` or a provider and a model
``VariantKey("openai", "gpt-5")``. Keys are normalised on construction
(:func:`~sysprompt_core.library.names.normalize_key`), so ``VariantKey("OpenAI",
"GPT 5")`` is ``VariantKey("openai", "gpt-5")``.

``choose_variant(available, provider, model)`` normalises the conversation's provider
P and model M and returns the first of (P, M), (P, —), (—, —) that is in
``available``; ``variant_candidates`` lists that order (for a caller that looks the
variants up itself).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sysprompt_core.errors import InvalidVariantKey
from sysprompt_core.library.names import normalize_key


def _key(what: str, text: str | None) -> str | None:
    if text is None:
        return None
    key = normalize_key(text)
    if not key:
        raise InvalidVariantKey(
            f"The {what} {text!r} has no letter or digit: a {what} is matched by its "
            "letters and digits (for example 'anthropic', 'openai', 'gpt-5')."
        )
    return key


@dataclass(frozen=True)
class VariantKey:
    """Which variant: ``provider`` and ``model`` normalised, ``None`` for "any"."""

    provider: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        provider = _key("provider", self.provider)
        model = _key("model", self.model)
        if model is not None and provider is None:
            raise InvalidVariantKey(
                f"The model variant {model!r} needs a provider: a variant is for a "
                "provider, or for a provider and one of its models."
            )
        object.__setattr__(self, "provider", provider)
        object.__setattr__(self, "model", model)

    def __str__(self) -> str:
        return "/".join(part or "—" for part in (self.provider, self.model))


DEFAULT = VariantKey()
"""The default variant (no provider, no model)."""


def variant_candidates(provider: str | None, model: str | None) -> tuple[VariantKey, ...]:
    """The variants to try, most specific first: (P, M), (P, —), (—, —).

    A provider or model that normalises to nothing counts as not given; a model without
    a provider matches no model variant.
    """
    p = normalize_key(provider) if provider is not None else ""
    m = normalize_key(model) if model is not None else ""
    if not p:
        return (DEFAULT,)
    if not m:
        return (VariantKey(p), DEFAULT)
    return (VariantKey(p, m), VariantKey(p), DEFAULT)


def choose_variant(
    available: Collection[VariantKey], provider: str | None, model: str | None
) -> VariantKey | None:
    """The first of (P, M), (P, —), (—, —) in ``available``, or ``None`` if none is."""
    for candidate in variant_candidates(provider, model):
        if candidate in available:
            return candidate
    return None
