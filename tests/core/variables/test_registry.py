"""The registry: self-registering modules, an immutable table, the catalog."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from sysprompt_core.template import lint
from sysprompt_core.variables import (
    BUILTIN_MODULES,
    Registry,
    RegistryBuilder,
    RegistryError,
    ResolveContext,
    Resolver,
    ResolverOptions,
    Value,
    VariableInfo,
    build_registry,
    default_registry,
    variable_catalog,
)

WEATHER_MODULE = """
from sysprompt_core.variables.registry import Resolver, VariableInfo


class WeatherResolver(Resolver):
    type = "weather"

    def variables(self):
        return (VariableInfo("weather", "today", "Today's weather."),)

    def resolve(self, names, context):
        return {name: "sunny" for name in names}


def register(registry_builder):
    registry_builder.register(WeatherResolver())
"""


class Named(Resolver):
    """A resolver whose type is chosen per instance (for registration tests)."""

    def __init__(self, kind: str) -> None:
        self.type = kind  # type: ignore[misc]

    def variables(self) -> Sequence[VariableInfo]:
        return ()

    def resolve(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        return {}


@pytest.fixture
def weather_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "weather_variables.py").write_text(WEATHER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "weather_variables"


def test_registry_builtin_types_in_module_order() -> None:
    assert build_registry().types() == (
        "system",
        "prompt",
        "git",
        "file",
        "tool",
        "var",
        "fragment",
    )


def test_registry_vocabulary_gives_fixed_names_and_none_for_dynamic() -> None:
    assert dict(build_registry().vocabulary()) == {
        "system": frozenset({"time", "date", "os", "hostname"}),
        "prompt": frozenset({"cwd", "model", "conversation_id", "provider"}),
        "git": frozenset({"branch", "status"}),
        "file": None,
        "tool": None,
        "var": None,
        "fragment": None,
    }


def test_registry_catalog_lists_each_dynamic_type_once() -> None:
    catalog = build_registry().catalog()
    files = [info for info in catalog if info.type == "file"]
    assert files == [VariableInfo("file", "<path>", files[0].description, dynamic=True)]
    assert [info.key for info in catalog if info.dynamic] == [
        "file:<path>",
        "tool:<name>",
        "var:<name>",
        "fragment:<name>",
    ]
    assert len({info.key for info in catalog}) == len(catalog) == 14


def test_registry_catalog_descriptions_are_sentences() -> None:
    for info in build_registry().catalog():
        assert info.description[:1].isupper(), info
        assert info.description.endswith("."), info


def test_registry_get_unknown_type_is_none() -> None:
    registry = build_registry()
    assert registry.get("weather") is None
    resolver = registry.get("git")
    assert resolver is not None
    assert resolver.batch


def test_registry_is_immutable() -> None:
    registry = build_registry()
    with pytest.raises(AttributeError):
        registry._resolvers = {}
    with pytest.raises(TypeError):
        registry.vocabulary()["weather"] = None  # type: ignore[index]


def test_registry_default_is_built_once() -> None:
    assert default_registry() is default_registry()
    assert default_registry().types() == build_registry().types()


def test_registry_builds_are_independent(weather_module: str) -> None:
    extended = build_registry((*BUILTIN_MODULES, weather_module))
    assert extended.types()[-1] == "weather"
    assert extended.vocabulary()["weather"] == frozenset({"today"})
    assert build_registry().get("weather") is None
    assert default_registry().get("weather") is None


def test_registry_duplicate_module_raises() -> None:
    with pytest.raises(RegistryError, match="'git' is registered twice"):
        build_registry((*BUILTIN_MODULES, "sysprompt_core.variables.git"))


def test_registry_duplicate_resolver_raises() -> None:
    with pytest.raises(RegistryError, match="registered twice"):
        Registry([Named("weather"), Named("weather")])


def test_registry_module_without_register_raises() -> None:
    with pytest.raises(RegistryError, match="no register"):
        build_registry(("json",))


@pytest.mark.parametrize("kind", ["", "Git", "a:b", "1x", "with space", "_x", "-x"])
def test_registry_invalid_type_raises(kind: str) -> None:
    with pytest.raises(RegistryError, match="no valid type"):
        RegistryBuilder().register(Named(kind))


@pytest.mark.parametrize("kind", ["a", "x1", "my-type", "my_type"])
def test_registry_valid_type_registers(kind: str) -> None:
    builder = RegistryBuilder()
    builder.register(Named(kind))
    assert builder.build().types() == (kind,)


def test_registry_empty_module_list_is_empty() -> None:
    registry = build_registry(())
    assert registry.types() == ()
    assert registry.catalog() == ()


def test_catalog_entries_are_plain_json_dicts() -> None:
    entries = variable_catalog()
    assert json.loads(json.dumps(entries)) == entries
    assert all(set(entry) == {"type", "name", "description", "dynamic"} for entry in entries)
    assert {"type": "fragment", "name": "<name>", "dynamic": True}.items() <= entries[-1].items()
    assert [(e["type"], e["name"]) for e in entries] == [
        (info.type, info.name) for info in default_registry().catalog()
    ]


def test_catalog_uses_the_given_registry(weather_module: str) -> None:
    entries = variable_catalog(build_registry((weather_module,)))
    assert entries == [
        {"type": "weather", "name": "today", "description": "Today's weather.", "dynamic": False}
    ]


def test_options_defaults() -> None:
    options = ResolverOptions()
    assert options.allowed_roots == ()  # the working directory alone, for file: and git:
    assert (options.git_timeout, options.max_file_bytes) == (2.0, 1048576)


def test_options_roots_list_becomes_tuple() -> None:
    options = ResolverOptions(allowed_roots=["/srv"])  # type: ignore[arg-type]
    assert options.allowed_roots == ("/srv",)
    assert hash(options) == hash(ResolverOptions(allowed_roots=("/srv",)))


@pytest.mark.parametrize(
    "changes", [{"git_timeout": 0}, {"git_timeout": -1.0}, {"max_file_bytes": -1}]
)
def test_options_invalid_values_raise(changes: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        ResolverOptions(**changes)  # type: ignore[arg-type]


def test_variables_package_imports_no_django() -> None:
    code = (
        "import sys, sysprompt_core.variables, sysprompt_core.variables.resolve;"
        "from sysprompt_core.variables import build_registry; build_registry();"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_registry_vocabulary_drives_the_engine_lint() -> None:
    template = "[system:nope] [weather:x] [file:any/path.md] [git:branch]"
    messages = [d.message for d in lint(template, default_registry().vocabulary())]
    assert len(messages) == 2
    assert "system:nope" in messages[0]
    assert "weather" in messages[1]
