"""DatabaseSource: the library as a resolution reads it — live variants only, the
newest version of each, one query per name, cached."""

from __future__ import annotations

import pytest
from pytest_django import DjangoAssertNumQueries

from sysprompt.library import services
from sysprompt.library.selectors import DatabaseSource, library_source
from sysprompt_core.library import FragmentSource, FragmentVariant, VariantKey, choose_variant
from tests.library.support import save

pytestmark = pytest.mark.django_db


def test_source_variants_are_the_newest_live_versions() -> None:
    save("core", "old default")
    save("core", "new default", defaults={"who": "me"}, strategy="prepend", compress=True)
    save("core", "claude", "anthropic")
    save("core", "sonnet", "anthropic", "claude-sonnet-4-5")
    save("core", "gone", "openai")
    services.variant_delete(name="core", provider="openai", author=None)

    variants = library_source().variants("core")

    assert dict(variants) == {
        VariantKey(): FragmentVariant(
            "core", VariantKey(), 2, "new default", True, {"who": "me"}, "prepend"
        ),
        VariantKey("anthropic"): FragmentVariant("core", VariantKey("anthropic"), 1, "claude"),
        VariantKey("anthropic", "claude-sonnet-4-5"): FragmentVariant(
            "core", VariantKey("anthropic", "claude-sonnet-4-5"), 1, "sonnet"
        ),
    }
    assert choose_variant(variants.keys(), "OpenAI", "gpt-5") == VariantKey()


def test_source_skips_a_deleted_variant_until_it_is_restored() -> None:
    save("env/git", "text")
    services.variant_delete(name="env/git", author=None)
    assert library_source().variants("env/git") == {}
    assert library_source().names() == frozenset()

    services.variant_restore(name="env/git", number=1, author=None)

    assert [v.version for v in library_source().variants("env/git").values()] == [3]


def test_source_names_lists_fragments_with_a_live_variant() -> None:
    save("core", "x")
    save("tools/shell", "y", "openai")
    save("gone", "z")
    services.variant_delete(name="gone", author=None)

    assert library_source().names() == frozenset({"core", "tools/shell"})


def test_source_reads_each_name_once(django_assert_num_queries: DjangoAssertNumQueries) -> None:
    save("core", "x")
    save("core", "y", "openai")
    source = library_source()

    with django_assert_num_queries(3):
        for _ in range(3):
            source.variants("core")
            source.variants("missing")
            source.names()


def test_source_is_fresh_per_resolution() -> None:
    first = library_source()
    assert first.variants("core") == {}
    save("core", "x")

    assert first.variants("core") == {}  # read before the save: cached
    assert library_source().variants("core") != {}
    assert library_source() is not library_source()


def test_source_is_a_fragment_source() -> None:
    source: FragmentSource = DatabaseSource()

    assert source.variants("Not A Name") == {}


def test_source_makes_a_variant_once_and_only_the_ones_looked_up() -> None:
    save("core", "first")
    save("core", "claude", "anthropic")
    variants = library_source().variants("core")

    first = variants[VariantKey()]
    save("core", "second")
    newer = library_source().variants("core")[VariantKey()]

    assert variants[VariantKey()] is first  # made once
    assert (first.version, first.text) == (1, "first")
    assert (newer.version, newer.text) == (2, "second")
    assert variants[VariantKey("anthropic")].text == "claude"


def test_source_variants_answer_as_a_read_only_mapping() -> None:
    save("core", "x")
    save("core", "y", "OpenAI", "GPT 5")
    variants = library_source().variants("core")

    assert len(variants) == 2
    assert set(variants) == {VariantKey(), VariantKey("openai", "gpt-5")}
    assert VariantKey("OpenAI", "GPT 5") in variants
    assert VariantKey("anthropic") not in variants
    stored: object = ("openai", "gpt-5")  # how the row is keyed inside
    assert stored not in variants  # only a VariantKey is a key
    assert variants.get(VariantKey("anthropic")) is None
    with pytest.raises(KeyError):
        variants[VariantKey("anthropic")]
