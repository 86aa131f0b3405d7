"""Shared setup for every test directory.

Tests run with DEBUG off, as Django's test runner forces; settings then have no
SECRET_KEY unless the environment gives one, so the test run supplies a throwaway key.

The test database is real: a SQLite *file* (WAL, as in production, so threads get their
own connections) or, with ``DATABASE_URL`` set, PostgreSQL. Its name carries the process
id, so test runs side by side never share a database.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from django.conf import settings


def pytest_configure(config: pytest.Config) -> None:
    settings.SECRET_KEY = "tests-only-not-a-secret"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    # Static files straight from the source folders, as in development: no collectstatic.
    settings.WHITENOISE_AUTOREFRESH = True
    settings.WHITENOISE_USE_FINDERS = True
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        folder = tempfile.mkdtemp(prefix="sysprompt-tests-")
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        database.setdefault("TEST", {})["NAME"] = os.path.join(folder, "test.sqlite3")
    else:
        database.setdefault("TEST", {})["NAME"] = f"test_sysprompt_{os.getpid()}"
