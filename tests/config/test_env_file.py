"""Settings from a ``.env`` file (docs/configuration.md, "The .env file"): read by
config/settings.py itself, so every process sees them; the environment wins; a line
that is not a setting is refused with its number; tests never read a developer's file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_file_load, env_file_values

REPO = Path(__file__).resolve().parents[2]

EXAMPLE = """\
# Models for evaluations, in every shell
SYSPROMPT_MODELS='{"local": {"kind": "openai", "model": "qwen3", "base_url": "http://127.0.0.1:8080/v1"}}'
export SYSPROMPT_GIT_TIMEOUT=5
LOG_LEVEL=warning   # a comment after a value
SYSPROMPT_COMPACTION_INSTRUCTIONS="Keep the # of the issue.\\nAnd the branch."
EMPTY=

"""


def test_env_file_values_reads_comments_quotes_and_export() -> None:
    values = env_file_values(EXAMPLE, "x")

    assert values == {
        "SYSPROMPT_MODELS": (
            '{"local": {"kind": "openai", "model": "qwen3", '
            '"base_url": "http://127.0.0.1:8080/v1"}}'
        ),
        "SYSPROMPT_GIT_TIMEOUT": "5",
        "LOG_LEVEL": "warning",
        "SYSPROMPT_COMPACTION_INSTRUCTIONS": "Keep the # of the issue.\nAnd the branch.",
        "EMPTY": "",
    }


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("OPENAI_API_KEY sk-secret-value", "line 2: not a setting; write NAME=value"),
        ('KEY="sk-secret-value', "line 2: not a setting"),
        ("=sk-secret-value", "line 2: not a setting"),
        ("OPENAI-API-KEY=sk-secret-value", "line 2: 'OPENAI-API-KEY' is not a variable name"),
        ("OPENAI_API_KEY", "line 2: OPENAI_API_KEY has no value; write OPENAI_API_KEY=value"),
    ],
)
def test_env_file_values_refuses_a_bad_line_naming_it_not_its_value(line: str, said: str) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        env_file_values(f"# settings\n{line}\nLOG_LEVEL=INFO\n", "/srv/app/.env")

    assert str(refused.value).startswith(f"/srv/app/.env, {said}")
    assert "sk-secret" not in str(refused.value)


def test_env_file_load_fills_only_what_the_environment_leaves_unset(tmp_path: Path) -> None:
    default = tmp_path / ".env"
    default.write_text("A=from-file\nB=from-file\n")
    environ = {"A": "from-environment"}

    assert env_file_load(default, environ) == default
    assert environ == {"A": "from-environment", "B": "from-file"}


def test_env_file_load_reads_the_file_sysprompt_env_file_names(tmp_path: Path) -> None:
    default, named = tmp_path / ".env", tmp_path / "other.env"
    default.write_text("A=default\n")
    named.write_text("A=named\n")
    environ = {"SYSPROMPT_ENV_FILE": str(named)}

    assert env_file_load(default, environ) == named
    assert environ["A"] == "named"


def test_env_file_load_reads_nothing_when_sysprompt_env_file_is_empty(tmp_path: Path) -> None:
    default = tmp_path / ".env"
    default.write_text("A=default\n")
    environ = {"SYSPROMPT_ENV_FILE": ""}

    assert env_file_load(default, environ) is None
    assert environ == {"SYSPROMPT_ENV_FILE": ""}


def test_env_file_load_skips_the_default_file_in_a_test_run(tmp_path: Path) -> None:
    default = tmp_path / ".env"
    default.write_text("A=default\n")
    environ = {"PYTEST_VERSION": "9"}

    assert env_file_load(default, environ) is None
    assert "A" not in environ


def test_env_file_load_refuses_a_named_file_that_is_missing(tmp_path: Path) -> None:
    environ = {"SYSPROMPT_ENV_FILE": str(tmp_path / "missing.env")}

    with pytest.raises(ImproperlyConfigured, match=r"SYSPROMPT_ENV_FILE=.*missing\.env: cannot"):
        env_file_load(tmp_path / ".env", environ)


def test_env_file_load_without_a_default_file_reads_nothing(tmp_path: Path) -> None:
    environ: dict[str, str] = {}

    assert env_file_load(tmp_path / ".env", environ) is None
    assert environ == {}


# Real processes: the settings module reads the file, the environment wins.

_SETTINGS = """
import json
import django
from django.conf import settings
django.setup()
print(json.dumps({"ENV_FILE": str(settings.ENV_FILE), "SYSPROMPT": settings.SYSPROMPT,
                  "LOG_LEVEL": settings.LOG_LEVEL}))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "DEBUG", "LOG_LEVEL", "PYTEST_VERSION"}
        and not key.startswith(("SYSPROMPT_", "DJANGO_"))
    }
    return env | {"SECRET_KEY": "k" * 50, "DJANGO_SETTINGS_MODULE": "config.settings"} | extra


