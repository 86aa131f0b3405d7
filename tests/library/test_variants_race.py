"""Concurrent saves on real connections (one per thread): numbers stay unique and
gapless, and with one If-Match exactly one writer wins."""

from __future__ import annotations

import pytest

from sysprompt.errors import VariantConflict
from sysprompt.library.models import FragmentVersion
from sysprompt.library.selectors import VariantState
from tests.library.support import run_together, save

WRITERS = 8


@pytest.mark.django_db(transaction=True)
def test_variant_save_concurrent_writers_all_land_numbered_in_turn() -> None:
    results = run_together(WRITERS, lambda i: save("core", f"writer {i}"))

    assert all(isinstance(result, VariantState) for result in results), results
    assert sorted(result.version for result in results) == list(range(1, WRITERS + 1))
    texts = FragmentVersion.objects.values_list("text", flat=True)
    assert sorted(texts) == sorted(f"writer {i}" for i in range(WRITERS))


@pytest.mark.django_db(transaction=True)
def test_variant_save_concurrent_if_match_lets_exactly_one_win() -> None:
    etag = save("core", "base").etag

    results = run_together(WRITERS, lambda i: save("core", f"writer {i}", if_match=[etag]))

    won = [result for result in results if isinstance(result, VariantState)]
    lost = [result for result in results if isinstance(result, VariantConflict)]
    assert len(won) == 1 and len(lost) == WRITERS - 1, results
    assert won[0].version == 2
    assert FragmentVersion.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_variant_save_concurrent_first_versions_of_new_fragments() -> None:
    results = run_together(WRITERS, lambda i: save("new/fragment", f"w{i}", f"p{i % 2}"))

    assert all(isinstance(result, VariantState) for result in results), results
    numbers = sorted((result.provider, result.version) for result in results)
    assert numbers == sorted((f"p{i % 2}", i // 2 + 1) for i in range(WRITERS))
