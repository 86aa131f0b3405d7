"""variant_delete and variant_restore: both add versions; nothing is overwritten."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import FragmentNotFound, InvalidInput, VariantConflict
from sysprompt.library import services
from sysprompt.library.models import FragmentVersion
from sysprompt.library.selectors import library_source, variant_current
from tests.library.support import save

pytestmark = pytest.mark.django_db


def test_variant_delete_adds_a_deleted_version_keeping_text_and_settings(author: User) -> None:
    save("core", "kept text", compress=True, strategy="prepend")

    state = services.variant_delete(name="core", author=author)

    assert (state.version, state.deleted, state.text) == (2, True, "kept text")
    assert (state.compress, state.strategy, state.author) == (True, "prepend", "author")
    assert variant_current("core") == state
    assert FragmentVersion.objects.filter(deleted=False).count() == 1


def test_variant_delete_hides_it_from_resolution_and_leaves_other_variants() -> None:
    save("core", "default")
    save("core", "claude", "anthropic")

    services.variant_delete(name="core", provider="anthropic", author=None)

    variants = library_source().variants("core")
    assert [str(key) for key in variants] == ["—/—"]
    assert library_source().names() == frozenset({"core"})


@pytest.mark.parametrize("deleted_first", [False, True])
def test_variant_delete_raises_not_found_without_a_live_variant(deleted_first: bool) -> None:
    save("core", "x")
    if deleted_first:
        services.variant_delete(name="core", author=None)

    name = "core" if deleted_first else "other"

    with pytest.raises(FragmentNotFound, match=f"'{name}'"):
        services.variant_delete(name=name, author=None)
    with pytest.raises(FragmentNotFound, match="'openai'"):
        services.variant_delete(name="core", provider="OpenAI", author=None)


def test_variant_delete_with_stale_etag_raises_conflict() -> None:
    first = save("core", "one")
    save("core", "two")

    with pytest.raises(VariantConflict):
        services.variant_delete(name="core", author=None, if_match=[first.etag])

    current = variant_current("core")
    assert current is not None and not current.deleted


def test_variant_save_brings_a_deleted_variant_back() -> None:
    save("core", "one")
    deleted = services.variant_delete(name="core", author=None)

    state = save("core", "again", if_match=[deleted.etag])

    assert (state.version, state.deleted) == (3, False)
    assert library_source().variants("core")


def test_variant_restore_adds_the_old_version_as_newest(author: User) -> None:
    save("core", "one", defaults={"who": "me"})
    save("core", "two")
    services.variant_delete(name="core", author=None)

    state = services.variant_restore(name="core", number=1, author=author)

    assert (state.version, state.text, state.defaults) == (4, "one", {"who": "me"})
    assert (state.deleted, state.source, state.author) == (False, "user", "author")
    assert list(FragmentVersion.objects.order_by("number").values_list("text", flat=True)) == [
        "one",
        "two",
        "two",
        "one",
    ]


def test_variant_restore_refuses_an_unknown_number() -> None:
    save("core", "one")

    with pytest.raises(InvalidInput) as raised:
        services.variant_restore(name="core", number=7, author=None)

    assert raised.value.field == "number" and "1 to 1" in raised.value.message
    with pytest.raises(FragmentNotFound):
        services.variant_restore(name="missing", number=1, author=None)


def test_variant_restore_with_stale_etag_raises_conflict() -> None:
    first = save("core", "one")
    save("core", "two")

    with pytest.raises(VariantConflict):
        services.variant_restore(name="core", number=1, author=None, if_match=[first.etag])
