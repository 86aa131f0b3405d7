"""The management commands: bootstrap and render_prompt."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import OperationalError
from django.test import Client
from pytest_django import Settings
from rest_framework.authtoken.models import Token

from sysprompt.groups import AGENT_HOSTS_GROUP, PROMPT_AUTHORS_GROUP, PROMPT_PUBLISHERS_GROUP
from sysprompt.prompts import selectors, services
from sysprompt.releases.models import Label, LabelMove

pytestmark = pytest.mark.django_db  # render_prompt reads the library

REPO = Path(__file__).resolve().parents[2]
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


@pytest.fixture(autouse=True)
def _tmp_path_allowed(tmp_path: Path, settings: Settings) -> None:
    """render_prompt's --cwd must lie in the allowed roots: each test's tmp_path is one."""
    settings.SYSPROMPT = {"ALLOWED_ROOTS": [str(tmp_path)]}


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


@pytest.mark.parametrize(
    ("executable", "python"),
    [(str(REPO / ".venv" / "bin" / "python"), ".venv/bin/python"), ("/usr/bin/python3", "python")],
)
@pytest.mark.django_db
def test_bootstrap_prints_token_commands_when_admin_created(
    monkeypatch: pytest.MonkeyPatch, executable: str, python: str
) -> None:
    monkeypatch.setattr(sys, "executable", executable)

    lines = _bootstrap().splitlines()

    assert lines[-5:-2] == [
        "API tokens (send as `Authorization: Token <key>`):",
        f"  for admin:         {python} manage.py drf_create_token admin",
        f"  for an agent host: {python} manage.py create_agent_host my-host",
    ]


@pytest.mark.django_db
def test_bootstrap_prints_token_command_for_existing_superuser_when_one_exists() -> None:
    get_user_model().objects.create_superuser("ada", "", "s3cret-pass")

    output = _bootstrap()

    assert "manage.py drf_create_token ada\n" in output
    assert " manage.py create_agent_host my-host\nWorking directories allowed" in output


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("roots", "said"),
    [
        (["/srv/work", "/home/ada"], "inside /srv/work, /home/ada."),
        ([], "none (the list is set but empty)."),
    ],
)
def test_bootstrap_ends_with_the_allowed_roots(
    settings: Settings, roots: list[str], said: str
) -> None:
    settings.SYSPROMPT = {"ALLOWED_ROOTS": roots}

    line = _bootstrap().splitlines()[-2]

    assert line.startswith(f"Working directories allowed (SYSPROMPT_ALLOWED_ROOTS): {said}")
    assert "refused by the preview and the API" in line


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("debug", "sysprompt", "said"),
    [
        (
            True,
            {},
            "Webhook receivers allowed: public https addresses; plain http to 127.0.0.1, ::1, "
            "localhost (SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS); non-public addresses 127.0.0.1, "
            "::1, localhost (SYSPROMPT_WEBHOOK_ALLOW_PRIVATE). DEBUG is on, so a receiver on "
            "this machine (http://127.0.0.1:…) works as it is; with DEBUG off, as in "
            "production, only public https receivers do.",
        ),
        (False, {}, "Webhook receivers allowed: public https addresses."),
        (
            False,
            {"WEBHOOK_ALLOW_PRIVATE": ["10.0.0.0/8"]},
            "Webhook receivers allowed: public https addresses; non-public addresses "
            "10.0.0.0/8 (SYSPROMPT_WEBHOOK_ALLOW_PRIVATE).",
        ),
    ],
)
def test_bootstrap_ends_with_the_webhook_receivers_allowed(
    settings: Settings, debug: bool, sysprompt: dict[str, object], said: str
) -> None:
    settings.DEBUG = debug
    settings.SYSPROMPT = sysprompt

    assert _bootstrap().splitlines()[-1] == said


def _group_permissions() -> dict[str, set[str]]:
    return {
        group.name: {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}
        for group in Group.objects.prefetch_related("permissions__content_type")
    }


@pytest.mark.django_db
def test_bootstrap_creates_groups_when_run_twice() -> None:
    _bootstrap()
    _bootstrap()

    assert _group_permissions() == {
        PROMPT_AUTHORS_GROUP: {
            "sysprompt.change_templateversion",
            "sysprompt.view_templateversion",
            "sysprompt.view_conversationprompt",
            "sysprompt.change_conversationprompt",
            "sysprompt.delete_conversationprompt",
            "authtoken.add_token",
        },
        PROMPT_PUBLISHERS_GROUP: {"releases.publish_release"},
        AGENT_HOSTS_GROUP: set(),
    }


@pytest.mark.django_db
def test_bootstrap_makes_the_first_admin_a_prompt_publisher() -> None:
    _bootstrap()

    admin = get_user_model().objects.get(username="admin")
    assert [group.name for group in admin.groups.all()] == [PROMPT_PUBLISHERS_GROUP]
    admin.is_superuser = False
    admin.save()
    assert get_user_model().objects.get(pk=admin.pk).has_perm("releases.publish_release")


@pytest.mark.django_db
def test_bootstrap_restores_production_when_it_is_missing() -> None:
    LabelMove.objects.all().delete()
    Label.objects.all().delete()

    _bootstrap()

    production = Label.objects.get(name="production")
    assert (production.target, production.protected) == ("latest", True)


@pytest.mark.django_db
def test_bootstrap_keeps_granted_permissions_when_run_again() -> None:
    _bootstrap()
    hosts = Group.objects.get(name=AGENT_HOSTS_GROUP)
    hosts.permissions.add(Permission.objects.get(codename="view_templateversion"))

    _bootstrap()

    assert _group_permissions()[AGENT_HOSTS_GROUP] == {"sysprompt.view_templateversion"}


# create_agent_host and the API tokens

HEALTH = "/api/health"
SYSTEM_PROMPT = "/api/system-prompt"


def _agent_host(*args: str) -> tuple[str, str]:
    """The command's output and the token on its last line."""
    out = io.StringIO()
    call_command("create_agent_host", *args, stdout=out)
    output = out.getvalue()
    return output, output.splitlines()[-1]


