"""The library app: fragments with their variants' histories, shipped defaults, and the
agent hosts' instance overrides. Owns the process's cache of parsed fragment texts."""

from __future__ import annotations

from types import ModuleType

from django.apps import AppConfig

from sysprompt_core.template.cache import ParsedTemplates

# Fragments are many and short: keep more of them parsed than root templates.
PARSED_FRAGMENTS = 256


class LibraryConfig(AppConfig):
    name = "sysprompt.library"
    label = "library"
    verbose_name = "Prompt library"
    default_auto_field = "django.db.models.BigAutoField"

    def __init__(self, app_name: str, app_module: ModuleType | None) -> None:
        super().__init__(app_name, app_module)
        self.parsed_fragments = ParsedTemplates(size=PARSED_FRAGMENTS)
