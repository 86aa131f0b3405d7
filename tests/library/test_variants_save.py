"""variant_save: histories per variant, byte for byte, If-Match, and every refusal."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.errors import InvalidInput, TemplateTooLarge, VariantConflict
from sysprompt.library.models import Fragment, FragmentVersion
from sysprompt.library.selectors import variant_current
from sysprompt_core.library import TreeRecord
from tests.library.support import save

pytestmark = pytest.mark.django_db


def test_variant_save_numbers_versions_per_variant(author: User) -> None:
    saved = [
        save("core", "a", author=author),
        save("core", "b"),
        save("core", "c", "anthropic"),
        save("core", "d", "anthropic", "claude-sonnet-4-5"),
        save("core", "e", "anthropic"),
        save("env/git", "f"),
    ]

    assert [(s.provider, s.model, s.version) for s in saved] == [
        (None, None, 1),
        (None, None, 2),
        ("anthropic", None, 1),
        ("anthropic", "claude-sonnet-4-5", 1),
        ("anthropic", None, 2),
        (None, None, 1),
    ]
    assert saved[0].author == "author" and saved[1].author is None
    assert Fragment.objects.count() == 2


def test_variant_save_keeps_text_byte_for_byte() -> None:
    text = "  line\r\nnext\tline\u00a0é\n\n"

    state = save("core", text)

    assert state.text == text
    assert FragmentVersion.objects.get().text == text


def test_variant_save_normalises_provider_and_model() -> None:
    state = save("core", "x", "Anthropic", "Claude Sonnet 4.5")

    assert (state.provider, state.model) == ("anthropic", "claude-sonnet-4-5")
    assert variant_current("core", "ANTHROPIC", "claude sonnet 4.5") == state


def test_variant_save_stores_settings_and_source() -> None:
    state = save(
        "presets/reviewer",
        "Review [var:area].",
        compress=True,
        defaults={"area": "tests"},
        strategy="prepend",
        source="import",
    )

    assert (state.compress, state.defaults, state.strategy, state.source) == (
        True,
        {"area": "tests"},
        "prepend",
        "import",
    )
    assert state.edited and not state.deleted and not state.newer_default


def test_variant_save_etag_names_version_and_text() -> None:
    state = save("core", "text")

    digest = hashlib.sha256(b"text").hexdigest()[:16]
    assert state.etag == f'"1-{digest}"'


def test_variant_save_with_current_etag_wins() -> None:
    first = save("core", "one")

    second = save("core", "two", if_match=['"0-stale"', first.etag])

    assert second.version == 2


def test_variant_save_with_stale_etag_raises_conflict_with_current() -> None:
    first = save("core", "one")
    current = save("core", "two")

    with pytest.raises(VariantConflict) as raised:
        save("core", "three", if_match=[first.etag])

    assert raised.value.current == current
    assert "version 2" in str(raised.value) and current.etag in str(raised.value)
    assert FragmentVersion.objects.count() == 2


def test_variant_save_with_star_matches_any_state() -> None:
    assert save("core", "one", if_match=["*"]).version == 1
    assert save("core", "two", if_match=["*"]).version == 2


def test_variant_save_first_version_refuses_an_etag() -> None:
    other = save("core", "default variant")

    with pytest.raises(VariantConflict) as raised:
        save("core", "x", "openai", if_match=[other.etag])

    assert raised.value.current is None
    assert variant_current("core", "openai") is None


def test_variant_save_over_limit_raises_and_writes_nothing(settings: Settings) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 10}

    with pytest.raises(TemplateTooLarge, match="the limit is 10 bytes"):
        save("core", "é" * 6)

    assert save("core", "é" * 5).version == 1


INVALID: list[tuple[str, dict[str, Any], str, str]] = [
    ("name with capitals", {"name": "Env/Git"}, "name", "'env/git'"),
    ("name with a space", {"name": "tools/read file"}, "name", "'tools/read-file'"),
    ("name with ..", {"name": "env/../core"}, "name", "segment '..'"),
    ("empty name", {"name": ""}, "name", "empty"),
    ("name too long", {"name": "a" * 201}, "name", "more than 200"),
    ("leading slash", {"name": "/core"}, "name", "empty segment"),
    ("provider of dashes", {"provider": "--"}, "provider", "no letter or digit"),
    ("model without provider", {"model": "gpt-5"}, "model", "needs a provider"),
    ("model of dashes", {"provider": "openai", "model": "!!"}, "model", "no letter or digit"),
    ("provider too long", {"provider": "p" * 201}, "provider", "at most 200"),
    ("strategy replace", {"strategy": "replace"}, "strategy", "never removes"),
    ("strategy unknown", {"strategy": "merge"}, "strategy", '"append" or "prepend"'),
    ("compress not a bool", {"compress": "yes"}, "compress", "true or false"),
    ("defaults not an object", {"defaults": ["a"]}, "defaults", "object"),
    ("default not a string", {"defaults": {"area": 1}}, "defaults.area", "string"),
    ("default name bracket", {"defaults": {"a]": "x"}}, "defaults", "variable name"),
    ("source unknown", {"source": "robot"}, "source", "user, default, import"),
]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [case[1:] for case in INVALID],
    ids=[case[0] for case in INVALID],
)
def test_variant_save_refuses_invalid_input_naming_the_field(
    fields: dict[str, Any], field: str, message: str
) -> None:
    values: dict[str, Any] = {"name": "core", "text": "x", "author": None} | fields

    with pytest.raises(InvalidInput) as raised:
        save(**values)

    given = raised.value.field
    assert given == field or given.startswith(field + "."), given
    assert message in raised.value.message
    assert not FragmentVersion.objects.exists()


def test_variant_save_accepts_read_only_defaults() -> None:
    record = TreeRecord("core", None, None, "x", defaults={"who": "me"})

    assert save("core", "x", defaults=record.defaults).defaults == {"who": "me"}
