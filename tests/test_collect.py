"""tests/collect.py: a socket left unclosed in a cycle fails the module that left it,
not a test that happens to run when the collector finds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

LEAKS = """
import socket


def test_leaves_a_socket_in_a_cycle():
    held = {"socket": socket.socket()}
    held["self"] = held


def test_leaves_nothing():
    pass
"""

LATER = """
def test_later():
    assert [[] for _ in range(50_000)]
"""


def run(folder: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfE", "-W", "error", "-p", "no:django"]
        + ["-p", "no:cacheprovider", "-p", "no:randomly", "test_leaks.py", "test_later.py"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout


@pytest.mark.parametrize(
    ("conftest", "blamed"),
    [
        ("from tests.collect import collected_at_module_end  # noqa: F401\n", "test_leaks.py::"),
        ("", "test_later.py::"),  # without it, the next test to collect is blamed
    ],
)
def test_collected_at_module_end_blames_the_module_that_leaked(
    tmp_path: Path, conftest: str, blamed: str
) -> None:
    (tmp_path / "conftest.py").write_text(conftest)
    (tmp_path / "test_leaks.py").write_text(LEAKS)
    (tmp_path / "test_later.py").write_text(LATER)

    out = run(tmp_path)

    failed = [line.split()[1] for line in out.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert len(failed) == 1 and failed[0].startswith(blamed), out
    assert "unclosed <socket" in out, out
