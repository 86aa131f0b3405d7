"""GET /api/library/export and POST /api/library/import: the zip of library.md §7 through
the API, both ways."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt.api.parsers import max_archive_bytes
from tests.api.library_support import EXPORT, IMPORT, fragment_url, put_fragment

pytestmark = pytest.mark.django_db


def zip_of(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    return buffer.getvalue()


def body(response: Any) -> bytes:
    """The answer's bytes: the export is streamed."""
    return b"".join(response.streaming_content) if response.streaming else response.content


def files_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def post_bytes(client: APIClient, url: str, data: bytes, content_type: str) -> Any:
    body: Any = data  # the stubs say str; Django's client sends bytes as they are
    return client.generic("POST", url, body, content_type=content_type)


def send(client: APIClient, data: bytes, *, dry_run: bool = False) -> Any:
    url = IMPORT + ("?dry_run=1" if dry_run else "")
    return post_bytes(client, url, data, "application/zip")


def actions(response: Any) -> dict[str, str]:
    return {item["path"]: item["action"] for item in response.json()["items"]}


@pytest.fixture
def library(author_client: APIClient) -> None:
    author_client.put("/api/system-prompt", {"template": "root [fragment:core]"}, format="json")
    put_fragment(author_client, "core", "core default\n")
    put_fragment(author_client, "core", "core claude\n", query={"provider": "anthropic"})
    put_fragment(author_client, "env/git", "git text\n", compress=True, strategy="prepend")


def test_export_answers_a_zip_attachment(author_client: APIClient, library: None) -> None:
    response = author_client.get(EXPORT)

    assert response.status_code == 200
    assert response.streaming  # written as it is sent, never whole in memory
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="sysprompt-library.zip"'
    files = files_of(body(response))
    assert files["system-prompt.md"] == b"root [fragment:core]"
    assert files["core.md"] == b"core default\n"
    assert files["providers/anthropic/core.md"] == b"core claude\n"
    assert files["env/git.md"] == b"git text\n"
    settings = json.loads(files["sysprompt.json"])
    assert "env/git.md" in json.dumps(settings)


def test_export_answers_a_zip_even_when_asked_for_one(author_client: APIClient) -> None:
    response = author_client.get(EXPORT, headers={"Accept": "application/zip"})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"


def test_import_of_an_export_changes_nothing(author_client: APIClient, library: None) -> None:
    exported = body(author_client.get(EXPORT))

    response = send(author_client, exported)

    assert response.status_code == 200
    assert set(actions(response).values()) == {"unchanged"}
    assert author_client.get(fragment_url("core")).json()["version"] == 1


def test_import_dry_run_then_apply_roundtrip(author_client: APIClient, library: None) -> None:
    files = files_of(body(author_client.get(EXPORT)))
    files["core.md"] = b"core edited\n"
    files["tools/shell.md"] = b"Use the shell.\n"
    edited = zip_of(dict(files))

    dry = send(author_client, edited, dry_run=True)
    untouched = author_client.get(fragment_url("core")).json()
    not_yet = author_client.get(fragment_url("tools/shell")).status_code
    applied = send(author_client, edited)

    assert dry.status_code == 200
    assert dry.json()["applied"] is False
    assert actions(dry)["core.md"] == "changed"
    assert actions(dry)["tools/shell.md"] == "created"
    assert (untouched["text"], not_yet) == ("core default\n", 404)
    assert applied.status_code == 200
    assert applied.json()["applied"] is True
    assert actions(applied) == actions(dry)
    core = author_client.get(fragment_url("core")).json()
    assert (core["text"], core["version"], core["source"]) == ("core edited\n", 2, "import")
    assert author_client.get(fragment_url("tools/shell")).json()["text"] == "Use the shell.\n"


@pytest.mark.parametrize(
    "bad",
    [
        {"../evil.md": "zip slip"},
        {"/abs.md": "absolute"},
        {"Bad Name.md": "not a fragment name"},
        {"latin.md": b"caf\xe9"},
    ],
)
@pytest.mark.parametrize("dry_run", [False, True])
def test_import_answers_400_with_the_report_and_applies_nothing_when_refused(
    author_client: APIClient, bad: dict[str, str | bytes], dry_run: bool
) -> None:
    archive = zip_of({"good.md": "fine\n", **bad})

    response = send(author_client, archive, dry_run=dry_run)

    assert response.status_code == 400
    assert response.json()["applied"] is False
    refused = [item for item in response.json()["items"] if item["action"] == "refused"]
    assert refused
    assert all(item["reason"] for item in refused)
    assert author_client.get(fragment_url("good")).status_code == 404


def test_import_answers_400_when_the_body_is_not_a_zip(author_client: APIClient) -> None:
    response = send(author_client, b"this is no zip archive")

    assert response.status_code == 400


def test_import_answers_400_when_the_body_is_empty(author_client: APIClient) -> None:
    response = send(author_client, b"")

    assert response.status_code == 400
    assert "empty" in response.json()["detail"]


def test_import_answers_400_when_dry_run_is_not_a_flag(author_client: APIClient) -> None:
    response = post_bytes(
        author_client, IMPORT + "?dry_run=maybe", zip_of({"a.md": "a"}), "application/zip"
    )

    assert response.status_code == 400
    assert "dry_run" in response.json()


def test_import_answers_413_when_the_archive_is_over_the_limit(
    author_client: APIClient, settings: Settings
) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 16}
    archive = zip_of({"a.md": "a" * 100, "b.md": "b" * 2000})
    assert len(archive) > max_archive_bytes()

    response = send(author_client, archive)

    assert response.status_code == 413
    assert "the limit is" in response.json()["detail"]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [("application/json", b'{"core.md": "x"}'), ("text/plain", b"x"), ("", b"PK")],
)
def test_import_answers_415_when_the_body_is_not_a_zip_media_type(
    author_client: APIClient, content_type: str, body: bytes
) -> None:
    response = post_bytes(author_client, IMPORT, body, content_type)

    assert response.status_code == 415


def test_export_answers_403_json_to_an_agent_host(agent_client: APIClient, library: None) -> None:
    response = agent_client.get(EXPORT)

    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert "Exporting the prompt library needs" in response.json()["detail"]


def test_export_answers_403_json_to_a_plain_login(db: None) -> None:
    client = APIClient()
    client.force_authenticate(User.objects.create_user("reader"))

    response = client.get(EXPORT, headers={"Accept": "application/zip"})

    assert response.status_code == 403
    assert "detail" in response.json()


def test_import_report_names_files_as_in_the_archive(author_client: APIClient) -> None:
    archive = zip_of({"providers/gemini/models/gemini-2.5-flash/core.md": "Gemini.\n"})

    response = send(author_client, archive, dry_run=True)

    (item,) = response.json()["items"]
    assert item["path"] == "providers/gemini/models/gemini-2.5-flash/core.md"
    assert item["variant"] == {
        "fragment": "core",
        "provider": "gemini",
        "model": "gemini-2-5-flash",
    }
    assert item["action"] == "created"


def test_import_answers_403_when_an_agent_host_imports(agent_client: APIClient) -> None:
    response = send(agent_client, zip_of({"a.md": "a"}), dry_run=True)

    assert response.status_code == 403


@pytest.mark.parametrize(("method", "url"), [("get", EXPORT), ("post", IMPORT)])
def test_transfer_answers_401_without_credentials(method: str, url: str) -> None:
    assert getattr(APIClient(), method)(url).status_code == 401
