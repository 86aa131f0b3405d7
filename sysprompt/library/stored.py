"""Fragment variants as the library's tables store them, each made once per process.

The query that reads the fragments a resolution includes (``selectors._live_variants``)
gives, for each live variant, its newest version as a :data:`VariantRow`.
:class:`StoredVariants` makes the :class:`~sysprompt_core.library.FragmentVariant` of a
row and keeps it, keyed by the whole row as read: a stored version never changes (the
histories are append-only) and the key holds its text and every setting, so what is
kept can only be the very variant again. Each construct of the same library finds its
fragments made already. Bounded, least recently used first out, safe to share between
threads (``functools.lru_cache``).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from sysprompt_core.library import FragmentVariant, VariantKey, check_strategy

VariantRow = tuple[Any, ...]
"""A variant's newest version as the query reads it: fragment name, provider and model
(normalised, ``""`` for any), number, text, compress, defaults (JSON text, as Django sets
the backends up) and strategy."""


def variant_of(row: VariantRow) -> FragmentVariant:
    """The variant a :data:`VariantRow` stores."""
    name, provider, model, number, text, compress, defaults, strategy = row
    key = VariantKey(provider or None, model or None)
    settings = (bool(compress), json_object(defaults), check_strategy(strategy))
    return FragmentVariant(name, key, number, text, *settings)


def json_object(value: object) -> dict[str, str]:
    """A JSON column as the cursor gives it: text (as Django sets the backends up)."""
    if value == "{}":  # nearly every version: no defaults
        return {}
    decoded = json.loads(value) if isinstance(value, str | bytes) else value
    return dict(decoded) if isinstance(decoded, dict) else {}


class StoredVariants:
    """The variants made from rows, kept by row (see the module docstring)."""

    def __init__(self, size: int) -> None:
        self.variant = functools.lru_cache(maxsize=size)(variant_of)

    def __repr__(self) -> str:
        return f"StoredVariants({self.variant.cache_info()})"
