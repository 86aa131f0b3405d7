"""The catalog of variables, as plain data for the API and the editor's buttons."""

from __future__ import annotations

from typing import TypedDict

from sysprompt_core.variables.registry import Registry, default_registry


class CatalogEntry(TypedDict):
    type: str
    name: str
    description: str
    dynamic: bool


def variable_catalog(registry: Registry | None = None) -> list[CatalogEntry]:
    """Every variable a template can use; a dynamic type appears once, with a
    placeholder name (``file:<path>``, ``tool:<name>``, ``var:<name>``,
    ``fragment:<name>``)."""
    chosen = default_registry() if registry is None else registry
    return [
        CatalogEntry(
            type=info.type, name=info.name, description=info.description, dynamic=info.dynamic
        )
        for info in chosen.catalog()
    ]
