"""The SYSPROMPT app settings, and the Django settings read from the environment."""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.checks import WARNING
from django.core.exceptions import ImproperlyConfigured
from pytest_django import Settings

from config.env import env_bool, local_secret_key
from sysprompt.conf import (
    DEFAULT_COMPACTION_INSTRUCTIONS,
    DEFAULT_TEMPLATE,
    AppSettings,
    app_settings,
    resolver_options,
)
from sysprompt.prompts.checks import check_app_settings, check_git_confinement
from sysprompt.prompts.token_counts import count_tokens
from sysprompt_core.sandbox import landlock_status
from sysprompt_core.variables import ResolverOptions

REPO = Path(__file__).resolve().parents[2]
CONFIG_VARIABLES = ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DATABASE_URL")


def test_app_settings_defaults_when_unset(settings: Settings) -> None:
    settings.SYSPROMPT = {}

    assert app_settings() == AppSettings(
        allowed_roots=(os.path.expanduser("~"),),
        git_timeout=2.0,
        max_file_bytes=1_048_576,
        max_template_bytes=262_144,
        default_template=DEFAULT_TEMPLATE,
        compaction_instructions=DEFAULT_COMPACTION_INSTRUCTIONS,
        max_prompt_bytes=1_048_576,
        max_read_bytes=8 * 1_048_576,
        parse_cache_bytes=32 * 1_048_576,
    )


def test_default_template_is_the_documented_one() -> None:
    assert DEFAULT_TEMPLATE == (
        "You are a helpful coding assistant.\n[if file:AGENTS.md]\n[file:AGENTS.md]\n"
        "[endif]\nThe current working directory is [prompt:cwd].\n"
    )


def test_app_settings_defaults_without_sysprompt_setting(settings: Settings) -> None:
    del settings.SYSPROMPT

    assert app_settings().git_timeout == 2.0


@pytest.mark.parametrize(
    ("key", "value", "attribute", "expected"),
    [
        ("ALLOWED_ROOTS", ["/srv/a", "/srv/b/"], "allowed_roots", ("/srv/a", "/srv/b")),
        ("ALLOWED_ROOTS", ("/x",), "allowed_roots", ("/x",)),
        ("ALLOWED_ROOTS", [], "allowed_roots", ()),
        ("GIT_TIMEOUT", 0.25, "git_timeout", 0.25),
        ("GIT_TIMEOUT", 3, "git_timeout", 3.0),
        ("GIT_WORKERS", 4, "git_workers", 4),
        ("GIT_QUEUE_TIMEOUT", 30, "git_queue_timeout", 30.0),
        ("GIT_MEMORY_LIMIT", 268_435_456, "git_memory_limit", 268_435_456),
        ("GIT_RECYCLE_BYTES", 4_194_304, "git_recycle_bytes", 4_194_304),
        ("GIT_LANDLOCK", False, "git_landlock", False),
        ("GIT_ALLOW_UNCONFINED", True, "git_allow_unconfined", True),
        ("MAX_FILE_BYTES", 10, "max_file_bytes", 10),
        ("DEFAULT_TEMPLATE", "Hi [prompt:model]", "default_template", "Hi [prompt:model]"),
        ("DEFAULT_TEMPLATE", "", "default_template", ""),
        ("MAX_TEMPLATE_BYTES", 1000, "max_template_bytes", 1000),
        ("MAX_PROMPT_BYTES", 1, "max_prompt_bytes", 1),
        ("MAX_PROMPT_BYTES", 5_000_000, "max_prompt_bytes", 5_000_000),
        ("MAX_READ_BYTES", 4096, "max_read_bytes", 4096),
        ("PARSE_CACHE_BYTES", 65536, "parse_cache_bytes", 65536),
        ("COMPACTION_INSTRUCTIONS", "Summarise.", "compaction_instructions", "Summarise."),
        ("EVAL_MAX_CALLS_PER_RUN", 50, "eval_max_calls_per_run", 50),
        ("EVAL_MAX_RUNS_PER_USER", 1, "eval_max_runs_per_user", 1),
        ("EVAL_DAILY_BUDGET", 5, "eval_daily_budget", 5.0),
        ("EVAL_DAILY_BUDGET", 0.25, "eval_daily_budget", 0.25),
        ("EVAL_DAILY_BUDGET", None, "eval_daily_budget", None),
    ],
)
def test_app_settings_override_when_set(
    settings: Settings, key: str, value: object, attribute: str, expected: object
) -> None:
    settings.SYSPROMPT = {key: value}

    assert getattr(app_settings(), attribute) == expected


