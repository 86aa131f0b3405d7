"""Every table's rows as database-agnostic JSON, and back: what the upgrade test's fixture
holds (``fixture/rows.json``) and how it is put back into a database at its schema.

Both sides use the models of one migration state: the fixture maker the live models of
the old code (``django.apps.apps``), the test the historical models of the same
migrations (``MigrationLoader(...).project_state(leaves).apps``), so the new code's
models never touch the old schema. Pipeline:

* :func:`rows_dump` — every concrete table of ``apps`` (auto-created many-to-many
  tables included, a proxy's table once): its columns (the fields' ``attname``) and its
  rows by primary key, each value through :func:`encode` (datetimes as ISO text, UUIDs
  as text, JSON as JSON); plus the next id each table with an auto-incremented key
  would hand out (:func:`sequences_read`), so ids the upgraded database gives continue
  where the old one's would have.
* :func:`rows_load` — empties those tables (the migrations' own rows go), inserts the
  rows through the same models (:func:`decode`), all in one transaction (foreign keys
  are checked at its end on SQLite and PostgreSQL), and sets the sequences.
* :func:`rows_kept` — after the upgrade, which stored rows are gone or changed: the
  dumped rows, restricted to the columns that still exist, against what the tables hold
  now (as multisets: a changed value is a row missing and a row added).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.apps.registry import Apps
from django.core.management.color import no_style
from django.db import models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

Row = list[Any]


def tables_of(apps: Apps) -> dict[str, type[models.Model]]:
    """Every table of ``apps`` (concrete models, auto-created ones included) → its model."""
    found: dict[str, type[models.Model]] = {}
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        if meta.proxy or not meta.managed or meta.db_table in found:
            continue
        found[meta.db_table] = model
    return dict(sorted(found.items()))


def columns_of(model: type[models.Model]) -> list[str]:
    """The model's concrete fields, by ``attname`` (a foreign key's ``…_id``)."""
    return [field.attname for field in model._meta.concrete_fields]


def encode(value: Any) -> Any:
    """A stored value as JSON: datetimes, dates and times as ISO text, UUIDs and decimals
    as text, bytes as base64 text; everything else (JSON fields included) as it is."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | Decimal):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode()
    return value


def decode(model_field: models.Field[Any, Any], value: Any) -> Any:
    """:func:`encode` undone for ``model_field``."""
    if value is None:
        return None
    if isinstance(model_field, models.DateTimeField):
        return dt.datetime.fromisoformat(value)
    if isinstance(model_field, models.DateField):
        return dt.date.fromisoformat(value)
    if isinstance(model_field, models.TimeField):
        return dt.time.fromisoformat(value)
    if isinstance(model_field, models.UUIDField):
        return uuid.UUID(value)
    if isinstance(model_field, models.DecimalField):
        return Decimal(value)
    if isinstance(model_field, models.BinaryField):
        return base64.b64decode(value)
    return value


def _read(model: type[models.Model], columns: Sequence[str]) -> list[Row]:
    rows = model._base_manager.order_by().values_list(*columns)
    return sorted(([encode(value) for value in row] for row in rows), key=_key)


def rows_dump(apps: Apps, connection: BaseDatabaseWrapper) -> dict[str, Any]:
    """Every table of ``apps``: ``{"model", "columns", "rows"}``, and the sequences."""
    tables: dict[str, Any] = {}
    for table, model in tables_of(apps).items():
        columns = columns_of(model)
        tables[table] = {
            "model": model._meta.label,
            "columns": columns,
            "rows": _read(model, columns),
        }
    return {"tables": tables, "sequences": sequences_read(connection, tables_of(apps))}


def _auto_key(model: type[models.Model]) -> str | None:
    """The column of the model's auto-incremented primary key, if it has one."""
    key = model._meta.pk
    if isinstance(key, models.AutoField | models.BigAutoField | models.SmallAutoField):
        return key.column
    return None


def sequences_read(
    connection: BaseDatabaseWrapper, tables: Mapping[str, type[models.Model]]
) -> dict[str, int]:
    """The last id each table's sequence handed out (0: none yet), for the tables with an
    auto-incremented key."""
    keyed = {table: column for table, model in tables.items() if (column := _auto_key(model))}
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name, seq FROM sqlite_sequence")
            given = {name: int(seq) for name, seq in cursor.fetchall()}
            return {table: given.get(table, 0) for table in keyed}
        values: dict[str, int] = {}
        for table, column in keyed.items():
            cursor.execute(
                "SELECT last_value, is_called FROM "
                + connection.ops.quote_name(_pg_sequence(cursor, table, column))
            )
            last, called = cursor.fetchone()
            values[table] = int(last) if called else 0
        return values


