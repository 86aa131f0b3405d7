"""Start-up logs stay out of a management command's stderr (where lint diagnostics and
errors go): django-axes' start-up banner is logged only at LOG_LEVEL=DEBUG, while its
login events and the app's own logs keep LOG_LEVEL (INFO by default)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        key: value
        for key, value in os.environ.items()
        if key not in {"LOG_LEVEL", "DATABASE_URL", "DEBUG"}
        and not key.startswith(("SYSPROMPT_", "DJANGO_"))
    }
    clean |= {
        "SECRET_KEY": "k" * 50,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    } | env
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("command", [["check"], ["help", "render_prompt"]])
def test_management_command_stderr_has_no_start_up_info(tmp_path: Path, command: list[str]) -> None:
    result = _run(["manage.py", *command], tmp_path)

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_start_up_banner_is_logged_at_log_level_debug(tmp_path: Path) -> None:
    result = _run(["manage.py", "check"], tmp_path, LOG_LEVEL="DEBUG")

    assert result.returncode == 0, result.stderr
    assert "AXES: BEGIN" in result.stderr


def test_login_events_and_app_logs_keep_log_level(tmp_path: Path) -> None:
    levels = (
        "import django, json, logging; django.setup(); print(json.dumps({name: "
        "logging.getLogger(name).getEffectiveLevel() for name in "
        "('axes.handlers.database', 'sysprompt', 'django.request', 'axes.apps')}))"
    )

    result = _run(["-c", levels], tmp_path, DJANGO_SETTINGS_MODULE="config.settings")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "axes.handlers.database": 20,  # INFO: lockouts and logins are still logged
        "sysprompt": 20,
        "django.request": 20,
        "axes.apps": 30,  # WARNING: the start-up banner is not
    }