def test_app_settings_rereads_when_settings_change(settings: Settings) -> None:
    settings.SYSPROMPT = {"GIT_TIMEOUT": 1.0}
    assert app_settings().git_timeout == 1.0

    settings.SYSPROMPT = {"GIT_TIMEOUT": 5.0}
    assert app_settings().git_timeout == 5.0


def test_app_settings_unknown_key_is_refused(settings: Settings) -> None:
    settings.SYSPROMPT = {"GIT_TIMOUT": 1.0}

    with pytest.raises(ImproperlyConfigured) as caught:
        app_settings()

    message = str(caught.value)
    assert "'GIT_TIMOUT'" in message
    assert "Did you mean 'GIT_TIMEOUT'?" in message
    assert (
        "ALLOWED_ROOTS, COMPACTION_INSTRUCTIONS, DEFAULT_TEMPLATE, EVAL_CLAIM_SECONDS, "
        "EVAL_DAILY_BUDGET, EVAL_DEFAULT_MODEL, EVAL_MAX_CALLS_PER_RUN, EVAL_MAX_OUTPUT_CHARS, "
        "EVAL_MAX_RUNS_PER_USER, EVAL_TASKS_QUEUE, GIT_ALLOW_UNCONFINED, "
        "GIT_LANDLOCK, "
        "GIT_MEMORY_LIMIT, GIT_QUEUE_TIMEOUT, GIT_RECYCLE_BYTES, GIT_TIMEOUT, GIT_WORKERS, "
        "MAX_FILE_BYTES, "
        "MAX_PROMPT_BYTES, MAX_READ_BYTES, MAX_TEMPLATE_BYTES, MCP_WRITE, MODELS, "
        "PARSE_CACHE_BYTES, SERVER_RESOLVES, TASKS_QUEUE, TOKEN_RATIOS, "
        "WEBHOOK_ALLOW_HTTP_HOSTS" in message
    )


def test_app_settings_unknown_key_without_near_miss_has_no_hint(
    settings: Settings,
) -> None:
    settings.SYSPROMPT = {"COLOUR": "blue"}

    with pytest.raises(ImproperlyConfigured, match="'COLOUR'") as caught:
        app_settings()

    assert "Did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ALLOWED_ROOTS", "/home/ada"),
        ("ALLOWED_ROOTS", ["relative/path"]),
        ("ALLOWED_ROOTS", [3]),
        ("GIT_TIMEOUT", "2"),
        ("GIT_TIMEOUT", True),
        ("GIT_TIMEOUT", 0),
        ("GIT_TIMEOUT", -1.0),
        ("GIT_TIMEOUT", math.inf),
        ("GIT_TIMEOUT", math.nan),
        ("GIT_WORKERS", 0),
        ("GIT_QUEUE_TIMEOUT", 0),
        ("GIT_QUEUE_TIMEOUT", "10"),
        ("GIT_WORKERS", 1.5),
        ("GIT_MEMORY_LIMIT", 0),
        ("GIT_MEMORY_LIMIT", "512M"),
        ("GIT_RECYCLE_BYTES", 0),
        ("GIT_LANDLOCK", "false"),
        ("GIT_LANDLOCK", 0),
        ("GIT_ALLOW_UNCONFINED", "true"),
        ("GIT_ALLOW_UNCONFINED", 1),
        ("MAX_FILE_BYTES", 1.5),
        ("MAX_FILE_BYTES", True),
        ("MAX_FILE_BYTES", 0),
        ("MAX_FILE_BYTES", "1MB"),
        ("DEFAULT_TEMPLATE", None),
        ("DEFAULT_TEMPLATE", b"bytes"),
        ("MAX_TEMPLATE_BYTES", 0),
        ("MAX_TEMPLATE_BYTES", "256KB"),
        ("MAX_PROMPT_BYTES", 0),
        ("MAX_PROMPT_BYTES", -1),
        ("MAX_PROMPT_BYTES", 1.0),
        ("MAX_PROMPT_BYTES", "1MB"),
        ("MAX_READ_BYTES", 0),
        ("MAX_READ_BYTES", True),
        ("MAX_READ_BYTES", "8MiB"),
        ("PARSE_CACHE_BYTES", 0),
        ("PARSE_CACHE_BYTES", "32MiB"),
        ("COMPACTION_INSTRUCTIONS", None),
        ("EVAL_MAX_CALLS_PER_RUN", 0),
        ("EVAL_MAX_CALLS_PER_RUN", "1000"),
        ("EVAL_MAX_RUNS_PER_USER", 0),
        ("EVAL_MAX_RUNS_PER_USER", 1.5),
        ("EVAL_DAILY_BUDGET", 0),
        ("EVAL_DAILY_BUDGET", -2.0),
        ("EVAL_DAILY_BUDGET", "10"),
        ("EVAL_DAILY_BUDGET", True),
        ("EVAL_DAILY_BUDGET", math.inf),
    ],
)
def test_app_settings_wrong_type_is_refused(settings: Settings, key: str, value: object) -> None:
    settings.SYSPROMPT = {key: value}

    with pytest.raises(ImproperlyConfigured, match=rf"settings\.SYSPROMPT\['{key}'\] must be"):
        app_settings()


