"""The upgrade test's comparison: every difference is reported unless THE table allows
it, with its kind (a value changed, a field added, a field gone, rows lost)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.upgrade.compare import Difference, differences, row_differences

TABLE = (
    Difference("get_thing", "json/updated_at", "volatile", "a clock"),
    Difference("get_*", "json/results/*/prompt", "added", "a new field"),
    Difference("list", "json/**/label", "changed", "renamed on purpose"),
    Difference("rows:things", "+", "added", "new rows"),
    Difference("rows:labels", "protected", "changed", "moved elsewhere"),
    Difference("get_named", "json/**/prompt", "added", "a new field", value="default"),
)


def answered(name: str, body: Any) -> list[dict[str, Any]]:
    return [{"name": name, "answer": {"status": 200, "json": body}}]


@pytest.mark.parametrize(
    ("name", "before", "after", "reported"),
    [
        ("get_thing", {"updated_at": "1"}, {"updated_at": "2"}, []),
        ("get_thing", {"updated_at": "1"}, {}, ['get_thing: json/updated_at: "1" → (absent)']),
        ("get_thing", {}, {"updated_at": "2"}, ['get_thing: json/updated_at: (absent) → "2"']),
        ("get_other", {"id": 1}, {"id": 2}, ["get_other: json/id: 1 → 2"]),
        ("get_other", {"id": 1}, {"id": "1"}, ['get_other: json/id: 1 → "1"']),
        ("get_x", {"results": [{"a": 1}]}, {"results": [{"a": 1, "prompt": "default"}]}, []),
        (
            "get_x",
            {"results": [{"prompt": "a"}]},
            {"results": [{"prompt": "b"}]},
            ['get_x: json/results/0/prompt: "a" → "b"'],
        ),
        ("get_x", {"results": [1]}, {"results": [1, 2]}, ["get_x: json/results: [1] → [1, 2]"]),
        ("list", {"a": {"b": {"label": "x"}}}, {"a": {"b": {}}}, []),
        ("get_text", {"t": '{"a": 1, "b": 2}'}, {"t": '{"b": 2, "a": 1}'}, []),
        ("get_text", {"t": '{"a": 1}'}, {"t": '{"a": 2}'}, ["get_text: json/t/(json)/a: 1 → 2"]),
        ("get_text", {"t": "one"}, {"t": "two"}, ['get_text: json/t: "one" → "two"']),
        ("get_named", {"a": [{}]}, {"a": [{"prompt": "default"}]}, []),
        (
            "get_named",
            {"a": [{}]},
            {"a": [{"prompt": "other"}]},
            ['get_named: json/a/0/prompt: (absent) → "other"'],
        ),
    ],
)
def test_differences_reports_what_the_table_does_not_allow(
    name: str, before: Any, after: Any, reported: list[str]
) -> None:
    assert differences(answered(name, before), answered(name, after), TABLE) == reported


def test_differences_refuses_another_list_of_requests() -> None:
    found = differences(answered("a", {}), answered("b", {}), TABLE)

    assert found == ["the replay did not make the recorded requests, in their order"]


def change(table: str, **fields: Any) -> dict[str, Any]:
    return {
        "table": table,
        "columns": ["id", "name"],
        "gone": [],
        "added": [],
        "columns_gone": [],
        "table_gone": False,
        **fields,
    }


@pytest.mark.parametrize(
    ("changed", "reported"),
    [
        (change("things", added=[[9, "new"]]), []),
        (change("others", added=[[9, "new"]]), ['rows:others: a row is new: [9, "new"]']),
        (change("things", gone=[[1, "old"]]), ['rows:things: a row is gone: [1, "old"]']),
        (
            change("things", gone=[[1, "old"]], added=[[1, "new"]]),
            ['rows:things: the row id=1 changed: name: "old" → "new"'],
        ),
        (change("labels", columns_gone=["protected"]), []),
        (change("labels", columns_gone=["name"]), ["rows:labels: the column name is gone"]),
        (change("things", table_gone=True), ["rows:things: the table is gone"]),
    ],
)
def test_row_differences_reports_rows_lost_or_changed(
    changed: dict[str, Any], reported: list[str]
) -> None:
    assert row_differences([changed], TABLE) == reported
