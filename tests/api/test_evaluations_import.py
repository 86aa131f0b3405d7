"""Evaluations §2 and §5: a suite's cases as JSONL, exported and imported back; a bad
line is named by its number, with its field, and nothing is stored."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from tests.api.evaluation_support import case_body, make_suite, stored, suite_url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("production")]

JSONL = "application/x-ndjson"


def _import(client: APIClient, suite: str, text: str, media: str = JSONL) -> object:
    return client.post(suite_url(suite, "/import"), text.encode(), content_type=media)


def test_export_then_import_round_trips_every_case(author_client: APIClient) -> None:
    make_suite(
        author_client,
        "source",
        case_body("one", reference="Tabs — always."),
        case_body("two", {"type": "regex", "pattern": "^s"}, tools=[]),
    )
    make_suite(author_client, "copy")

    exported = author_client.get(suite_url("source", "/export"))
    text = exported.content.decode()
    imported = _import(author_client, "copy", text)
    again = author_client.get(suite_url("copy", "/export")).content.decode()

    assert exported.status_code == 200
    assert exported["Content-Type"] == JSONL
    assert [json.loads(line)["name"] for line in text.splitlines()] == ["one", "two"]
    assert imported.status_code == 200  # type: ignore[attr-defined]
    assert imported.json() == {"imported": 2}  # type: ignore[attr-defined]
    assert again == text


def test_import_replaces_a_case_of_the_same_name_as_octet_stream(author_client: APIClient) -> None:
    make_suite(author_client, "s", case_body("one"))
    line = json.dumps(case_body("one", {"type": "max_chars", "value": 5}))

    response = _import(author_client, "s", f"{line}\n\n", "application/octet-stream")

    assert response.status_code == 200  # type: ignore[attr-defined]
    got = author_client.get(suite_url("s", "/cases/one")).json()
    assert got["checks"] == [{"type": "max_chars", "value": 5}]


def test_import_names_each_bad_line_and_stores_nothing(author_client: APIClient) -> None:
    make_suite(author_client, "s", case_body("kept"))
    lines = [
        json.dumps(case_body("good")),
        "{not json",
        json.dumps(case_body("bad-check", {"type": "regex", "pattern": "(x"})),
        json.dumps(case_body("good")),
        "[1, 2]",
    ]
    before = stored()

    response = _import(author_client, "s", "\n".join(lines))

    assert response.status_code == 400  # type: ignore[attr-defined]
    errors = response.json()  # type: ignore[attr-defined]
    assert sorted(errors) == ["line 2", "line 3", "line 4", "line 5"]
    assert errors["line 2"][0].startswith("line: not JSON")
    assert errors["line 3"][0].startswith("checks[0].pattern: ")
    assert errors["line 4"][0].startswith("name: case 'good' is on an earlier line")
    assert stored() == before


@pytest.mark.parametrize(
    ("media", "body", "status"),
    [("application/json", b"{}", 415), ("text/plain", b"x", 415), (JSONL, b"\xff\xfe", 400)],
)
def test_import_refuses_a_body_that_is_not_jsonl_text(
    author_client: APIClient, media: str, body: bytes, status: int
) -> None:
    make_suite(author_client, "s")
    before = stored()

    response = author_client.post(suite_url("s", "/import"), body, content_type=media)

    assert response.status_code == status
    assert response.json()
    assert stored() == before


def test_import_and_export_answer_404_for_a_missing_suite(author_client: APIClient) -> None:
    assert _import(author_client, "missing", "\n").status_code == 404  # type: ignore[attr-defined]
    assert author_client.get(suite_url("missing", "/export")).status_code == 404


@pytest.mark.parametrize(
    "line",
    [
        '{"name": "n", "messages": [{"role": "user", "content": "a\\u0000b"}]}',
        '{"name": "n", "messages": [{"role": "user", "content": "q"}], "reference": "\\ud800"}',
        '{"name": "n", "messages": [{"role": "user", "content": "q"}], '
        '"checks": [{"type": "contains", "value": "\\u0000"}]}',
    ],
)
def test_import_names_a_line_no_database_stores_and_stores_nothing(
    author_client: APIClient, line: str
) -> None:
    make_suite(author_client, "s")
    before = stored()

    response = _import(author_client, "s", line)

    assert response.status_code == 400  # type: ignore[attr-defined]
    assert list(response.json()) == ["line 1"]  # type: ignore[attr-defined]
    assert stored() == before
