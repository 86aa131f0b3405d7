"""Releases §2: the migrations give an existing installation production → latest."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from sysprompt.releases.models import Label, LabelMove


@pytest.fixture
def without_releases() -> Iterator[None]:
    executor = MigrationExecutor(connection)
    executor.migrate([("releases", None)])
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_migrating_an_existing_install_creates_production_following_latest(
    without_releases: None,
) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    [production] = Label.objects.all()
    assert (production.name, production.target, production.protected) == (
        "production",
        "latest",
        True,
    )
    [created] = LabelMove.objects.all()
    assert (created.from_target, created.to_target) == (None, "latest")
