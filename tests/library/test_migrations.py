"""Migration 0002 fills in which shipped text each stored version started from, so the
flags of a library stored before it are right at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from sysprompt.library.selectors import text_digest, variant_current

BEFORE = [("library", "0001_initial")]


@pytest.fixture
def migrated_back() -> Iterator[Any]:
    """The models as of 0001 (the library migrated back); forward again afterwards."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    yield executor.loader.project_state(BEFORE).apps
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_migration_0002_fills_based_on_from_each_variant_s_history(migrated_back: Any) -> None:
    now = datetime.now(UTC)
    fragment = migrated_back.get_model("library", "Fragment").objects.create(
        name="core", created_at=now
    )
    versions = migrated_back.get_model("library", "FragmentVersion").objects
    history = [
        ("", 1, "Old core.", "default"),  # the installer's
        ("", 2, "Mine.", "user"),  # edited from it
        ("", 3, "Mine, again.", "import"),
        ("openai", 1, "Written by hand.", "user"),  # before anything shipped
    ]
    for provider, number, text, source in history:
        versions.create(
            fragment=fragment,
            provider=provider,
            number=number,
            text=text,
            source=source,
            created_at=now,
        )
    shipped = migrated_back.get_model("library", "ShippedDefault").objects
    for provider, text in (("", "Old core."), ("openai", "Shipped for openai.")):
        shipped.create(fragment=fragment, provider=provider, text=text, updated_at=now)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    core, openai = variant_current("core"), variant_current("core", "openai")
    assert core is not None and openai is not None
    assert (core.version, core.based_on) == (3, text_digest("Old core."))
    assert not core.newer_default  # edited, but nothing newer shipped since
    assert openai.based_on == "" and openai.newer_default