def test_app_settings_token_ratios_by_provider_in_any_case(settings: Settings) -> None:
    settings.SYSPROMPT = {"TOKEN_RATIOS": {"Anthropic ": 1.18, "google": 1}}

    conf = app_settings()

    assert conf.token_ratios == {"anthropic": 1.18, "google": 1.0}
    assert (conf.token_ratio("ANTHROPIC"), conf.token_ratio("mistral")) == (1.18, None)
    settings.SYSPROMPT = {}
    assert app_settings().token_ratios == {}


def test_app_settings_token_ratio_for_openai_calibrates_its_other_models(
    settings: Settings,
) -> None:
    """A model behind an OpenAI-compatible endpoint that is not OpenAI's is an estimate:
    the ratio for "openai" calibrates it; OpenAI's own models stay exact."""
    settings.SYSPROMPT = {"TOKEN_RATIOS": {"openai": 1.1}}

    assert app_settings().token_ratio("openai") == 1.1
    qwen = count_tokens("Hello there, reader", provider="openai", model="qwen3")
    gpt = count_tokens("Hello there, reader", provider="openai", model="gpt-4o")
    assert gpt.tokens is not None
    assert (qwen.exact, qwen.ratio, qwen.tokens) == (False, 1.1, round(gpt.tokens * 1.1))
    assert (gpt.exact, gpt.ratio) == (True, None)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1.18], r"\['TOKEN_RATIOS'\] must be an object of provider names to ratios"),
        (
            {"anthropic": "1.18"},
            r"\['TOKEN_RATIOS'\]\['anthropic'\] must be a number from 0.5 to 3",
        ),
        ({"anthropic": 0}, r"\['TOKEN_RATIOS'\]\['anthropic'\] must be a number from 0.5 to 3"),
        ({"anthropic": 0.4}, r"\['TOKEN_RATIOS'\]\['anthropic'\] must be a number from 0.5 to 3"),
        ({"google": 3.5}, r"\['TOKEN_RATIOS'\]\['google'\] must be a number from 0.5 to 3"),
        ({"google": math.nan}, r"\['TOKEN_RATIOS'\]\['google'\] must be a number"),
        ({"google": True}, r"\['TOKEN_RATIOS'\]\['google'\] must be a number"),
        ({"": 1.2}, r"\['TOKEN_RATIOS'\] must be keyed by provider names"),
        ({"Google": 1.1, "google": 1.2}, r"\['TOKEN_RATIOS'\] names 'google' twice"),
    ],
)
def test_app_settings_token_ratios_refused_when_malformed(
    settings: Settings, value: object, message: str
) -> None:
    settings.SYSPROMPT = {"TOKEN_RATIOS": value}

    with pytest.raises(ImproperlyConfigured, match=rf"settings\.SYSPROMPT{message}"):
        app_settings()


def test_app_settings_not_a_dict_is_refused(settings: Settings) -> None:
    settings.SYSPROMPT = [("GIT_TIMEOUT", 1.0)]

    with pytest.raises(ImproperlyConfigured, match="must be a dict"):
        app_settings()


