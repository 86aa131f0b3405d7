"""The process's cache of parsed texts follows ``SYSPROMPT["PARSE_CACHE_BYTES"]`` and
is shared by root templates and fragments."""

from __future__ import annotations

from django.apps import apps
from pytest_django import Settings

from sysprompt.library.apps import LibraryConfig
from sysprompt.library.selectors import library_source
from sysprompt.prompts.rendering import parsed_template
from sysprompt_core.limits import DEFAULT_PARSE_CACHE_BYTES


def _cache_bound() -> int:
    config = apps.get_app_config("library")
    assert isinstance(config, LibraryConfig)
    return config.parsed_texts.max_bytes


def test_parse_cache_bound_is_the_setting(settings: Settings) -> None:
    settings.SYSPROMPT = {}
    assert _cache_bound() == DEFAULT_PARSE_CACHE_BYTES

    settings.SYSPROMPT = {"PARSE_CACHE_BYTES": 65_536}
    assert _cache_bound() == 65_536


def test_parse_cache_shared_by_templates_and_fragments(settings: Settings) -> None:
    settings.SYSPROMPT = {}
    text = "Shared [prompt:model]."

    assert parsed_template(text) is library_source().compile(text)
