"""The library's zip endpoints as binary bodies a generated client can send and take: the
import accepts the archive as ``application/octet-stream`` as well as
``application/zip``, and the export answers ``application/octet-stream`` to a client
that asks for that and not for a zip; both are ``format: binary`` in the schema.

Real API, real database, real zip archives."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.library_support import EXPORT, IMPORT
from tests.api.test_library_transfer import body

pytestmark = pytest.mark.django_db

ARCHIVE_FILES = {"system-prompt.md": "root [fragment:core]", "core.md": "Core.\n"}


def zip_of(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return buffer.getvalue()


def post_archive(client: APIClient, content_type: str, query: str = "") -> Any:
    body: Any = zip_of(ARCHIVE_FILES)
    return client.generic("POST", IMPORT + query, body, content_type=content_type)


@pytest.mark.parametrize("content_type", ["application/octet-stream", "application/zip"])
def test_import_takes_the_archive_as_either_binary_type(
    author_client: APIClient, content_type: str
) -> None:
    response = post_archive(author_client, content_type)

    assert response.status_code == 200, response.content
    assert response.json()["applied"] is True
    assert author_client.get("/api/system-prompt").json()["template"] == "root [fragment:core]"


def test_import_still_refuses_other_types_with_415(author_client: APIClient) -> None:
    assert post_archive(author_client, "text/plain").status_code == 415


# (Accept, the answer's Content-Type)
ACCEPT_CASES = [
    ("", "application/zip"),
    ("*/*", "application/zip"),
    ("application/zip", "application/zip"),
    ("application/octet-stream", "application/octet-stream"),
    ("application/octet-stream;q=0.9, application/json", "application/octet-stream"),
    ("application/zip, application/octet-stream", "application/zip"),
    ("application/json", "application/zip"),
]


@pytest.mark.parametrize(("accept", "expected"), ACCEPT_CASES)
def test_export_answers_octet_stream_only_when_asked_for_it(
    author_client: APIClient, accept: str, expected: str
) -> None:
    headers = {"Accept": accept} if accept else {}

    response = author_client.get(EXPORT, headers=headers)

    assert response.status_code == 200
    assert response["Content-Type"] == expected
    with zipfile.ZipFile(io.BytesIO(body(response))) as archive:
        assert "system-prompt.md" in archive.namelist()
