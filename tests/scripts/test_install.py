"""The install step the scripts share (scripts/_install): scripts/serve installs what the
app runs on — core, client, server, without the server's [dev] extra — and scripts/test
and .ci/run add the development tools; the stamp names the set, so a serve install is
completed by the next test run (with the tools alone: the editable packages a running
scripts/serve imports are not reinstalled under it) and a dev install is enough for
serve.

The real scripts run in a copy of the repository's install inputs whose
``.venv/bin/python`` (and the CI's tools) only write their arguments to a log: what is
checked is which ``pip install`` each script asks for, and when. What pip itself then
installs, and how long it takes, is measured from a fresh clone (see docs/development.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INPUTS = (
    "scripts/_install",
    "scripts/_servers",
    "scripts/serve",
    "scripts/test",
    ".ci/run",
    "pyproject.toml",
    "packages/core/pyproject.toml",
    "packages/client/pyproject.toml",
    "requirements-lock.txt",
)
PIP = "-m pip install -q --disable-pip-version-check -c requirements-lock.txt"
CORE = "-e packages/core[diff,evaluations,tokens]"  # the server's parts of the core
SERVE_SET = f"{PIP.replace(' -c ', ' --no-compile -c ')} {CORE} -e packages/client -e ."
DEV_SET = f"{PIP} {CORE} -e packages/client -e .[dev]"
TOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
TOOLS_SET = f"{PIP} {' '.join(TOOLS['dev'])}"  # the [dev] extra alone, no editable package
RECORDER = '#!/bin/sh\nprintf "%s %s\\n" "$(basename "$0")" "$*" >>"$SYSPROMPT_RECORDED"\n'


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The scripts and the files the install reads, with a recording .venv."""
    root = tmp_path / "checkout"
    for name in INPUTS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("python", "ruff", "mypy", "lint-imports"):
        (bin_dir / tool).write_text(RECORDER)
        (bin_dir / tool).chmod(0o755)
    return root


def run(checkout: Path, script: str) -> list[str]:
    """Run ``script`` in the checkout; the pip installs it asked for."""
    log = checkout / "recorded.log"
    log.write_text("")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SYSPROMPT_", "TEST_")) and key not in {"DEBUG", "DATABASE_URL"}
    }
    env |= {
        "SYSPROMPT_RECORDED": str(log),
        "TEST_DATABASES": "sqlite",
        "TEST_TYPESCRIPT": "0",  # the TypeScript client's install is npm's, not pip's
        "PORT": "8999",
    }
    result = subprocess.run(
        ["bash", script],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert any(" manage.py runserver " in c or " -m pytest" in c for c in calls), calls
    return [call.removeprefix("python ") for call in calls if " pip install " in call]


def test_serve_installs_the_app_without_the_development_tools(checkout: Path) -> None:
    assert run(checkout, "scripts/serve") == [SERVE_SET]
    assert (checkout / ".venv/.sysprompt-install-stamp").read_text().startswith("serve ")


@pytest.mark.parametrize("script", ["scripts/test", ".ci/run"])
def test_test_and_ci_install_the_development_tools(checkout: Path, script: str) -> None:
    assert run(checkout, script) == [DEV_SET]


def test_switching_between_serve_and_test_installs_only_what_is_missing(checkout: Path) -> None:
    steps = [
        ("scripts/serve", [SERVE_SET]),
        ("scripts/serve", []),  # the stamp matches
        ("scripts/test", [TOOLS_SET]),  # a serve install lacks the tools, and only them
        ("scripts/serve", []),  # a dev install holds everything serve needs
        ("scripts/test", []),
    ]
    assert [(script, run(checkout, script)) for script, _ in steps] == steps

    with (checkout / "requirements-lock.txt").open("a") as lock:
        lock.write("# changed\n")

    assert run(checkout, "scripts/serve") == [SERVE_SET]  # the files changed
    assert run(checkout, "scripts/test") == [TOOLS_SET]
    assert (checkout / ".venv/.sysprompt-install-stamp").read_text().startswith("dev ")

    with (checkout / "requirements-lock.txt").open("a") as lock:
        lock.write("# changed again\n")

    assert run(checkout, "scripts/test") == [DEV_SET]  # a dev install whose files changed
