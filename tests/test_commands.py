"""The management commands: bootstrap and render_prompt."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django import Settings

REPO = Path(__file__).resolve().parent.parent
DIAGNOSTIC = re.compile(r"^\d+:\d+: (error|warning): \S.*$")


def _bootstrap() -> str:
    out = io.StringIO()
    call_command("bootstrap", stdout=out)
    return out.getvalue()


def _render(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("render_prompt", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _template(tmp_path: Path, text: str) -> str:
    path = tmp_path / "template.txt"
    path.write_bytes(text.encode())
    return str(path)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYSPROMPT_ADMIN_PASSWORD", raising=False)
    monkeypatch.delenv("PORT", raising=False)


# bootstrap


@pytest.mark.django_db
def test_bootstrap_creates_admin_when_no_superuser() -> None:
    output = _bootstrap()

    [admin] = get_user_model().objects.all()
    password = re.search(r"password: (\S+)", output)
    assert admin.get_username() == "admin"
    assert admin.is_superuser and admin.is_staff
    assert password is not None and admin.check_password(password.group(1))
    assert "http://127.0.0.1:8000/accounts/login/" in output
    assert "username: admin" in output


@pytest.mark.django_db
def test_bootstrap_uses_password_when_env_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYSPROMPT_ADMIN_PASSWORD", "correct horse battery")

    output = _bootstrap()

    assert get_user_model().objects.get().check_password("correct horse battery")
    assert "password: correct horse battery" in output


@pytest.mark.django_db
def test_bootstrap_is_idempotent_when_run_twice() -> None:
    first = _bootstrap()
    second = _bootstrap()

    [admin] = get_user_model().objects.all()
    password = re.search(r"password: (\S+)", first)
    assert password is not None and admin.check_password(password.group(1))
    assert "existing credentials" in second
    assert "changepassword admin" in second
    assert "password:" not in second


@pytest.mark.django_db
def test_bootstrap_keeps_superuser_when_one_exists() -> None:
    get_user_model().objects.create_superuser("ada", "", "s3cret-pass")

    output = _bootstrap()

    assert list(get_user_model().objects.values_list("username", flat=True)) == ["ada"]
    assert "'ada'" in output


@pytest.mark.django_db
def test_bootstrap_refuses_when_admin_is_not_superuser() -> None:
    get_user_model().objects.create_user("admin", "", "s3cret-pass")

    with pytest.raises(CommandError, match="not a superuser"):
        _bootstrap()


@pytest.mark.django_db
def test_bootstrap_prints_port_when_env_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "8123")

    assert "http://127.0.0.1:8123/accounts/login/" in _bootstrap()


# render_prompt


def test_render_prompt_default_template_when_agents_md_present(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")

    out, err = _render("--cwd", str(tmp_path))

    assert out == (
        "You are a helpful coding assistant.\nUse tabs.\n"
        f"The current working directory is {tmp_path}.\n"
    )
    assert err == ""


def test_render_prompt_default_template_when_agents_md_absent(tmp_path: Path) -> None:
    out, _ = _render("--cwd", str(tmp_path))

    assert out == (
        f"You are a helpful coding assistant.\nThe current working directory is {tmp_path}.\n"
    )


def test_render_prompt_uses_setting_when_default_template_set(
    tmp_path: Path, settings: Settings
) -> None:
    settings.SYSPROMPT = {"DEFAULT_TEMPLATE": "cwd=[prompt:cwd]"}

    assert _render("--cwd", str(tmp_path)) == (f"cwd={tmp_path}", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[prompt:model] / [prompt:conversation_id]", "m-1 / c-9"),
        ("a\r\n[prompt:model]\r\nb", "a\r\nm-1\r\nb"),
        ("no newline at the end", "no newline at the end"),
        ("[if prompt:model]\nhas model\n[endif]\n", "has model\n"),
    ],
)
def test_render_prompt_exact_output_when_template_given(
    tmp_path: Path, text: str, expected: str
) -> None:
    template = _template(tmp_path, text)

    out, err = _render(
        "--cwd", str(tmp_path), "--template", template, "--model", "m-1", "--conversation-id", "c-9"
    )

    assert (out, err) == (expected, "")


def test_render_prompt_reports_diagnostic_when_if_unmatched(tmp_path: Path) -> None:
    template = _template(tmp_path, "Hello\n[if file:AGENTS.md]\nbody\n")

    out, err = _render("--cwd", str(tmp_path), "--template", template)

    lines = err.splitlines()
    assert lines, "expected a diagnostic on stderr"
    assert all(DIAGNOSTIC.match(line) for line in lines), lines
    assert any(line.startswith("2:1: error: ") for line in lines), lines
    assert out == "Hello\n[if file:AGENTS.md]\nbody\n"


@pytest.mark.parametrize("text", ["", "   \n\t\n", "[if prompt:model]text[endif]"])
def test_render_prompt_prints_nothing_when_prompt_null(tmp_path: Path, text: str) -> None:
    template = _template(tmp_path, text)

    out, _ = _render("--cwd", str(tmp_path), "--template", template)

    assert out == ""


@pytest.mark.parametrize("cwd", ["does-not-exist", "AGENTS.md"])
def test_render_prompt_refuses_when_cwd_not_directory(tmp_path: Path, cwd: str) -> None:
    (tmp_path / "AGENTS.md").write_text("x")

    with pytest.raises(CommandError, match="is not an existing directory"):
        _render("--cwd", str(tmp_path / cwd))


@pytest.mark.parametrize(("name", "content"), [("missing.txt", None), ("latin1.txt", b"caf\xe9")])
def test_render_prompt_refuses_when_template_unreadable(
    tmp_path: Path, name: str, content: bytes | None
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)

    with pytest.raises(CommandError, match="Cannot read template"):
        _render("--cwd", str(tmp_path), "--template", str(path))


def test_render_prompt_cli_writes_exact_bytes_when_run(tmp_path: Path) -> None:
    template = _template(tmp_path, "é [prompt:model]")
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}

    result = subprocess.run(
        [sys.executable, "manage.py", "render_prompt", "--cwd", str(tmp_path)]
        + ["--template", template, "--model", "m"],
        cwd=REPO,
        env=env | {"PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == "é m".encode()