def _admin_token() -> str:
    out = io.StringIO()
    call_command("drf_create_token", "admin", stdout=out)
    token = re.fullmatch(r"Generated token (\w+) for user admin\n?", out.getvalue())
    assert token is not None, out.getvalue()
    return token.group(1)


def _health(client: Client, token: str) -> int:
    return client.get(HEALTH, headers={"Authorization": f"Token {token}"}).status_code


def _put_template(client: Client, token: str, text: str) -> int:
    response = client.put(
        SYSTEM_PROMPT,
        {"template": text},
        content_type="application/json",
        headers={"Authorization": f"Token {token}"},
    )
    return response.status_code


@pytest.mark.django_db
def test_create_agent_host_creates_user_when_new(client: Client) -> None:
    _bootstrap()

    output, token = _agent_host("my-host")

    user = User.objects.get(username="my-host")
    assert output.startswith("Created agent host 'my-host'")
    assert token == Token.objects.get(user=user).key
    assert [group.name for group in user.groups.all()] == [AGENT_HOSTS_GROUP]
    assert not (user.is_staff or user.is_superuser or user.has_usable_password())
    assert not user.has_perm("sysprompt.change_templateversion")
    assert _health(client, token) == 200


@pytest.mark.django_db
def test_create_agent_host_creates_group_when_bootstrap_never_ran() -> None:
    _agent_host("my-host")

    assert User.objects.get(username="my-host").groups.get().name == AGENT_HOSTS_GROUP


@pytest.mark.django_db
def test_create_agent_host_reuses_token_when_run_twice(client: Client) -> None:
    _, first = _agent_host("my-host")

    output, second = _agent_host("my-host")

    assert second == first
    assert "its token is unchanged (--rotate replaces it)" in output
    assert User.objects.filter(username="my-host").count() == 1
    assert _health(client, second) == 200


@pytest.mark.django_db
def test_create_agent_host_replaces_token_when_rotate(client: Client) -> None:
    _, old = _agent_host("my-host")

    output, new = _agent_host("my-host", "--rotate")

    assert new != old
    assert "any earlier one no longer works" in output
    assert (_health(client, old), _health(client, new)) == (401, 200)


@pytest.mark.django_db
def test_create_agent_host_gives_token_when_user_had_none() -> None:
    User.objects.create_user("existing-host")

    output, token = _agent_host("existing-host")

    assert "exists and had no token" in output
    assert Token.objects.get(user__username="existing-host").key == token


@pytest.mark.django_db
def test_template_put_forbidden_when_agent_host_token(client: Client) -> None:
    _bootstrap()
    _, token = _agent_host("my-host")

    assert _put_template(client, token, "from the host") == 403


