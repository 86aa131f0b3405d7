"""The upgrade test's steps that run inside the app, each in a process of its own with
``DATABASE_URL`` naming the database to work on (``wire.environment``):

* ``load FIXTURE`` — a fresh database taken to the fixture's migrations (their leaves,
  ``fixture/rows.json``), its tables filled with the fixture's rows and its sequences
  set (:func:`tests.upgrade.rows.rows_load`), through the historical models of those
  migrations: the database as today's code left it.
* ``answers FIXTURE OUT`` — after ``manage.py migrate``: which stored rows are gone or
  changed (:func:`tests.upgrade.rows.rows_kept`), then every recorded request again, in
  its order (:func:`replay`), written to ``OUT``.

The fixture maker (``make_fixture.py``) records the answers with :func:`replay` too, and
checks its own fixture by running ``load`` and ``answers`` under the old code.

Run from the app's checkout (its ``config`` is the settings read), as a script:
``python <this repo>/tests/upgrade/replay.py load <fixture>``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from pathlib import Path
from typing import Any

import httpx

UPGRADE = Path(__file__).resolve().parent
REPO = UPGRADE.parents[1]


def paths(app_root: Path) -> None:
    """``sys.path`` for a step run as a script: the app's checkout first (its ``config``
    and ``sysprompt``), this repository's ``tests`` last (the shared modules)."""
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != UPGRADE]
    sys.path.insert(0, str(app_root))
    if str(REPO) not in sys.path:
        sys.path.append(str(REPO))


def fixture_read(fixture: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``rows.json`` and ``answers.json`` of a fixture folder."""
    rows = json.loads((fixture / "rows.json").read_text())
    answers = json.loads((fixture / "answers.json").read_text())
    return rows, answers


def leaves(rows: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(app, name) for app, name in rows["leaves"]]


def load(fixture: Path) -> None:
    """The ``load`` step (see the module's description)."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from tests.upgrade.rows import rows_load

    rows, _ = fixture_read(fixture)
    targets = leaves(rows)
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    state = executor.loader.project_state(targets)
    rows_load(state.apps, connection, rows)


def answers(fixture: Path, out: Path) -> None:
    """The ``answers`` step (see the module's description)."""
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    from tests.upgrade.rows import rows_kept

    rows, recorded = fixture_read(fixture)
    state = MigrationLoader(connection).project_state(leaves(rows))
    changes = [dataclasses.asdict(change) for change in rows_kept(state.apps, connection, rows)]
    connection.close()
    replayed = replay(recorded["exchanges"], recorded["actors"])
    out.write_text(json.dumps({"rows": changes, "answers": replayed}, indent=1))


def replay(
    exchanges: Iterable[Mapping[str, Any]], actors: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Each exchange sent to the app in this process, in order: ``{"name", "answer"}``."""
    from django.core.wsgi import get_wsgi_application

    from tests.upgrade.wire import BASE_URL, Exchange, send, stopped_clock

    app = get_wsgi_application()
    warm_up()
    answered: list[dict[str, Any]] = []
    transport = httpx.WSGITransport(app=app)
    with httpx.Client(transport=transport, base_url=BASE_URL) as http, stopped_clock() as clock:
        for data in exchanges:
            exchange = Exchange.from_json(data)
            clock(exchange.at)
            if exchange.method == "CLIENT":
                answer = client_call(app, exchange, actors)
            else:
                answer = send(http, exchange, actors)
            answered.append({"name": exchange.name, "answer": answer})
    return answered


def warm_up() -> None:
    """What the app imports on its first request (the URLconf and every view, the
    PostgreSQL driver DRF looks for) and the Python client, imported before the clock
    stops: a C extension (psycopg) or a pydantic model (the provider SDKs') that starts
    while ``datetime`` is freezegun's misreads it."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the URLconf
    import_module("rest_framework.compat")
    import_module("sysprompt_client")


def client_call(
    app: Callable[..., Any],
    exchange: Any,
    actors: Mapping[str, str],
    transport: httpx.BaseTransport | None = None,
) -> dict[str, Any]:
    """The Python client's ``system_prompt(**exchange.body)`` for the exchange's actor,
    against the app in this process (through ``transport``, else straight); the result's
    fields (datetimes as ISO text)."""
    from sysprompt_client import Client
    from tests.upgrade.rows import encode

    transport = transport or httpx.WSGITransport(app=app)
    with Client(
        "http://127.0.0.1", actors[exchange.actor], transport=transport, retries=0
    ) as client:
        result = client.system_prompt(**exchange.body)
    fields = dataclasses.asdict(result)
    return {
        "result": {
            key: list(value) if isinstance(value, tuple) else encode(value)
            for key, value in fields.items()
        }
    }


def main(argv: list[str]) -> None:
    paths(Path.cwd())
    import django

    django.setup()
    command, fixture, *rest = argv
    if command == "load":
        load(Path(fixture))
    elif command == "answers":
        answers(Path(fixture), Path(rest[0]))
    else:
        raise SystemExit(f"unknown step {command!r}: load or answers")


if __name__ == "__main__":
    main(sys.argv[1:])
