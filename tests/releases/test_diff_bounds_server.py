"""Issue 24, point 2: release diffs against a real server. gunicorn (one gthread worker,
DEBUG off) on its own SQLite file holds two releases whose templates are the
adversarial 1,000-line texts (one line repeated, against the same with every other
line changed), production serving the first, the working copy the second, and two test
contexts. Each request below costs the server at most :data:`ANSWER_CPU_SECONDS` of
CPU, and says what it shows: the diff, or "too large to show a line diff" with both
sides' sizes.

Before (difflib on up to 2,000 lines, with no time limit) the release compare took
17–18 s, the impact report of 2 contexts 25–43 s, the Releases page 11–20 s, all of it
computing. What is counted is the server's CPU time, not the answer's wall time, which
a loaded machine stretches whatever the code does (how fast it answers is
benchmarks'/``bounds.py``'s to measure).

The server's database is its own SQLite file whatever ``DATABASE_URL`` the suite runs
with (as in ``tests/editor/test_bounds_server.py``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from benchmarks._support import (
    PYTHON,
    Client,
    Server,
    group_members,
    gunicorn,
    prepare,
    process_cpu,
    run,
    server_env,
    sqlite_database,
)
from tests.editor.test_bounds_server import PASSWORD, Session

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a gunicorn server process")

LINES = 1_000
OLD = "- rule\n" * LINES
NEW = "".join("- rule\n" if n % 2 else "- other\n" for n in range(LINES))
ANSWER_CPU_SECONDS = 5.0
"""The server's CPU time one answer may cost whatever the texts: the diffs of one answer
share a 1 s deadline, the rest is the page or the JSON; difflib computed for 11 to 43 s."""
TOO_LARGE = "Too large to show a line diff"
NOT_DIFFED = "Not diffed: the 1 s the diffs shown here share went to the ones before"

SETUP = """
import os
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from sysprompt.accounts import services
services.groups_ensure()
author = get_user_model().objects.create_user("author", password=os.environ["BOUNDS_PASSWORD"])
author.groups.add(Group.objects.get(name=services.PROMPT_AUTHORS_GROUP))
"""


@dataclass(frozen=True)
class Served:
    server: Server
    author: Session

    def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        """The answer to the superuser's API call, and the server's CPU seconds for it."""
        with Client(self.server) as client:
            client.connection.timeout = 300
            started = cpu_seconds(self.server.pgid)
            status, data = client.request(method, path, body)
            return status, data, cpu_seconds(self.server.pgid) - started


def cpu_seconds(pgid: int) -> float:
    """The CPU time (user and system) gunicorn's processes have used so far."""
    return sum(process_cpu(group_members(pgid)).values())


def _expect(served: Served, method: str, path: str, body: Any = None) -> Any:
    status, data, _ = served.api(method, path, body)
    assert status in (200, 201), (method, path, status, data)
    return data


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("diff-bounds-server")
    (folder / "root").mkdir()
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(folder))
        env = server_env(database, folder / "root") | {"STATIC_ROOT": str(folder / "static")}
        token = prepare(env)
        run([PYTHON, "manage.py", "collectstatic", "--noinput"], env, "collectstatic")
        run(
            [PYTHON, "manage.py", "shell", "--no-imports", "-c", SETUP],
            env | {"BOUNDS_PASSWORD": PASSWORD},
            "the author",
        )
        server = stack.enter_context(
            gunicorn(env, token, workers=1, threads=2, log=folder / "gunicorn.log")
        )
        author = Session(server, "author")
        stack.callback(author.close)
        it = Served(server, author)
        for text in (OLD, NEW):  # release 1: OLD; release 2 and the working copy: NEW
            _expect(it, "PUT", "/api/system-prompt", {"template": text})
            _expect(it, "POST", "/api/releases", {"message": "adversarial"})
        _expect(it, "PUT", "/api/labels/production", {"target": {"release": 1}})
        for name in ("first", "second"):
            context = {"name": name, "cwd": str(folder / "root"), "model": name}
            _expect(it, "POST", "/api/test-contexts", context)
        yield it


def _shown(diff: str, too_large: str | None) -> None:
    """The diff of OLD → NEW is either shown (every other line changed) or too large to
    show, with both sides' sizes."""
    if too_large is None:
        assert diff.count("\n+- other") == LINES // 2, diff[:500]
        return
    assert diff == ""
    assert too_large.startswith((TOO_LARGE, NOT_DIFFED)), too_large
    sizes = f"(old: {LINES:,} lines, {len(OLD):,} characters; new: {LINES:,} lines"
    assert sizes in too_large, too_large


def test_diff_bounds_server_impact_report_of_2_contexts_costs_bounded_work(
    served: Served,
) -> None:
    status, report, seconds = served.api(
        "POST", "/api/releases/impact", {"label": "production", "candidate": 2}
    )

    assert status == 200, report
    assert seconds < ANSWER_CPU_SECONDS, f"{seconds:.1f} s of CPU"
    rows = report["contexts"]
    assert [row["key"] for row in rows] == ["test:first", "test:second"]
    for row in rows:
        assert row["changed"] is True
        _shown(row["diff"], row["diff_too_large"])


def test_diff_bounds_server_release_compare_costs_bounded_work(served: Served) -> None:
    status, comparison, seconds = served.api("GET", "/api/releases/1/compare?with=2")

    assert status == 200, comparison
    assert seconds < ANSWER_CPU_SECONDS, f"{seconds:.1f} s of CPU"
    template = comparison["template"]
    assert (template["before_version"], template["after_version"]) == (1, 2)
    _shown(template["diff"], template["diff_too_large"])


def test_diff_bounds_server_releases_page_with_production_on_it_costs_bounded_work(
    served: Served,
) -> None:
    started = cpu_seconds(served.server.pgid)
    page = served.author.get("/releases/")
    seconds = cpu_seconds(served.server.pgid) - started

    assert page.status_code == 200, page.text[:2000]
    assert seconds < ANSWER_CPU_SECONDS, f"{seconds:.1f} s of CPU"
    assert "version 1 → 2" in page.text
    shown = page.text.count('<span class="udiff-line udiff-insert">+- other')
    assert shown == LINES // 2 or TOO_LARGE in page.text, _excerpt(page)


def _excerpt(page: httpx.Response) -> str:
    at = page.text.find("version 1 → 2")
    return page.text[at : at + 2000]
