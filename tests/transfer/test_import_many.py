"""Importing a library of 10,000 small files: right, and without a query per file
(the time it takes is measured by ``benchmarks/library_import.py``)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sysprompt.library.models import FragmentVersion
from sysprompt.library.selectors import variant_current
from sysprompt.transfer.readers import MAX_ENTRIES
from sysprompt.transfer.services import ImportTarget, library_import, read_zip

pytestmark = pytest.mark.django_db

FILES = MAX_ENTRIES - 1  # and sysprompt.json: the most members an archive may hold
MAX_READS = 100  # a few per 500 files
MAX_WRITES = FILES // 25  # bulk inserts: rows per query as the database's limits allow


def _path(number: int) -> str:
    name = f"group{number // 1000}/fragment-{number:05}.md"
    return (name, f"providers/openai/{name}", f"providers/gemini/models/gemini-2.5-flash/{name}")[
        number % 3
    ]


def _archive(edited: int = -1) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for number in range(FILES):
            text = "edited\n" if number == edited else f"Fragment {number}.\n"
            out.writestr(_path(number), text)
        settings = {_path(n): {"compress": True} for n in range(0, FILES, 10)}
        out.writestr("sysprompt.json", json.dumps({"files": settings}))
    return buffer.getvalue()


def test_import_of_10000_files_reports_creates_and_rereads_unchanged(author: User) -> None:
    data = _archive()

    with CaptureQueriesContext(connection) as dry_queries:
        dry = library_import(archive=read_zip(data), dry_run=True, author=author)
    with CaptureQueriesContext(connection) as write_queries:
        applied = library_import(archive=read_zip(data), dry_run=False, author=author)
    again = library_import(archive=read_zip(data), dry_run=True, author=author)

    assert dry.counts()["created"] == FILES and not dry.applied
    assert applied.applied and applied.counts()["created"] == FILES
    assert again.counts()["unchanged"] == FILES
    assert FragmentVersion.objects.count() == FILES
    assert len(dry_queries) < MAX_READS and len(write_queries) < MAX_WRITES
    gemini = next(item for item in dry.items if item.path == _path(2))
    assert gemini.path == "providers/gemini/models/gemini-2.5-flash/group0/fragment-00002.md"
    assert gemini.target == ImportTarget("group0/fragment-00002", "gemini", "gemini-2-5-flash")
    state = variant_current("group0/fragment-00010", "openai")
    assert state is not None
    assert (state.text, state.compress, state.version, state.source) == (
        "Fragment 10.\n",
        True,
        1,
        "import",
    )


def test_import_of_10000_files_adds_a_version_only_where_one_changed(author: User) -> None:
    library_import(archive=read_zip(_archive()), dry_run=False, author=author)

    report = library_import(archive=read_zip(_archive(edited=4)), dry_run=False, author=author)

    assert report.counts()["changed"] == 1 and report.counts()["unchanged"] == FILES - 1
    assert FragmentVersion.objects.count() == FILES + 1
    state = variant_current("group0/fragment-00004", "openai")
    assert state is not None and (state.text, state.version) == ("edited\n", 2)