def test_resolver_options_follow_app_settings(settings: Settings) -> None:
    settings.SYSPROMPT = {
        "ALLOWED_ROOTS": ["/srv"],
        "GIT_TIMEOUT": 0.5,
        "MAX_FILE_BYTES": 64,
        "MAX_READ_BYTES": 128,
        "MAX_PROMPT_BYTES": 256,
        "GIT_WORKERS": 3,
        "GIT_MEMORY_LIMIT": 100_000_000,
        "GIT_LANDLOCK": False,
        "GIT_ALLOW_UNCONFINED": True,
        "GIT_QUEUE_TIMEOUT": 7.5,
    }

    assert resolver_options() == ResolverOptions(
        git_timeout=0.5,
        allowed_roots=("/srv",),
        max_file_bytes=64,
        max_read_bytes=128,
        max_prompt_bytes=256,
        git_workers=3,
        git_memory_limit=100_000_000,
        git_landlock=False,
        git_allow_unconfined=True,
        git_queue_timeout=7.5,
    )


def test_check_app_settings_reports_bad_settings(settings: Settings) -> None:
    settings.SYSPROMPT = {"NOPE": 1}

    [error] = check_app_settings()

    assert error.id == "sysprompt.E001"
    assert "'NOPE'" in error.msg


def test_check_app_settings_passes_good_settings(settings: Settings) -> None:
    settings.SYSPROMPT = {"GIT_TIMEOUT": 1}

    assert check_app_settings() == []


def test_check_git_confinement_warns_reads_nothing_when_landlock_is_off(
    settings: Settings,
) -> None:
    settings.SYSPROMPT = {"GIT_LANDLOCK": False}

    [warning] = check_git_confinement()

    assert warning.id == "sysprompt.W002"
    assert warning.level == WARNING
    assert warning.msg.startswith(
        "git: values will not be read: git readers cannot be confined by the kernel here: "
        "Landlock is switched off (SYSPROMPT_GIT_LANDLOCK=false)"
    )
    assert "SYSPROMPT_GIT_ALLOW_UNCONFINED=true" in (warning.hint or "")


def test_check_git_confinement_warns_unconfined_when_accepted(settings: Settings) -> None:
    settings.SYSPROMPT = {"GIT_LANDLOCK": False, "GIT_ALLOW_UNCONFINED": True}

    [warning] = check_git_confinement()

    assert warning.id == "sysprompt.W001"
    assert warning.msg.startswith(
        "git readers are not confined by the kernel: Landlock is switched off "
        "(SYSPROMPT_GIT_LANDLOCK=false)"
    )
    assert warning.msg.endswith("they read anyway (SYSPROMPT_GIT_ALLOW_UNCONFINED=true).")
    assert "may open files outside the roots" in (warning.hint or "")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "(sysprompt.W002) git: values will not be read: git readers cannot be confined"),
        (
            {"SYSPROMPT_GIT_ALLOW_UNCONFINED": "true"},
            "(sysprompt.W001) git readers are not confined by the kernel: Landlock is "
            "unavailable: the kernel has no Landlock",
        ),
    ],
)
def test_check_git_confinement_warns_through_manage_py_check_without_landlock(
    env: dict[str, str], expected: str
) -> None:
    """``manage.py check`` in a process whose Landlock system calls are blocked."""
    result = _python(_CHECK, blocked="landlock", **env)

    assert result.returncode == 0, result.stderr
    assert expected in result.stderr


@pytest.mark.skipif(not landlock_status().available, reason="this kernel has no Landlock")
def test_check_git_confinement_is_silent_where_landlock_confines(settings: Settings) -> None:
    settings.SYSPROMPT = {}

    assert check_git_confinement() == []


def test_check_git_confinement_is_silent_when_the_server_reads_no_repository(
    settings: Settings,
) -> None:
    settings.SYSPROMPT = {"GIT_LANDLOCK": False, "SERVER_RESOLVES": ["system"]}

    assert check_git_confinement() == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("Yes", True), (" ON ", True), ("0", False), ("", False)]
    + [("false", False), ("No", False), ("off", False)],
)
def test_env_bool_parses_when_set(raw: str, expected: bool) -> None:
    assert env_bool("DEBUG", default=not expected, environ={"DEBUG": raw}) is expected


def test_env_bool_refuses_when_unrecognised() -> None:
    with pytest.raises(ImproperlyConfigured, match="DEBUG='maybe'"):
        env_bool("DEBUG", default=False, environ={"DEBUG": "maybe"})


