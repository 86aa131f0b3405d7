"""Start-up: `manage.py` commands and the app's load import no provider or MCP SDK.

Importing the anthropic, openai and MCP SDKs costs seconds of CPU (thousands of pydantic
models); they are imported where a model is called and at ``/mcp``'s first request.
Each case is a fresh interpreter, as a command or a server start is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SDKS = ("anthropic", "openai", "mcp", "mcp_types")
"""Top-level modules that must not be imported at start-up."""


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "DEBUG"} and not key.startswith(("SYSPROMPT_", "DJANGO_"))
    }
    env |= {
        "SECRET_KEY": "k" * 50,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SYSPROMPT_ENV_FILE": "",
    }
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _imported(importtime_stderr: str) -> set[str]:
    """The top-level modules ``-X importtime`` reports as imported."""
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_manage_py_check_imports_no_provider_or_mcp_sdk(tmp_path: Path) -> None:
    result = _run(["-X", "importtime", "manage.py", "check"], tmp_path)

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
    imported = _imported(result.stderr)
    assert "django" in imported  # the report is read right
    assert imported.isdisjoint(SDKS), sorted(imported & set(SDKS))


_APP_LOAD = """
import json
import sys

import config.wsgi
from django.urls import resolve

import config.urls
import sysprompt.evaluations.services
import sysprompt.evaluations.execution

assert resolve("/mcp").url_name == "mcp"
print(json.dumps(sorted(name for name in SDKS if name in sys.modules)))
""".replace("SDKS", repr(SDKS))


def test_app_load_imports_no_provider_or_mcp_sdk(tmp_path: Path) -> None:
    result = _run(["-c", _APP_LOAD], tmp_path)

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


_FIRST_CALL = """
import json
import sys

import django
django.setup()
from sysprompt.evaluations.providers import Call, ProviderError, provider_for
from sysprompt.model_endpoints import ModelEndpoint

endpoint = ModelEndpoint(
    name="local", kind="openai", model="m", base_url="http://127.0.0.1:9/v1",
    timeout=2, retries=0,
)
before = "openai" in sys.modules
try:
    provider_for(endpoint).complete(Call(system="s", messages=[{"role": "user", "content": "hi"}]))
except ProviderError as error:
    said = str(error)
print(json.dumps({"before": before, "after": sorted(n for n in SDKS if n in sys.modules),
                  "said": said}))
""".replace("SDKS", repr(SDKS))


def test_provider_imports_only_its_own_sdk_at_its_first_call(tmp_path: Path) -> None:
    result = _run(["-c", _FIRST_CALL], tmp_path)

    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["before"] is False
    assert outcome["after"] == ["openai"]
    assert outcome["said"] == "model local: could not connect to the provider"