def _pg_sequence(cursor: Any, table: str, column: str) -> str:
    cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column])
    name: str = cursor.fetchone()[0]
    return name.split(".", 1)[-1].strip('"')


def sequences_set(
    connection: BaseDatabaseWrapper,
    tables: Mapping[str, type[models.Model]],
    sequences: Mapping[str, int],
) -> None:
    """Each table's sequence at ``sequences[table]``: the next id is one more."""
    keyed = {table: column for table, model in tables.items() if (column := _auto_key(model))}
    with connection.cursor() as cursor:
        for table, column in keyed.items():
            last = sequences.get(table, 0)
            if connection.vendor == "sqlite":
                cursor.execute("DELETE FROM sqlite_sequence WHERE name = %s", [table])
                if last:
                    cursor.execute(
                        "INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, last]
                    )
                continue
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence(%s, %s), %s, %s)",
                [table, column, max(last, 1), last > 0],
            )


def rows_load(apps: Apps, connection: BaseDatabaseWrapper, dumped: Mapping[str, Any]) -> None:
    """The dumped rows in place of whatever the tables of ``apps`` hold, in one
    transaction; then the sequences. ``apps`` are a migration state's historical models:
    their ``auto_now`` and ``auto_now_add`` are switched off, so stored times stay."""
    tables = tables_of(apps)
    _clocks_stopped(tables.values())
    missing = sorted(set(dumped["tables"]) - set(tables))
    assert not missing, f"tables of the fixture that this migration state lacks: {missing}"
    with transaction.atomic(using=connection.alias):
        with connection.cursor() as cursor:
            for statement in connection.ops.sql_flush(no_style(), list(tables)):
                cursor.execute(statement)
        for table, content in dumped["tables"].items():
            model = tables[table]
            by_name = {each.attname: each for each in model._meta.concrete_fields}
            objects = [
                model(
                    **{
                        column: decode(by_name[column], value)
                        for column, value in zip(content["columns"], row, strict=True)
                    }
                )
                for row in content["rows"]
            ]
            model._base_manager.using(connection.alias).bulk_create(objects)
    sequences_set(connection, tables, dumped["sequences"])


def _clocks_stopped(tables: Iterable[type[models.Model]]) -> None:
    for model in tables:
        for each in model._meta.concrete_fields:
            if isinstance(each, models.DateField | models.TimeField):
                each.auto_now = each.auto_now_add = False


@dataclass
class TableChange:
    """What became of one table's stored rows, on the ``columns`` that still exist: rows
    gone (or changed: the old values), rows that are new (or changed: the new values),
    columns and the table itself gone."""

    table: str
    columns: list[str] = field(default_factory=list)
    gone: list[Row] = field(default_factory=list)
    added: list[Row] = field(default_factory=list)
    columns_gone: list[str] = field(default_factory=list)
    table_gone: bool = False

    def __bool__(self) -> bool:
        return bool(self.gone or self.added or self.columns_gone or self.table_gone)


def rows_kept(
    apps: Apps, connection: BaseDatabaseWrapper, dumped: Mapping[str, Any]
) -> list[TableChange]:
    """For each dumped table, its rows compared with what the database holds now, on the
    columns that still exist (read through the dump's own models, so values convert as
    they did); only the tables where something differs."""
    tables = tables_of(apps)
    with connection.cursor() as cursor:
        present = set(connection.introspection.table_names(cursor))
        changes: list[TableChange] = []
        for table, content in dumped["tables"].items():
            change = TableChange(table)
            if table not in present:
                change.table_gone = True
                changes.append(change)
                continue
            description = connection.introspection.get_table_description(cursor, table)
            existing = {column.name for column in description}
            by_attname = {each.attname: each.column for each in tables[table]._meta.concrete_fields}
            kept = [column for column in content["columns"] if by_attname[column] in existing]
            change.columns = kept
            change.columns_gone = [column for column in content["columns"] if column not in kept]
            indexes = [content["columns"].index(column) for column in kept]
            before = Counter(_key([row[index] for index in indexes]) for row in content["rows"])
            now = Counter(_key(row) for row in _read(tables[table], kept))
            change.gone = [_row(key) for key in sorted((before - now).elements())]
            change.added = [_row(key) for key in sorted((now - before).elements())]
            if change:
                changes.append(change)
    return changes


def _key(row: Iterable[Any]) -> str:
    """A row as canonical JSON (a JSON object's keys sorted: PostgreSQL's ``jsonb`` keeps
    no order)."""
    return json.dumps(list(row), sort_keys=True)


def _row(key: str) -> Row:
    value: Row = json.loads(key)
    return value