def test_local_secret_key_creates_private_file_when_missing(tmp_path: Path) -> None:
    path = tmp_path / ".secret_key"

    key = local_secret_key(path)

    assert len(key) >= 50
    assert path.read_text().strip() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_local_secret_key_is_stable_when_file_exists(tmp_path: Path) -> None:
    path = tmp_path / ".secret_key"

    assert local_secret_key(path) == local_secret_key(path)


def test_local_secret_key_falls_back_when_unwritable(tmp_path: Path) -> None:
    path = tmp_path / "missing-dir" / ".secret_key"

    assert len(local_secret_key(path)) >= 50
    assert not path.exists()


def test_tests_run_with_a_secret_key() -> None:
    assert django_settings.SECRET_KEY


# Settings read from the environment: a fresh interpreter per case.

_DUMP = """
import json
import django
from django.conf import settings
django.setup()
db = settings.DATABASES["default"]
print(json.dumps({
    "DEBUG": settings.DEBUG,
    "ALLOWED_HOSTS": settings.ALLOWED_HOSTS,
    "SYSPROMPT": settings.SYSPROMPT,
    "ENGINE": db["ENGINE"],
    "NAME": str(db["NAME"]),
    "OPTIONS": db.get("OPTIONS", {}),
}))
"""


_CHECK = """
import django
from django.core.management import call_command
django.setup()
call_command("check")
"""


