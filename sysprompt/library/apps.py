"""The library app: fragments with their variants' histories, shipped defaults, and the
agent hosts' instance overrides. Owns the process's cache of parsed texts (templates
and fragments alike: a text parses the same way whichever it is)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from django.apps import AppConfig
from django.core.signals import setting_changed

from sysprompt.conf import app_settings
from sysprompt_core.template.cache import ParsedTemplates


class LibraryConfig(AppConfig):
    name = "sysprompt.library"
    label = "library"
    verbose_name = "Prompt library"
    default_auto_field = "django.db.models.BigAutoField"

    def __init__(self, app_name: str, app_module: ModuleType | None) -> None:
        super().__init__(app_name, app_module)
        self._parsed: ParsedTemplates | None = None

    def ready(self) -> None:
        setting_changed.connect(self._settings_changed, dispatch_uid="library-parse-cache")

    @property
    def parsed_texts(self) -> ParsedTemplates:
        """The cache of parsed texts, bounded by ``SYSPROMPT["PARSE_CACHE_BYTES"]``:
        made on first use (the settings are read then, not at start-up, so that a bad
        setting is reported by the system check) and made afresh when the settings
        change (tests)."""
        if self._parsed is None:
            self._parsed = ParsedTemplates(max_bytes=app_settings().parse_cache_bytes)
        return self._parsed

    def _settings_changed(self, *, setting: str, **kwargs: Any) -> None:
        if setting == "SYSPROMPT":
            self._parsed = None
