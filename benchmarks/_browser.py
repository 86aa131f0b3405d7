"""Plumbing for the browser scripts (``preview_latency.py``, ``scripts/screenshots.py``):
the app served production-like (gunicorn, DEBUG off, collected static files), a manage.py
shell step, headless chromium, and logging in through the real login form.

Builds on ``_support.py`` (databases, the environment, gunicorn) without changing it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchmarks._support import PYTHON, BenchmarkError, Server, gunicorn, run

CHROMIUM = "/usr/bin/chromium"


def static_env(env: Mapping[str, str], static_root: Path) -> dict[str, str]:
    """``env`` with its own STATIC_ROOT, collected into: with DEBUG off the app serves
    (WhiteNoise) only what ``collectstatic`` wrote, under hashed names."""
    env = {**env, "STATIC_ROOT": str(static_root)}
    run([PYTHON, "manage.py", "collectstatic", "--noinput"], env, "manage.py collectstatic")
    return env


def manage_shell(env: Mapping[str, str], code: str, what: str) -> str:
    """Run ``code`` in ``manage.py shell``; its stdout."""
    return run([PYTHON, "manage.py", "shell", "--no-imports", "-c", code], env, what)


def migrate(env: Mapping[str, str]) -> None:
    run([PYTHON, "manage.py", "migrate", "--noinput"], env, "manage.py migrate")


def last_line(output: str, what: str) -> str:
    lines = output.strip().splitlines()
    if not lines:
        raise BenchmarkError(f"{what} printed nothing")
    return lines[-1]


@contextlib.contextmanager
def serve(env: Mapping[str, str], token: str, log: Path, *, workers: int = 2) -> Iterator[Server]:
    """gunicorn as in production (gthread workers, DEBUG off); ``token`` is an API token,
    used only to see that it answers."""
    with gunicorn(env, token, workers=workers, threads=2, log=log) as server:
        yield server


def launch(playwright: Playwright) -> Browser:
    """Debian's headless chromium (``playwright install`` is not needed)."""
    if not os.path.exists(CHROMIUM):
        raise BenchmarkError(f"{CHROMIUM} is missing (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=CHROMIUM)


def log_in(page: Page, base_url: str, username: str, password: str, then: str) -> None:
    """Log in through the login form, landing on ``then``."""
    page.goto(f"{base_url}/accounts/login/?next={then}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.get_by_role("button", name="Log in").click()
    try:
        page.wait_for_url(f"{base_url}{then}", timeout=15_000)
    except PlaywrightTimeout:
        raise BenchmarkError(f"logging in as {username} landed on {page.url}") from None


def open_editor(page: Page) -> None:
    """Wait for the editor page's controller and the modal."""
    page.wait_for_function("() => window.syspromptEditor !== undefined")
    page.wait_for_selector("#editor-modal[open] #template-editor .cm-content")


def other_test_runs() -> list[str]:
    """What else may be driving a browser or the CPUs here: pytest runs (``pytest
    tests/browser`` or a whole suite, which includes the browser tests) and chromium
    browsers that are not this process's, each as ``pid name``."""
    ours = _descendants(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in ours:
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [word.decode(errors="replace") for word in argv if word]
        if not words:
            continue
        if any(Path(word).name.startswith("pytest") for word in words[:3]):
            tests = [word for word in words if word.startswith("tests")]
            found.append(f"{entry.name} pytest {' '.join(tests) or '(whole suite)'}")
        elif Path(words[0]).name == "chromium" and not any("--type=" in w for w in words):
            found.append(f"{entry.name} chromium")
    return found


def _descendants(root: int) -> set[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = set(), [root]
    while stack:
        pid = stack.pop()
        found.add(pid)
        stack.extend(children.get(pid, []))
    return found


class CpuClock:
    """The machine's CPU time, busy and total, from /proc/stat."""

    def __init__(self) -> None:
        self.start = self.read()

    @staticmethod
    def read() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = values[3] + values[4]  # idle and iowait
        return sum(values) - idle, sum(values)

    def busy(self) -> float:
        """The share of all cores busy since the clock started, 0…1."""
        busy, total = self.read()
        return (busy - self.start[0]) / max(1, total - self.start[1])
