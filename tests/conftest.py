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
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from hypothesis import settings as hypothesis_settings
from pytest_django import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.collect import collected_at_module_end  # noqa: F401 - autouse

# CI runs the property tests on a fixed sequence of examples, so a submission's result
# does not depend on luck; locally they search afresh every run.
hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


TESTS = Path(__file__).resolve().parent
DATABASE_FREE = (
    "core/",
    "scripts/test_",
    "test_distributions.py",
    "test_typescript_package.py",
    "test_docs_links.py",
    "test_collect.py",
    "evaluations/test_providers.py",
    "config/test_startup.py",
    "config/test_env_file.py",
    # Real servers on a SQLite file of their own, whatever database the suite runs on:
    "api/test_git_server.py",
    "api/test_git_burst.py",
    "api/test_git_unconfined.py",
    "api/test_parse_cache_server.py",
    "editor/test_bounds_server.py",
    "releases/test_diff_bounds_server.py",
    "transfer/test_export_memory.py",
    "client/test_restart.py",
    "client/test_central_deployment.py",
    "client/test_default_host_values.py",
    "mcp/test_http_server.py",
)
"""Tests that touch no test database (the core's, the scripts', servers with a database
of their own): ``scripts/test`` runs them in its first pass only (SQLite), and the
PostgreSQL pass leaves them out (``SYSPROMPT_TESTS_DATABASE_ONLY``)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The browser tests last: Playwright's sync API leaves an event loop running on the
    # main thread until the session ends, where no later test could start one of its
    # own (asyncio.run, anyio's runner, asgiref's async_to_sync in /mcp's view).
    items.sort(key=lambda item: item.path.relative_to(TESTS).as_posix().startswith("browser/"))
    if not os.environ.get("SYSPROMPT_TESTS_DATABASE_ONLY"):
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        where = item.path.relative_to(TESTS).as_posix()
        (drop if where.startswith(DATABASE_FREE) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_configure(config: pytest.Config) -> None:
    settings.SECRET_KEY = "tests-only-not-a-secret"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    # Tests log in many times; the production hasher is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
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


@pytest.fixture
def allowed_root(tmp_path: Path, settings: Settings) -> Path:
    """A temporary folder that is the only allowed root (SYSPROMPT ALLOWED_ROOTS)."""
    root = tmp_path / "root"
    root.mkdir()
    settings.SYSPROMPT = {"ALLOWED_ROOTS": [str(root)]}
    return root


@pytest.fixture
def workdir(allowed_root: Path) -> Path:
    """A project folder inside the allowed root, with an AGENTS.md."""
    project = allowed_root / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Run the tests before you commit.\n")
    return project


def _user(username: str, *permissions: str) -> User:
    user = User.objects.create_user(username=username, password=None)
    for codename in permissions:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return user


@pytest.fixture
def author(db: None) -> User:
    """A prompt author: may change the template."""
    return _user("author", "change_templateversion")


@pytest.fixture
def author_publishes(author: User) -> None:
    """The author may publish too: an agent host without a label is on production, which
    is protected, so its instance override and its label are a publisher's to change."""
    author.user_permissions.add(Permission.objects.get(codename="publish_release"))


@pytest.fixture
def agent_host(db: None) -> User:
    """An agent host's user: resolves prompts, may not change the template."""
    return _user("agent-host")


def token_client(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def author_client(author: User) -> APIClient:
    return token_client(author)


@pytest.fixture
def agent_client(agent_host: User) -> APIClient:
    return token_client(agent_host)
