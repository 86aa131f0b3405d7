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


@pytest.mark.django_db(transaction=True)
def test_migrating_to_gates_keeps_every_label_without_a_gate() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("releases", "0002_production_label")])
    old = executor.loader.project_state([("releases", "0002_production_label")]).apps
    old.get_model("releases", "Label").objects.create(
        name="staging",
        target={"release": 1},
        created_at="2026-01-01T00:00Z",
        updated_at="2026-01-01T00:00Z",
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert sorted(Label.objects.values_list("name", "target", "gate")) == [
        ("production", "latest", None),
        ("staging", {"release": 1}, None),
    ]
