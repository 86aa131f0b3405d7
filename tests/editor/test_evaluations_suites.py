"""The Evaluations page's suites and cases: create, describe, delete (after asking), a
case's conversation shown as bubbles with its checks, the case form's rows (turns and a
menu of check types, no script), JSONL import (each bad line's error, nothing stored)
and export; who may see it; CSRF."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from sysprompt.evaluations import selectors, services
from tests.editor.library_support import SCRIPT, web

CASE = {
    "name": "indent",
    "messages": [
        {"role": "user", "content": "How do I indent?"},
        {"role": "assistant", "content": "With what?"},
        {"role": "user", "content": f"Python {SCRIPT}"},
    ],
    "checks": [{"type": "contains", "value": "spaces", "ignore_case": True}],
    "reference": "Four spaces.",
}


@pytest.fixture
def suite(author: User) -> str:
    services.suite_create(name="style", description="How we write", author=author)
    return "style"


def cases(name: str = "style") -> list[dict[str, object]]:
    return [services.case_json(c) for c in selectors.cases_list(selectors.suite_get(name))]


# --- who may see it -------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/evaluations/",
        "/evaluations/suites/style/",
        "/evaluations/suites/style/cases/new",
        "/evaluations/suites/style/export",
    ],
)
def test_evaluations_pages_refuse_readers(viewer_web: Client, suite: str, path: str) -> None:
    assert viewer_web.get(path).status_code == 403


def test_evaluations_page_sends_anonymous_to_login(client: Client) -> None:
    response = client.get("/evaluations/")
    assert response.status_code == 302 and "/login" in response["Location"]


def test_evaluations_nav_link_for_authors_only(author_web: Client, viewer_web: Client) -> None:
    assert 'href="/evaluations/"' in author_web.get("/library/").content.decode()
    assert 'href="/evaluations/"' not in viewer_web.get("/library/").content.decode()


def test_evaluations_suite_create_refuses_without_csrf(author: User) -> None:
    client = web(author, enforce_csrf_checks=True)
    response = client.post("/evaluations/", {"name": "style"})
    assert response.status_code == 403
    assert not selectors.suites_list().exists()


# --- suites ---------------------------------------------------------------------------


def test_evaluations_suite_create_then_listed(author_web: Client) -> None:
    response = author_web.post("/evaluations/", {"name": "style", "description": "Tone"})
    assert response.status_code == 302
    assert response["Location"] == "/evaluations/suites/style/"
    html = author_web.get("/evaluations/").content.decode()
    row = re.search(r'<tr data-suite="style">.*?</tr>', html, re.S)
    assert row is not None and "Tone" in row[0] and "<td>0</td>" in row[0]


@pytest.mark.parametrize(
    ("name", "error"),
    [("Bad Name", "lowercase"), ("style", "already")],
)
def test_evaluations_suite_create_bad_name_shows_error(
    author_web: Client, suite: str, name: str, error: str
) -> None:
    response = author_web.post("/evaluations/", {"name": name})
    assert response.status_code == 400
    html = response.content.decode()
    message = re.search(r'id="suite-name-error"[^>]*>(.*?)</p>', html, re.S)
    assert message is not None and error in message[1]
    assert selectors.suites_list().count() == 1


def test_evaluations_suite_description_saved(author_web: Client, suite: str) -> None:
    response = author_web.post("/evaluations/suites/style/edit", {"description": "New words"})
    assert response.status_code == 302
    assert selectors.suite_get("style").description == "New words"


def test_evaluations_suite_description_too_long_changes_nothing(
    author_web: Client, suite: str
) -> None:
    response = author_web.post("/evaluations/suites/style/edit", {"description": "x" * 2001})
    assert response.status_code == 400
    assert 'id="suite-description-error"' in response.content.decode()
    assert selectors.suite_get("style").description == "How we write"


def test_evaluations_suite_delete_asks_first_then_deletes(author_web: Client, suite: str) -> None:
    html = author_web.get("/evaluations/suites/style/").content.decode()
    form = re.search(r'<form method="post" action="/evaluations/suites/style/delete"[^>]*>', html)
    assert form is not None and "data-confirm=" in form[0]
    assert author_web.post("/evaluations/suites/style/delete").status_code == 302
    assert not selectors.suites_list().exists()


def test_evaluations_suite_missing_is_404(author_web: Client) -> None:
    assert author_web.get("/evaluations/suites/nothing/").status_code == 404


# --- cases as shown -------------------------------------------------------------------


def test_evaluations_suite_shows_case_as_conversation(author_web: Client, suite: str) -> None:
    services.case_create(suite="style", fields=CASE, author=None)
    html = author_web.get("/evaluations/suites/style/").content.decode()
    case = re.search(r'<article class="eval-case" data-case="indent".*?</article>', html, re.S)
    assert case is not None
    bubbles = re.findall(r'<li class="bubble bubble-(user|assistant)">', case[0])
    assert bubbles == ["user", "assistant", "user"]
    assert "Python &lt;script&gt;alert(1)&lt;/script&gt;" in case[0]  # escaped
    assert '<span class="badge">contains</span>' in case[0] and "spaces" in case[0]
    assert "Four spaces." in case[0]
    assert "<script>alert" not in html and "style=" not in html


# --- the case form --------------------------------------------------------------------


def form_data(**more: str) -> dict[str, str]:
    return {
        "name": "indent",
        "turn-0-role": "user",
        "turn-0-content": "How do I indent?",
        "check-0-type": "contains",
        "check-0-value": "spaces",
        "check-0-ignore_case": "on",
        **more,
    }


def test_evaluations_case_add_check_from_menu_shows_its_fields(
    author_web: Client, suite: str
) -> None:
    response = author_web.post(
        "/evaluations/suites/style/cases/new",
        {**form_data(), "check_type": "tool_called", "add_check": "1"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="check-1-type" value="tool_called"' in html
    assert 'name="check-1-name"' in html and 'name="check-1-arguments"' in html
    assert 'name="check-0-value" value="spaces"' in html  # the rows so far kept
    assert not selectors.cases_list(selectors.suite_get("style")).exists()  # nothing stored


def test_evaluations_case_add_turn_and_remove_check(author_web: Client, suite: str) -> None:
    html = author_web.post(
        "/evaluations/suites/style/cases/new", {**form_data(), "add_turn": "1"}
    ).content.decode()
    assert 'name="turn-1-role"' in html and '<option value="assistant" selected>' in html
    html = author_web.post(
        "/evaluations/suites/style/cases/new", {**form_data(), "remove_check": "0"}
    ).content.decode()
    assert 'name="check-0-type"' not in html and 'id="checks-empty"' in html


def test_evaluations_case_created_with_checks(author_web: Client, suite: str) -> None:
    data = form_data(
        **{
            "turn-1-role": "assistant",
            "turn-1-content": "Which language?",
            "turn-2-role": "user",
            "turn-2-content": "Python",
            "check-1-type": "regex",
            "check-1-pattern": r"\bspaces?\b",
            "check-2-type": "max_chars",
            "check-2-value": "400",
            "check-3-type": "tool_called",
            "check-3-name": "run",
            "check-3-arguments": '{"cmd": "ls"}',
            "reference": "Four spaces.",
            "save": "1",
        }
    )
    response = author_web.post("/evaluations/suites/style/cases/new", data)
    assert response.status_code == 302
    [stored] = cases()
    assert stored["messages"] == [
        {"role": "user", "content": "How do I indent?"},
        {"role": "assistant", "content": "Which language?"},
        {"role": "user", "content": "Python"},
    ]
    assert stored["checks"] == [
        {"type": "contains", "value": "spaces", "ignore_case": True},
        {"type": "regex", "pattern": r"\bspaces?\b"},
        {"type": "max_chars", "value": 400},
        {"type": "tool_called", "name": "run", "arguments": {"cmd": "ls"}},
    ]
    assert stored["reference"] == "Four spaces." and stored["context"] == {}


@pytest.mark.parametrize(
    ("more", "slot"),
    [
        ({"check-0-type": "regex", "check-0-pattern": "(unclosed"}, "pattern"),
        ({"check-0-type": "json_schema", "check-0-schema": "{not json"}, "schema"),
        ({"turn-0-role": "assistant"}, "the last turn is the user"),
        ({"name": "has space"}, "letters, digits"),
        ({"context": '{"cwd": 3}'}, "context.cwd"),
        ({"tools": "[1]"}, "tools[0]"),
    ],
)
def test_evaluations_case_bad_input_shows_error_stores_nothing(
    author_web: Client, suite: str, more: dict[str, str], slot: str
) -> None:
    response = author_web.post("/evaluations/suites/style/cases/new", {**form_data(), **more})
    assert response.status_code == 400
    errors = re.findall(
        r'<p class="error"[^>]*role="alert"[^>]*>(.*?)</p>', response.content.decode(), re.S
    )
    assert any(slot in error for error in errors), errors
    assert cases() == []


def test_evaluations_case_check_error_under_its_row(author_web: Client, suite: str) -> None:
    data = {**form_data(), "check-1-type": "regex", "check-1-pattern": "(bad"}
    html = author_web.post("/evaluations/suites/style/cases/new", data).content.decode()
    row = html.split('data-check="1"', 1)[1].split('id="check-type"', 1)[0]
    assert 'class="error"' in row and "pattern" in row
    assert 'class="error"' not in html.split('data-check="1"', 1)[0].split('id="turns"', 1)[1]


def test_evaluations_case_edit_renames_and_keeps_checks(author_web: Client, suite: str) -> None:
    services.case_create(suite="style", fields=CASE, author=None)
    html = author_web.get("/evaluations/suites/style/cases/indent/").content.decode()
    assert 'name="check-0-ignore_case" value="on" checked' in html
    assert 'name="turn-2-content"' in html
    data = {
        "name": "indent-python",
        "turn-0-role": "user",
        "turn-0-content": "How do I indent Python?",
        "check-0-type": "contains",
        "check-0-value": "spaces",
        "save": "1",
    }
    assert author_web.post("/evaluations/suites/style/cases/indent/", data).status_code == 302
    [stored] = cases()
    assert stored["name"] == "indent-python"
    assert stored["checks"] == [{"type": "contains", "value": "spaces"}]


def test_evaluations_case_delete(author_web: Client, suite: str) -> None:
    services.case_create(suite="style", fields=CASE, author=None)
    assert author_web.post("/evaluations/suites/style/cases/indent/delete").status_code == 302
    assert cases() == []


# --- import and export ----------------------------------------------------------------


def test_evaluations_import_bad_line_lists_it_and_stores_nothing(
    author_web: Client, suite: str
) -> None:
    good = json.dumps(CASE)
    text = "\n".join([good, "{not json", json.dumps({"name": "x", "messages": []})])
    response = author_web.post("/evaluations/suites/style/import", {"text": text})
    assert response.status_code == 400
    html = response.content.decode()
    listed = re.findall(r'<li data-line="(\d+)">(.*?)</li>', html, re.S)
    assert [line for line, _ in listed] == ["2", "3"]
    assert "not JSON" in listed[0][1] and "messages" in listed[1][1]
    assert cases() == []


def test_evaluations_import_file_then_export_roundtrip(author_web: Client, suite: str) -> None:
    second = {**CASE, "name": "tabs", "reference": None}
    upload = SimpleUploadedFile(
        "cases.jsonl", (json.dumps(CASE) + "\n\n" + json.dumps(second) + "\n").encode()
    )
    response = author_web.post("/evaluations/suites/style/import", {"file": upload})
    assert response.status_code == 302
    export = author_web.get("/evaluations/suites/style/export")
    assert export.status_code == 200
    assert export["Content-Disposition"] == 'attachment; filename="style.jsonl"'
    lines = b"".join(export.streaming_content).decode().splitlines()  # type: ignore[attr-defined]
    assert [json.loads(line)["name"] for line in lines] == ["indent", "tabs"]
    assert json.loads(lines[0]) == {**CASE, "context": {}, "tools": []}


def test_evaluations_import_not_utf8_refused(author_web: Client, suite: str) -> None:
    upload = SimpleUploadedFile("cases.jsonl", b"\xff\xfe{}")
    response = author_web.post("/evaluations/suites/style/import", {"file": upload})
    assert response.status_code == 400
    assert 'id="import-error"' in response.content.decode()
