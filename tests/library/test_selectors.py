"""The variant reads: current state with flags, histories, the fragment list."""

from __future__ import annotations

import pytest

from sysprompt.errors import InvalidInput
from sysprompt.library import services
from sysprompt.library.selectors import (
    fragments_list,
    variant_current,
    variant_version,
    variant_versions,
)
from tests.library.support import save

pytestmark = pytest.mark.django_db


def test_variant_current_is_none_without_versions() -> None:
    save("core", "x")

    assert variant_current("core", "openai") is None
    assert variant_current("missing") is None


def test_variant_current_shows_a_deleted_newest_version() -> None:
    save("core", "x")
    services.variant_delete(name="core", author=None)

    state = variant_current("core")

    assert state is not None and state.deleted and state.version == 2 and state.text == "x"


def test_variant_versions_are_newest_first_and_page_with_before() -> None:
    for text in "abcd":
        save("core", text)
    save("core", "other variant", "openai")

    assert [v.number for v in variant_versions("core")] == [4, 3, 2, 1]
    assert [v.text for v in variant_versions("core", before=3)] == ["b", "a"]
    version = variant_version("core", None, None, 2)
    assert version is not None and version.text == "b"
    assert variant_version("core", "openai", None, 2) is None


def test_fragments_list_sorts_names_and_variants_default_first() -> None:
    save("tools/shell", "s")
    save("core", "c", "openai", "gpt-5")
    save("core", "c", "openai")
    save("core", "c", "anthropic")
    save("core", "c")
    save("core", "c2")
    save("env/git", "g")

    listed = fragments_list()

    assert [f.name for f in listed] == ["core", "env/git", "tools/shell"]
    core = listed[0].variants
    assert [(v.provider, v.model, v.version) for v in core] == [
        (None, None, 2),
        ("anthropic", None, 1),
        ("openai", None, 1),
        ("openai", "gpt-5", 1),
    ]


def test_fragments_list_keeps_deleted_variants_with_their_flag() -> None:
    save("core", "x")
    services.variant_delete(name="core", author=None)

    [core] = fragments_list()

    assert [v.deleted for v in core.variants] == [True]


@pytest.mark.parametrize(
    ("search", "names"),
    [
        ("GIT", ["env/git"]),
        ("shell", ["core", "tools/shell"]),  # core's anthropic variant mentions it
        ("nothing here", []),
        ("old text", []),  # only the current text counts
    ],
)
def test_fragments_list_search_matches_name_or_current_text(search: str, names: list[str]) -> None:
    save("env/git", "Branch rules.")
    save("core", "Be brief.")
    save("core", "Use the Shell tool.", "anthropic")
    save("tools/shell", "old text")
    save("tools/shell", "Quote paths.")

    listed = fragments_list(search=search)

    assert [f.name for f in listed] == names
    if names == ["core", "tools/shell"]:
        assert len(listed[0].variants) == 2  # the whole fragment, not only the match


@pytest.mark.parametrize(
    ("provider", "model", "field"), [("--", None, "provider"), (None, "x", "model")]
)
def test_variant_current_refuses_a_key_that_cannot_be_one(
    provider: str | None, model: str | None, field: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        variant_current("core", provider, model)

    assert raised.value.field == field