def _python(code: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """manage.py and config/ in a folder of their own (the apps come from the install)."""
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy(REPO / "manage.py", root)
    shutil.copytree(REPO / "config", root / "config", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_settings_read_the_env_file_beside_manage_py_and_the_environment_wins(
    checkout: Path,
) -> None:
    (checkout / ".env").write_text(
        "# this checkout's settings\n"
        'SYSPROMPT_MODELS={"local": {"kind": "openai", "model": "qwen3"}}\n'
        "SYSPROMPT_GIT_TIMEOUT=5\n"
        "LOG_LEVEL=ERROR\n"
    )

    result = _python(_SETTINGS, checkout, _env(SYSPROMPT_GIT_TIMEOUT="7"))

    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert loaded["ENV_FILE"] == str(checkout / ".env")
    assert loaded["SYSPROMPT"]["MODELS"] == {"local": {"kind": "openai", "model": "qwen3"}}
    assert loaded["SYSPROMPT"]["GIT_TIMEOUT"] == 7.0  # the environment's
    assert loaded["LOG_LEVEL"] == "ERROR"


def test_settings_in_a_test_run_leave_the_env_file_beside_manage_py_unread(
    checkout: Path,
) -> None:
    (checkout / ".env").write_text("SYSPROMPT_GIT_TIMEOUT=5\n")

    result = _python(_SETTINGS, checkout, _env(PYTEST_VERSION="9"))

    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert loaded["ENV_FILE"] == "None"
    assert "GIT_TIMEOUT" not in loaded["SYSPROMPT"]


def test_manage_py_refuses_to_start_on_a_bad_line_naming_it(tmp_path: Path) -> None:
    env_file = tmp_path / "sysprompt.env"
    env_file.write_text("SYSPROMPT_GIT_TIMEOUT=5\n\nOPENAI_API_KEY sk-secret-value\n")

    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env=_env(SYSPROMPT_ENV_FILE=str(env_file)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode != 0
    assert f"{env_file}, line 3: not a setting" in result.stderr
    assert "sk-secret" not in result.stderr


def test_env_file_values_counts_blank_and_continued_lines_in_a_bad_line_number() -> None:
    text = '# settings\n\nA="first\nsecond"\n\n\nB x\n'

    with pytest.raises(ImproperlyConfigured, match=r"^f, line 7: not a setting"):
        env_file_values(text, "f")


def test_env_file_example_of_the_docs_reads_as_they_say() -> None:
    docs = (REPO / "docs" / "configuration.md").read_text()
    example = "# .env" + docs.split("```sh\n# .env", 1)[1].split("```", 1)[0]

    values = env_file_values(example, "docs")

    assert set(json.loads(values["SYSPROMPT_MODELS"])) == {"local", "gpt"}
    assert values["SYSPROMPT_ALLOWED_ROOTS"] == "/srv/work:/home/me"
    assert values["LOG_LEVEL"] == "WARNING"
