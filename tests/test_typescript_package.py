"""The TypeScript client (``packages/client-ts``, npm's ``@sysprompt/client``) as a
distribution: its version in step with the Python client's, no runtime dependency, its
development dependencies pinned exactly and locked, and both entries published as ES
modules and CommonJS with their types. (Its behaviour is tested by its own suite,
``scripts/test-ts``, which ``scripts/test`` runs.)"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "packages" / "client-ts"


def manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PACKAGE / "package.json").read_text())
    return data


def test_typescript_client_version_in_step_with_the_python_client() -> None:
    python = tomllib.loads((REPO / "packages" / "client" / "pyproject.toml").read_text())
    version = python["project"]["version"]
    assert manifest()["version"] == version
    source = (PACKAGE / "src" / "client.ts").read_text()
    constant = re.search(r'^export const VERSION = "([^"]+)";$', source, re.M)
    assert constant is not None and constant[1] == version


def test_typescript_client_has_no_runtime_dependency_and_locks_its_tools() -> None:
    package = manifest()
    for field in ("dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies"):
        assert field not in package, field
    tools = package["devDependencies"]
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in tools.values()), tools
    lock = json.loads((PACKAGE / "package-lock.json").read_text())
    assert lock["lockfileVersion"] == 3
    assert lock["packages"][""]["devDependencies"] == tools
    assert "dependencies" not in lock["packages"][""]
    for name, version in tools.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_typescript_client_publishes_both_entries_in_both_module_systems() -> None:
    package = manifest()
    assert package["license"] == "MIT"
    assert package["files"] == ["dist", "README.md"]
    assert package["engines"] == {"node": ">=20"}
    for entry, stem in ((".", "index"), ("./node", "node")):
        exports = package["exports"][entry]
        for kind, folder in (("import", "esm"), ("require", "cjs")):
            assert exports[kind] == {
                "types": f"./dist/{folder}/{stem}.d.ts",
                "default": f"./dist/{folder}/{stem}.js",
            }
        assert (PACKAGE / "src" / f"{stem}.ts").is_file()
