"""Issue 33's upgrade with no step: a database filled by the code deployments ran before
named prompts (``fixture/``, made by ``make_fixture.py`` at commit ddb9971, every table
with rows) is migrated by this code's ``manage.py migrate`` and answers every request of
today's clients as it did, on the suite's database (SQLite, or PostgreSQL with
``DATABASE_URL``).

The test works on a database of its own, beside the suite's test database (which it
never touches): an empty SQLite file, or a PostgreSQL database it creates and drops.
Each step is a process of its own, as an operator's would be: ``replay.py load`` (the
fixture's migrations, then its rows and sequences), ``manage.py migrate`` (the upgrade),
``replay.py answers`` (which stored rows the upgrade lost or changed, then every
recorded request again, each at the instant it was recorded). What may differ is listed
once, in ``compare.DIFFERENCES``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from django.db.migrations.loader import MigrationLoader
from psycopg import sql

from tests.upgrade import wire
from tests.upgrade.compare import differences, row_differences
from tests.upgrade.rows import tables_of

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixture"
REPLAY = Path(__file__).resolve().parent / "replay.py"
STEP_TIMEOUT = 600


def fixture() -> tuple[dict[str, Any], dict[str, Any]]:
    rows = json.loads((FIXTURE / "rows.json").read_text())
    answers = json.loads((FIXTURE / "answers.json").read_text())
    return rows, answers


@pytest.fixture
def database(tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of the suite's kind, dropped afterwards."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp_path / 'upgraded.sqlite3'}"
        return
    name = f"test_sysprompt_upgrade_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as server:
        server.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        server.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(url, autocommit=True) as server:
            server.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def step(env: dict[str, str], *command: str) -> None:
    done = subprocess.run(
        [sys.executable, *command],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
    )
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"


def upgraded(database: str, folder: Path) -> dict[str, Any]:
    """The fixture loaded into ``database``, upgraded, asked again: ``{"rows", "answers"}``."""
    env = wire.environment(os.environ, database)
    out = folder / "replayed.json"
    step(env, str(REPLAY), "load", str(FIXTURE))
    step(env, "manage.py", "migrate", "--noinput")
    step(env, str(REPLAY), "answers", str(FIXTURE), str(out))
    replayed: dict[str, Any] = json.loads(out.read_text())
    return replayed


def test_upgrade_keeps_every_row_and_answers_as_before(database: str, tmp_path: Path) -> None:
    _, recorded = fixture()

    replayed = upgraded(database, tmp_path)

    lost = row_differences(replayed["rows"])
    changed = differences(recorded["answers"], replayed["answers"])
    assert not lost and not changed, "\n".join(
        ["Stored rows the upgrade lost or changed:", *lost]
        + ["Answers that changed (see compare.DIFFERENCES):", *changed]
    )


def test_fixture_has_rows_in_every_table_of_its_migrations() -> None:
    rows, _ = fixture()
    state = MigrationLoader(None, ignore_no_migrations=True).project_state(
        [(app, name) for app, name in rows["leaves"]]
    )

    tables = set(tables_of(state.apps))

    assert set(rows["tables"]) == tables
    assert [table for table, content in rows["tables"].items() if not content["rows"]] == []