@pytest.mark.django_db
def test_template_put_allowed_when_admin_token(client: Client) -> None:
    _bootstrap()
    token = _admin_token()

    assert _health(client, token) == 200
    assert _put_template(client, token, "from the admin") == 200


@pytest.mark.django_db
def test_template_put_allowed_when_prompt_author_token(client: Client) -> None:
    _bootstrap()
    author = User.objects.create_user("ada")
    author.groups.add(Group.objects.get(name=PROMPT_AUTHORS_GROUP))
    token = Token.objects.create(user=author).key

    assert _put_template(client, token, "from ada") == 200


def _superuser() -> None:
    User.objects.create_superuser("boss", "", "s3cret-pass")


def _author() -> None:
    call_command("bootstrap", stdout=io.StringIO())
    User.objects.create_user("boss").groups.add(Group.objects.get(name=PROMPT_AUTHORS_GROUP))


def _inactive() -> None:
    User.objects.create_user("boss", is_active=False)


def _nobody() -> None:
    pass


@pytest.mark.parametrize(
    ("name", "setup", "message"),
    [
        ("boss", _superuser, "may change the template"),
        ("boss", _author, "may change the template"),
        ("boss", _inactive, "is inactive"),
        ("", _nobody, "name is empty"),
        ("bad name!", _nobody, "not a valid user name"),
        ("x" * 151, _nobody, "not a valid user name"),
    ],
)
@pytest.mark.django_db
def test_create_agent_host_refuses_when_name_unusable(
    name: str, setup: Callable[[], None], message: str
) -> None:
    setup()
    tokens = Token.objects.count()

    with pytest.raises(CommandError, match=message):
        _agent_host(name)

    assert Token.objects.count() == tokens
    assert not User.objects.filter(username=name, groups__name=AGENT_HOSTS_GROUP).exists()


# render_prompt


@pytest.mark.django_db
def test_render_prompt_default_template_when_agents_md_present(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")

    out, err = _render("--cwd", str(tmp_path))

    assert out == (
        "You are a helpful coding assistant.\nUse tabs.\n"
        f"The current working directory is {tmp_path}.\n"
    )
    assert err == ""


@pytest.mark.django_db
def test_render_prompt_default_template_when_agents_md_absent(tmp_path: Path) -> None:
    out, _ = _render("--cwd", str(tmp_path))

    assert out == (
        f"You are a helpful coding assistant.\nThe current working directory is {tmp_path}.\n"
    )


@pytest.mark.django_db
def test_render_prompt_uses_setting_when_default_template_set(
    tmp_path: Path, settings: Settings
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "DEFAULT_TEMPLATE": "cwd=[prompt:cwd]"}

    assert _render("--cwd", str(tmp_path)) == (f"cwd={tmp_path}", "")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("saved", "flags", "expected"),
    [
        # (saved versions, oldest first; flags; the template rendered)
        ([], [], "default"),
        (["one", "two"], [], "two"),
        (["one"], ["--default-template"], "default"),
        ([], ["--default-template"], "default"),
        (["one"], ["--template", "{file}"], "file"),
    ],
)
def test_render_prompt_chooses_template_when_saved_or_flagged(
    tmp_path: Path, settings: Settings, saved: list[str], flags: list[str], expected: str
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "DEFAULT_TEMPLATE": "default"}
    for text in saved:
        services.template_save(text=text)
    file = _template(tmp_path, "file")

    out, err = _render("--cwd", str(tmp_path), *(flag.format(file=file) for flag in flags))

    assert (out, err) == (expected, "")


def test_render_prompt_refuses_when_template_and_default_template_given(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="not allowed with argument"):
        _render("--cwd", str(tmp_path), "--default-template", "--template", "t.txt")


def test_render_prompt_refuses_when_the_saved_template_is_unreadable(tmp_path: Path) -> None:
    gone = OperationalError("no such table: sysprompt_templateversion")
    with (
        mock.patch.object(selectors, "template_current", side_effect=gone),
        pytest.raises(CommandError, match="--default-template or --template FILE"),
    ):
        _render("--cwd", str(tmp_path))


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
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'unmigrated.sqlite3'}"
    env["SYSPROMPT_ALLOWED_ROOTS"] = str(tmp_path)

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
    assert b"the library cannot be read" in result.stderr
