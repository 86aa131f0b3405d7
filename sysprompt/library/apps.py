"""The library app: fragments with their variants' histories, shipped defaults, and the
agent hosts' instance overrides. Owns the process's caches of parsed fragment texts and
of the variants made from stored rows."""

from __future__ import annotations

from types import ModuleType

from django.apps import AppConfig

from sysprompt.library.stored import StoredVariants
from sysprompt_core.template.cache import ParsedTemplates

# Fragments are many and short: keep more of them parsed (and made from their rows)
# than root templates.
PARSED_FRAGMENTS = 256


class LibraryConfig(AppConfig):
    name = "sysprompt.library"
    label = "library"
    verbose_name = "Prompt library"
    default_auto_field = "django.db.models.BigAutoField"

    def __init__(self, app_name: str, app_module: ModuleType | None) -> None:
        super().__init__(app_name, app_module)
        self.parsed_fragments = ParsedTemplates(size=PARSED_FRAGMENTS)
        self.stored_variants = StoredVariants(size=PARSED_FRAGMENTS)