def _python(code: str, blocked: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter; ``blocked``: under ``tests.core.sandbox.blocked``."""
    clean = {
        key: value
        for key, value in os.environ.items()
        if key not in CONFIG_VARIABLES and not key.startswith(("SYSPROMPT_", "DJANGO_"))
    }
    clean |= {"DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "k" * 50} | env
    return subprocess.run(
        [*(_BLOCKED + [blocked] if blocked else []), sys.executable, "-c", code],
        cwd=REPO,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


_BLOCKED = [sys.executable, "-m", "tests.core.sandbox.blocked"]


def _settings_from(**env: str) -> dict[str, Any]:
    result = _python(_DUMP, **env)
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def test_settings_defaults_when_environment_empty() -> None:
    loaded = _settings_from()

    assert loaded["DEBUG"] is False
    assert loaded["ALLOWED_HOSTS"] == ["127.0.0.1", "localhost"]
    assert loaded["SYSPROMPT"] == {}
    assert loaded["ENGINE"] == "django.db.backends.sqlite3"
    assert loaded["NAME"] == str(REPO / "db.sqlite3")
    assert loaded["OPTIONS"] == {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }


@pytest.mark.parametrize(
    ("env", "key", "expected"),
    [
        ({"SYSPROMPT_ALLOWED_ROOTS": "/srv/a:/srv/b"}, "ALLOWED_ROOTS", ["/srv/a", "/srv/b"]),
        ({"SYSPROMPT_ALLOWED_ROOTS": "/srv/a::"}, "ALLOWED_ROOTS", ["/srv/a"]),
        ({"SYSPROMPT_ALLOWED_ROOTS": ""}, "ALLOWED_ROOTS", []),
        ({"SYSPROMPT_GIT_TIMEOUT": "0.5"}, "GIT_TIMEOUT", 0.5),
        ({"SYSPROMPT_MAX_FILE_BYTES": "2048"}, "MAX_FILE_BYTES", 2048),
        ({"SYSPROMPT_MAX_PROMPT_BYTES": "4096"}, "MAX_PROMPT_BYTES", 4096),
        ({"SYSPROMPT_MAX_READ_BYTES": "65536"}, "MAX_READ_BYTES", 65536),
        ({"SYSPROMPT_GIT_WORKERS": "3"}, "GIT_WORKERS", 3),
        ({"SYSPROMPT_GIT_QUEUE_TIMEOUT": "4.5"}, "GIT_QUEUE_TIMEOUT", 4.5),
        ({"SYSPROMPT_GIT_MEMORY_LIMIT": "268435456"}, "GIT_MEMORY_LIMIT", 268435456),
        ({"SYSPROMPT_GIT_LANDLOCK": "false"}, "GIT_LANDLOCK", False),
        ({"SYSPROMPT_GIT_LANDLOCK": "on"}, "GIT_LANDLOCK", True),
        ({"SYSPROMPT_GIT_ALLOW_UNCONFINED": "true"}, "GIT_ALLOW_UNCONFINED", True),
        ({"SYSPROMPT_GIT_ALLOW_UNCONFINED": "0"}, "GIT_ALLOW_UNCONFINED", False),
        ({"SYSPROMPT_PARSE_CACHE_BYTES": "1048576"}, "PARSE_CACHE_BYTES", 1_048_576),
        ({"SYSPROMPT_EVAL_MAX_CALLS_PER_RUN": "200"}, "EVAL_MAX_CALLS_PER_RUN", 200),
        ({"SYSPROMPT_EVAL_MAX_RUNS_PER_USER": "3"}, "EVAL_MAX_RUNS_PER_USER", 3),
        ({"SYSPROMPT_EVAL_DAILY_BUDGET": "12.5"}, "EVAL_DAILY_BUDGET", 12.5),
        (
            {"SYSPROMPT_TOKEN_RATIOS": '{"anthropic": 1.18, "google": 0.9}'},
            "TOKEN_RATIOS",
            {"anthropic": 1.18, "google": 0.9},
        ),
    ],
)
def test_settings_sysprompt_when_environment_set(
    env: dict[str, str], key: str, expected: object
) -> None:
    assert _settings_from(**env)["SYSPROMPT"] == {key: expected}


def test_settings_hosts_and_debug_when_environment_set() -> None:
    loaded = _settings_from(DEBUG="true", ALLOWED_HOSTS="example.com, .example.org")

    assert loaded["DEBUG"] is True
    assert loaded["ALLOWED_HOSTS"] == ["example.com", ".example.org"]


def test_settings_postgres_when_database_url_set() -> None:
    loaded = _settings_from(DATABASE_URL="postgres://u:p@127.0.0.1:5432/sysprompt")

    assert loaded["ENGINE"] == "django.db.backends.postgresql"
    assert loaded["NAME"] == "sysprompt"
    assert loaded["OPTIONS"] == {}


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"SYSPROMPT_GIT_TIMEOUT": "soon"}, "SYSPROMPT_GIT_TIMEOUT='soon' is not a number"),
        ({"SYSPROMPT_MAX_FILE_BYTES": "1MB"}, "SYSPROMPT_MAX_FILE_BYTES='1MB' is not a whole"),
        ({"SYSPROMPT_MAX_PROMPT_BYTES": "1M"}, "SYSPROMPT_MAX_PROMPT_BYTES='1M' is not a whole"),
        ({"SYSPROMPT_MAX_READ_BYTES": "8M"}, "SYSPROMPT_MAX_READ_BYTES='8M' is not a whole"),
        ({"SYSPROMPT_GIT_WORKERS": "two"}, "SYSPROMPT_GIT_WORKERS='two' is not a whole"),
        ({"SYSPROMPT_GIT_LANDLOCK": "maybe"}, "SYSPROMPT_GIT_LANDLOCK='maybe' is not a boolean"),
        (
            {"SYSPROMPT_GIT_ALLOW_UNCONFINED": "sure"},
            "SYSPROMPT_GIT_ALLOW_UNCONFINED='sure' is not a boolean",
        ),
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
    ],
)
def test_settings_refused_when_environment_malformed(env: dict[str, str], needle: str) -> None:
    result = _python(_DUMP, **env)

    assert result.returncode != 0
    assert needle in result.stderr


def test_manage_check_fails_when_allowed_roots_relative() -> None:
    result = _python(
        "import sys; from django.core.management import execute_from_command_line;"
        "execute_from_command_line(['manage.py', 'check'])",
        SYSPROMPT_ALLOWED_ROOTS="relative/dir",
    )

    assert result.returncode != 0
    assert "sysprompt.E001" in result.stderr


@pytest.mark.parametrize("variable", ["SYSPROMPT_MAX_PROMPT_BYTES", "SYSPROMPT_MAX_READ_BYTES"])
def test_manage_check_fails_when_bound_not_positive(variable: str) -> None:
    result = _python(
        "import sys; from django.core.management import execute_from_command_line;"
        "execute_from_command_line(['manage.py', 'check'])",
        **{variable: "0"},
    )

    assert result.returncode != 0
    assert "sysprompt.E001" in result.stderr
    assert "a positive whole number" in result.stderr


def test_wsgi_refuses_to_start_when_secret_key_missing() -> None:
    result = _python("import config.wsgi", SECRET_KEY="")

    assert result.returncode != 0
    assert "The SECRET_KEY setting must not be empty" in result.stderr


def test_wsgi_starts_when_secret_key_set() -> None:
    result = _python("import config.wsgi")

    assert result.returncode == 0, result.stderr
