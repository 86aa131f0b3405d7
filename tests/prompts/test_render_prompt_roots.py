"""manage.py render_prompt and the allowed roots: a --cwd the API would refuse is
refused the same way (its message, exit status 1, nothing on stdout) instead of
printing a prompt whose git: values silently do not exist; inside, git: resolves."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django import Settings

pytestmark = pytest.mark.django_db  # render_prompt reads the library

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = "On branch [git:branch].[if file:AGENTS.md] [file:AGENTS.md][endif]"


def git_repository(path: Path) -> Path:
    """A real repository on branch ``feature/x`` with a commit and an AGENTS.md."""
    path.mkdir()
    (path / "AGENTS.md").write_text("Use tabs.\n")
    identity = ["-c", "user.name=Tests", "-c", "user.email=tests@example.com"]
    for args in (
        ["init", "--quiet", "--initial-branch=feature/x"],
        ["add", "-A"],
        ["commit", "--quiet", "-m", "init"],
    ):
        subprocess.run(
            ["git", *identity, *args], cwd=path, check=True, capture_output=True, timeout=30
        )
    return path


def render(cwd: Path, template: Path) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "render_prompt", "--cwd", str(cwd), "--template", str(template), stdout=out, stderr=err
    )
    return out.getvalue(), err.getvalue()


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "template.txt"
    path.write_text(TEMPLATE)
    return path


def test_render_prompt_outside_the_allowed_roots_is_refused_as_the_api_does(
    allowed_root: Path, tmp_path: Path, template: Path
) -> None:
    outside = git_repository(tmp_path / "elsewhere")

    with pytest.raises(CommandError) as refused:
        render(outside, template)

    message = str(refused.value)
    assert f"{str(outside)!r} is outside the allowed roots ({allowed_root})" in message
    assert "set SYSPROMPT_ALLOWED_ROOTS to allow it" in message


def test_render_prompt_inside_the_allowed_roots_resolves_git_and_files(
    allowed_root: Path, template: Path
) -> None:
    inside = git_repository(allowed_root / "project")

    assert render(inside, template) == ("On branch feature/x. Use tabs.", "")


def test_render_prompt_says_on_stderr_what_server_resolves_leaves_out(
    allowed_root: Path, template: Path, settings: Settings
) -> None:
    inside = git_repository(allowed_root / "project")
    settings.SYSPROMPT = {**settings.SYSPROMPT, "SERVER_RESOLVES": ["prompt", "system"]}

    out, err = render(inside, template)

    assert out == "On branch ."
    assert err.startswith("note: SERVER_RESOLVES leaves out file, git: ")
    assert "no file: or git: values" in err


def test_render_prompt_cli_outside_the_roots_exits_1_with_the_reason(
    tmp_path: Path, template: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = git_repository(tmp_path / "elsewhere")
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    env |= {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'unmigrated.sqlite3'}",
        "SYSPROMPT_ALLOWED_ROOTS": str(root),
    }

    result = subprocess.run(
        [sys.executable, "manage.py", "render_prompt", "--cwd", str(outside)]
        + ["--template", str(template)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 1
    assert result.stdout == ""
    assert "is outside the allowed roots" in result.stderr
    assert "SYSPROMPT_ALLOWED_ROOTS" in result.stderr
