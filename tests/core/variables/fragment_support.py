"""Helpers for the fragment tests: libraries in memory, and a source that counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from sysprompt_core.library import FragmentVariant, MemorySource, VariantKey
from sysprompt_core.variables import Resolution, ResolveContext, ResolverOptions, resolve_prompt


def variant(
    name: str,
    text: str,
    provider: str | None = None,
    model: str | None = None,
    *,
    version: int = 1,
    compress: bool = False,
) -> FragmentVariant:
    return FragmentVariant(name, VariantKey(provider, model), version, text, compress=compress)


def library(texts: Mapping[str, str], *extra: FragmentVariant) -> MemorySource:
    """Default variants of ``texts`` (name → text), and ``extra`` variants."""
    return MemorySource([*(variant(name, text) for name, text in texts.items()), *extra])


class CountingSource(MemorySource):
    """A :class:`MemorySource` that counts the look-ups of each name."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        super().__init__(variant(name, text) for name, text in texts.items())
        self.lookups: Counter[str] = Counter()

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        self.lookups[name] += 1
        return super().variants(name)


def render(
    template: str,
    source: MemorySource | None,
    *,
    cwd: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    tools: frozenset[str] = frozenset(),
    variables: Mapping[str, str] | None = None,
    options: ResolverOptions | None = None,
) -> Resolution:
    context = ResolveContext(
        cwd=cwd,
        model=model,
        provider=provider,
        tools=tools,
        variables=variables or {},
        library=source,
        options=options or ResolverOptions(allowed_roots=()),
    )
    return resolve_prompt(template, context)
