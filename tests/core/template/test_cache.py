"""sysprompt_core.template.cache: parsed templates kept within a number of bytes."""

from __future__ import annotations

import gc
import tracemalloc

from sysprompt_core.template.cache import ParsedTemplates, retained_bytes

KIB = 1024
MIB = 1024 * KIB


def dense(seed: int, size: int = 256 * KIB) -> str:
    """A template of about ``size`` characters with a tag every few words (the kind
    that takes the most memory parsed), different for each ``seed``."""
    piece = f"Rule {seed}: [if prompt:cwd]in [prompt:cwd][else]anywhere[endif] [prompt:model].\n"
    return piece * (size // len(piece))


def test_cache_retained_stays_within_the_bound_for_40_large_templates() -> None:
    cache = ParsedTemplates(max_bytes=2 * MIB)
    seen = []
    for seed in range(40):
        cache.get(dense(seed, 64 * KIB))
        seen.append(cache.retained)

    assert max(seen) <= 2 * MIB
    assert 0 < len(cache) < 40  # the oldest were dropped, the newest kept
    assert cache.get(dense(39, 64 * KIB)) is cache.get(dense(39, 64 * KIB))


def test_cache_keeps_the_recently_used() -> None:
    one = retained_bytes(ParsedTemplates().get(dense(0, 16 * KIB)))
    cache = ParsedTemplates(max_bytes=3 * one)
    first = cache.get(dense(0, 16 * KIB))
    cache.get(dense(1, 16 * KIB))
    cache.get(dense(0, 16 * KIB))  # used again: now the most recent
    cache.get(dense(2, 16 * KIB))
    cache.get(dense(3, 16 * KIB))  # over the bound: the least recent (1) goes

    assert cache.get(dense(0, 16 * KIB)) is first
    assert len(cache) == 3 and cache.retained <= 3 * one


def test_cache_does_not_keep_a_template_larger_than_the_bound() -> None:
    cache = ParsedTemplates(max_bytes=64 * KIB)

    parsed = cache.get(dense(0))

    assert parsed.source == dense(0)
    assert (len(cache), cache.retained) == (0, 0)


def test_retained_bytes_counts_at_least_what_parsing_allocates() -> None:
    source = dense(7)
    gc.collect()
    tracemalloc.start()
    try:
        parsed = ParsedTemplates().get(source)
        allocated, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert retained_bytes(parsed) >= allocated > len(source)
