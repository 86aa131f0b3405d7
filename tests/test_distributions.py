"""The repository's distributions and the import contracts between them.

* The core (``packages/core``) installs alone in a fresh virtual environment, without
  Django, and renders a template with git and file variables there; the client
  (``packages/client``) installs beside it, still without Django.
* The import contracts in ``pyproject.toml`` hold on the tree, and each one fails when
  the import it forbids is added (on a copy of the tree).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from tests.core.variables.support import git, make_repo

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = {
    "sysprompt_core": REPO / "packages" / "core" / "src" / "sysprompt_core",
    "sysprompt_client": REPO / "packages" / "client" / "src" / "sysprompt_client",
    "sysprompt": REPO / "sysprompt",
    "config": REPO / "config",
}


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_contracts_kept_on_the_tree() -> None:
    done = lint_imports(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four packages and the contracts, copied: the copy is what gets broken."""
    root = tmp_path_factory.mktemp("tree")
    for name, source in PACKAGES.items():
        shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    # The contracts exactly as the project states them: its [tool.importlinter] tables.
    text = (REPO / "pyproject.toml").read_text()
    start = text.index("[tool.importlinter]")
    end = text.index("\n[", text.rindex("[[tool.importlinter.contracts]]"))
    (root / "pyproject.toml").write_text(text[start:end] + "\n")
    return root


@pytest.mark.parametrize(
    ("module", "forbidden", "contracts"),
    [
        # The client imports the core, so Django in the core breaks the client's too.
        (
            "sysprompt_core/template/lexer.py",
            "import django",
            {"core-alone", "client-without-server"},
        ),
        (  # the client's MCP command checks a call's cwd with the core's paths
            "sysprompt_core/paths.py",
            "import sysprompt.conf",
            {"core-alone", "client-without-server"},
        ),
        (
            "sysprompt_core/template/parser.py",
            "import sysprompt_core.variables",
            {"engine-without-resolvers"},
        ),
        ("sysprompt_client/cache.py", "import django", {"client-without-server"}),
        ("sysprompt/api/views.py", "import sysprompt.prompts.models", {"views-through-services"}),
        (
            "sysprompt/editor/forms.py",
            "import sysprompt.library.models",
            {"views-through-services"},
        ),
        ("sysprompt/library/services.py", "import sysprompt.prompts.services", {"app-layers"}),
        ("sysprompt/events/services.py", "import sysprompt.library.services", {"app-layers"}),
        ("sysprompt/events/records.py", "import sysprompt.accounts.services", {"app-layers"}),
        (
            "sysprompt/editor/views.py",
            "import sysprompt.events.models",
            {"views-through-services"},
        ),
        ("sysprompt/prompts/services.py", "import sysprompt.releases.selectors", {"app-layers"}),
        ("sysprompt/releases/services.py", "import sysprompt.accounts.services", {"app-layers"}),
        (
            "sysprompt/api/views.py",
            "import sysprompt.releases.models",
            {"views-through-services"},
        ),
        ("sysprompt/prompts/services.py", "import sysprompt.transfer.services", {"app-layers"}),
        ("sysprompt/prompts/services.py", "import config.settings", {"apps-without-project"}),
    ],
)
def test_contract_broken_when_forbidden_import_added(
    tree_copy: Path, module: str, forbidden: str, contracts: set[str]
) -> None:
    path = tree_copy / module
    original = path.read_text()
    try:
        path.write_text(original + f"\n{forbidden}  # added by the test\n")
        done = lint_imports(tree_copy)
    finally:
        path.write_text(original)
    assert done.returncode != 0
    names = {c["id"]: c["name"] for c in _contracts()}
    for contract in contracts:
        assert f"{names[contract]} BROKEN" in " ".join(done.stdout.split())
    assert f"{len(contracts)} broken" in done.stdout


def test_contracts_kept_on_the_unbroken_copy(tree_copy: Path) -> None:
    done = lint_imports(tree_copy)
    assert done.returncode == 0, done.stdout + done.stderr


