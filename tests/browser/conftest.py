"""Browser tests: Debian's chromium driven by Playwright against a live Django server.

The live server runs in a thread of the test process, so ``settings`` changes (the
allowed roots) apply to it, and it shares the test database (a SQLite file or
PostgreSQL; pytest-django flushes it after each test).

Playwright's sync API runs an event loop in the main thread; Django refuses ORM calls
from a thread with a running loop unless told that this is intended, which it is here:
the tests call the ORM between browser steps, never from inside the loop.

Every page a test opens (``login_as``) is watched: a console error (a CSP violation is
one, and so is a failed request the page made) or an uncaught exception fails the test
at teardown (``page_errors``, autouse). A test that causes one on purpose takes it out
with :meth:`PageErrors.take`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Permission, User
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Dialog, Error, Page
from pytest_django import Settings
from pytest_django.live_server_helper import LiveServer

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
PASSWORD = "browser-tests-password"
AGENTS_MD = "Always run the tests.\n"
BRANCH = "feature/editor"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (scripts/test does)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM}


@pytest.fixture(scope="session")
def base_url() -> str | None:
    """Shadows pytest-playwright's fallback fixture, whose definition warns under pytest 9;
    each context gets the live server's URL instead (``login_as``)."""
    return None


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": {"width": 1280, "height": 800}}


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Tests", "-c", "user.email=tests@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=30,
    )


@pytest.fixture
def project(allowed_root: Path) -> Path:
    """A real git repository on branch ``feature/editor`` holding an AGENTS.md."""
    repo = allowed_root / "project"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "AGENTS.md").write_text(AGENTS_MD)
    (repo / "README.md").write_text("# Project\n")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "init")
    git(repo, "checkout", "--quiet", "-b", BRANCH)
    return repo


def make_user(username: str, *, can_edit: bool = True) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD)
    if can_edit:
        user.user_permissions.add(Permission.objects.get(codename="change_templateversion"))
    return user


@pytest.fixture
def author(transactional_db: None) -> User:
    return make_user("ada")


@pytest.fixture
def dialogs() -> list[str]:
    """Every browser dialog (alert, confirm, prompt, beforeunload) any page opened."""
    return []


class PageErrors:
    """The console errors and uncaught exceptions of every page a test opened."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def watch(self, page: Page) -> None:
        page.on("console", self.console)
        page.on("pageerror", self.page_error)

    def console(self, message: ConsoleMessage) -> None:
        url = str(message.location.get("url", ""))
        # The admin's pages link no icon: the browser's own /favicon.ico guess is no error.
        if message.type != "error" or url.endswith("/favicon.ico"):
            return
        # htmx logs every request it aborted as an error (htmx:sendAbort): the editor
        # never aborts one, so that is caught too, as a failed or timed-out request is.
        self.errors.append(f"{url}: {message.text}")

    def page_error(self, error: Error) -> None:
        self.errors.append(f"uncaught: {error}")

    def take(self, fragment: str, count: int) -> None:
        """Take out the errors containing ``fragment``, which must be ``count``: the
        ones a test caused on purpose (a refused form's 400); any other still fails it."""
        taken = [error for error in self.errors if fragment in error]
        assert len(taken) == count, self.errors
        self.errors[:] = [error for error in self.errors if fragment not in error]


@pytest.fixture(autouse=True)
def page_errors() -> Iterator[PageErrors]:
    """Fails the test at teardown when any page it opened logged a console error or
    threw (after ``login_as`` closed its contexts: nothing is missed)."""
    watched = PageErrors()
    yield watched
    if watched.errors:
        pytest.fail("The browser logged errors:\n" + "\n".join(watched.errors))


LoginAs = Callable[[User | None], Page]


@pytest.fixture
def login_as(
    browser: Browser,
    live_server: LiveServer,
    browser_context_args: dict[str, Any],
    dialogs: list[str],
    page_errors: PageErrors,
    settings: Settings,
) -> Iterator[LoginAs]:
    """A new browser context logged in as ``user`` (session cookie, no login form), or
    anonymous for ``None``; every dialog its page opens is recorded in ``dialogs``, every
    console error and uncaught exception in ``page_errors``.

    It asks for ``settings`` so that its contexts are closed before the test's settings
    (the allowed roots) are restored: a request still in flight would otherwise be
    answered under the defaults (400, outside the allowed roots)."""
    contexts: list[BrowserContext] = []

    def login(user: User | None) -> Page:
        context = browser.new_context(base_url=live_server.url, **browser_context_args)
        contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
            context.add_cookies(
                [{"name": cookie.key, "value": cookie.value, "url": live_server.url}]
            )
        page = context.new_page()
        page.set_default_timeout(10_000)

        def record(dialog: Dialog) -> None:
            dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", record)
        page_errors.watch(page)
        return page

    yield login
    for context in contexts:
        context.close()


@pytest.fixture
def author_page(login_as: LoginAs, author: User, project: Path) -> Page:
    """The author's page, before any navigation; the project exists."""
    return login_as(author)
