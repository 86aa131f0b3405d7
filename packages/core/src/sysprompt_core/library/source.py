"""Where fragments come from: the interface the ``fragment:`` resolver reads through.

The core never reaches a database. The server gives a resolution a
:class:`FragmentSource` backed by its tables; tests, the client and the shipped
defaults use :class:`MemorySource`. A source answers, for a fragment name, its live
variants (a deleted variant is not there), each the newest version of that variant,
and parses fragment texts (so a server can keep parsed fragments between requests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from sysprompt_core import template as engine
from sysprompt_core.library.names import fragment_name_check
from sysprompt_core.library.overrides import DEFAULT_STRATEGY, Strategy
from sysprompt_core.library.variants import VariantKey


@dataclass(frozen=True)
class FragmentVariant:
    """The newest version of one variant of a fragment, with its settings."""

    name: str
    key: VariantKey
    version: int
    text: str
    compress: bool = False
    defaults: Mapping[str, str] = field(default_factory=dict, hash=False)
    strategy: Strategy = DEFAULT_STRATEGY

    def __post_init__(self) -> None:
        fragment_name_check(self.name)
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))


@dataclass(frozen=True)
class FragmentUse:
    """Which variant of which fragment a resolution used (the preview lists them)."""

    name: str
    provider: str | None
    model: str | None
    version: int

    @classmethod
    def of(cls, variant: FragmentVariant) -> FragmentUse:
        return cls(variant.name, variant.key.provider, variant.key.model, variant.version)

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "provider": self.provider,
            "model": self.model,
            "version": self.version,
        }


class FragmentSource(Protocol):
    """The library as a resolution sees it."""

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        """The live variants of fragment ``name`` by key; empty when there is none."""
        ...

    def names(self) -> frozenset[str]:
        """Every fragment name that has at least one live variant (lint's vocabulary)."""
        ...

    def compile(self, source: str) -> engine.Template:
        """``source`` parsed: :func:`sysprompt_core.template.compile`, or the same from a
        cache that outlives one resolution (the server keeps one per process)."""
        ...


class MemorySource:
    """A :class:`FragmentSource` over variants held in memory."""

    __slots__ = ("_by_name",)

    def __init__(self, variants: Iterable[FragmentVariant] = ()) -> None:
        by_name: dict[str, dict[VariantKey, FragmentVariant]] = {}
        for variant in variants:
            by_name.setdefault(variant.name, {})[variant.key] = variant
        self._by_name = {name: MappingProxyType(table) for name, table in by_name.items()}

    def __repr__(self) -> str:
        return f"MemorySource({len(self._by_name)} fragments)"

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        return self._by_name.get(name, MappingProxyType({}))

    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    def compile(self, source: str) -> engine.Template:
        return engine.compile(source)