def _contracts() -> list[dict[str, str]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    contracts: list[dict[str, str]] = config["tool"]["importlinter"]["contracts"]
    return contracts


RENDER = textwrap.dedent(
    """
    import importlib.util, json, sys
    from sysprompt_core.diff import unified_diff
    from sysprompt_core.variables import ResolveContext, ResolverOptions, resolve_prompt

    project = sys.argv[1]
    template = "On [git:branch]:\\n[git:status]\\n[if file:AGENTS.md][file:AGENTS.md][endif]"
    options = ResolverOptions(allowed_roots=(sys.argv[2],))
    prompt = resolve_prompt(template, ResolveContext(cwd=project, options=options)).prompt
    print(json.dumps({
        "prompt": prompt,
        "diff": unified_diff(prompt, prompt.upper()).added,
        "django_loaded": any(m.split(".")[0] == "django" for m in sys.modules),
        "django_installed": importlib.util.find_spec("django") is not None,
    }))
    """
)


def test_core_installs_alone_and_renders_without_django(tmp_path: Path) -> None:
    core = tmp_path / "core"  # installed from a copy: pip leaves build/ behind
    shutil.copytree(REPO / "packages" / "core", core, ignore=shutil.ignore_patterns("build"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        + ["-c", str(REPO / "requirements-lock.txt"), str(core)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    project = make_repo(tmp_path / "root" / "project")
    git(project, "checkout", "--quiet", "-b", "feature/alone")
    (project / "AGENTS.md").write_text("Use tabs.\n")

    done = subprocess.run(
        [str(python), "-c", RENDER, str(project), str(tmp_path / "root")],
        cwd=tmp_path,  # not the checkout: nothing of the server is importable from here
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    result = json.loads(done.stdout)
    assert result == {
        "prompt": "On feature/alone:\n?? AGENTS.md\nUse tabs.",
        "diff": 3,  # the line diff, with its diff-match-patch
        "django_loaded": False,
        "django_installed": False,
    }


CLIENT = textwrap.dedent(
    """
    import importlib.util, json, sys
    import sysprompt_client
    from sysprompt_client import openai_chat

    body = openai_chat([{"role": "user", "content": "hi"}], "Be brief.")
    print(json.dumps({
        "client": [n for n in ("AsyncClient", "Client", "openai_chat", "anthropic_messages")
                   if n in sysprompt_client.__all__],
        "first": body["messages"][0],
        "django_loaded": any(m.split(".")[0] == "django" for m in sys.modules),
        "django_installed": importlib.util.find_spec("django") is not None,
    }))
    """
)


def test_client_installs_with_the_core_alone(tmp_path: Path) -> None:
    for name in ("core", "client"):
        shutil.copytree(
            REPO / "packages" / name, tmp_path / name, ignore=shutil.ignore_patterns("build")
        )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        + ["-c", str(REPO / "requirements-lock.txt")]
        + [str(tmp_path / "core"), str(tmp_path / "client")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]

    done = subprocess.run(
        [str(python), "-c", CLIENT],
        cwd=tmp_path,
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    result = json.loads(done.stdout)
    assert result == {
        "client": ["AsyncClient", "Client", "openai_chat", "anthropic_messages"],
        "first": {"role": "system", "content": "Be brief."},
        "django_loaded": False,
        "django_installed": False,
    }
    # The console command installs with the client and runs without Django (exit 2:
    # no server named).
    bare = {key: value for key, value in os.environ.items() if not key.startswith("SYSPROMPT")}
    command = str(venv / "bin" / "sysprompt-eval")
    helped = subprocess.run([command, "--help"], capture_output=True, text=True, env=bare)
    unnamed = subprocess.run(
        [command, "--suite", "s", "--candidate", "latest"], capture_output=True, text=True, env=bare
    )
    assert helped.returncode == 0 and helped.stdout.startswith("usage: sysprompt-eval")
    assert unnamed.returncode == 2 and "give --url and --token" in unnamed.stderr
