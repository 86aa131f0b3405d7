"""Host-supplied values (agent-hosts §0): checked, used instead of the resolvers, and
no host-local value resolved here when the server does not resolve its type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from sysprompt_core.library import MemorySource, Override, layered_prompt
from sysprompt_core.limits import (
    DEFAULT_MAX_FILE_BYTES,
    HOST_VALUE_KEY_MAX_LENGTH,
    HOST_VALUES_MAX_COUNT,
)
from sysprompt_core.variables import (
    HOST_LOCAL_KEYS,
    HOST_LOCAL_TYPES,
    InvalidHostValues,
    LazyValues,
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    ResolverOptions,
    Value,
    VariableInfo,
    build_registry,
    check_supplied,
    is_host_local,
    resolve_prompt,
)
from sysprompt_core.variables.resolve import SUPPLIED_ABSENT
from tests.core.variables.fragment_support import library
from tests.core.variables.support import make_repo, real, recording

# The vocabulary


@pytest.mark.parametrize(
    ("key", "local"),
    [
        ("prompt:cwd", True),
        ("git:branch", True),
        ("git:status", True),
        ("file:AGENTS.md", True),
        ("file:/etc/hostname", True),
        ("system:time", True),
        ("system:hostname", True),
        ("prompt:model", False),
        ("prompt:provider", False),
        ("prompt:conversation_id", False),
        ("var:x", False),
        ("tool:grep", False),
        ("fragment:core", False),
        ("git:", False),
        ("git", False),
        ("", False),
    ],
)
def test_is_host_local(key: str, local: bool) -> None:
    assert is_host_local(key) is local


def test_host_local_vocabulary_matches_the_client() -> None:
    assert {"git", "file", "system"} == HOST_LOCAL_TYPES
    assert {"prompt:cwd"} == HOST_LOCAL_KEYS


# check_supplied


def test_check_supplied_accepts_host_local_values_and_nulls() -> None:
    given = {"git:branch": "main", "file:AGENTS.md": None, "prompt:cwd": "/p", "system:os": ""}
    assert check_supplied(given) == given
    assert check_supplied({}) == {}


@pytest.mark.parametrize(
    ("values", "field", "words"),
    [
        (["git:branch"], "values", "an object"),
        ("git:branch=main", "values", "got a string"),
        ({1: "x"}, "values", 'a key is a "type:name" string'),
        ({"branch": "x"}, "values.branch", "variable reference"),
        ({"git:": "x"}, "values.git:", "variable reference"),
        ({"git:a]b": "x"}, "values.git:a]b", "variable reference"),
        ({"Git:branch": "x"}, "values.Git:branch", "variable reference"),
        ({"prompt:model": "x"}, "values.prompt:model", "only host-local values"),
        ({"var:x": "x"}, "values.var:x", "only host-local values"),
        ({"tool:grep": "grep"}, "values.tool:grep", "only host-local values"),
        ({"fragment:core": "x"}, "values.fragment:core", "only host-local values"),
        ({"git:branch": 1}, "values.git:branch", "got a number"),
        ({"git:branch": ["main"]}, "values.git:branch", "got an array"),
        ({"git:branch": True}, "values.git:branch", "got a boolean"),
        ({"file:a": "x\0y"}, "values.file:a", "NUL"),
        ({"file:a": "x\ud800"}, "values.file:a", "lone surrogate"),
    ],
)
def test_check_supplied_refuses_with_the_field(values: object, field: str, words: str) -> None:
    with pytest.raises(InvalidHostValues) as caught:
        check_supplied(values)
    assert caught.value.field == field
    assert words in caught.value.message
    assert str(caught.value).startswith(f"{field}: ")


def test_check_supplied_each_value_at_most_the_file_limit() -> None:
    assert check_supplied({"file:a": "x" * DEFAULT_MAX_FILE_BYTES})
    with pytest.raises(InvalidHostValues) as caught:
        check_supplied({"file:a": "x" * (DEFAULT_MAX_FILE_BYTES + 1)})
    assert caught.value.field == "values.file:a"
    assert f"{DEFAULT_MAX_FILE_BYTES:,}" in caught.value.message


def test_check_supplied_counts_utf8_bytes() -> None:
    assert check_supplied({"file:a": "é" * 5}, max_value_bytes=10)
    with pytest.raises(InvalidHostValues, match="11 bytes"):
        check_supplied({"file:a": "é" * 5 + "x"}, max_value_bytes=10)


def test_check_supplied_all_values_together_at_most_the_read_limit() -> None:
    values = {f"file:{n}": "x" * 10 for n in range(4)}
    assert check_supplied(values, max_total_bytes=40)
    with pytest.raises(InvalidHostValues) as caught:
        check_supplied({**values, "file:last": "y"}, max_total_bytes=40)
    assert caught.value.field == "values"
    assert "40 bytes" in caught.value.message


def test_check_supplied_default_total_is_the_read_limit() -> None:
    big = "x" * DEFAULT_MAX_FILE_BYTES
    with pytest.raises(InvalidHostValues, match="together"):
        check_supplied({f"file:{n}": big for n in range(9)})


def test_check_supplied_count_and_key_length() -> None:
    assert check_supplied({f"file:{n}": None for n in range(HOST_VALUES_MAX_COUNT)})
    with pytest.raises(InvalidHostValues, match="at most 1,000"):
        check_supplied({f"file:{n}": None for n in range(HOST_VALUES_MAX_COUNT + 1)})
    long_key = "file:" + "a" * (HOST_VALUE_KEY_MAX_LENGTH - 5)
    assert check_supplied({long_key: None})
    with pytest.raises(InvalidHostValues, match="at most"):
        check_supplied({long_key + "a": None})


def test_check_supplied_names_its_field() -> None:
    with pytest.raises(InvalidHostValues) as caught:
        check_supplied({"var:x": "y"}, "body.values")
    assert caught.value.field == "body.values.var:x"


# Resolution with supplied values: a registry whose host-local resolvers record calls


class Recording(Resolver):
    """Records each call; answers ``<type>-<name>``."""

    def __init__(self, kind: str, batch: bool = False) -> None:
        self.type = kind  # type: ignore[misc]
        self.batch = batch  # type: ignore[misc]
        self.calls: list[tuple[str, ...]] = []

    def variables(self) -> Sequence[VariableInfo]:
        return (VariableInfo(self.type, "<any>", "Records.", dynamic=True),)

    def names(self) -> frozenset[str] | None:
        return None

    def resolve(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        self.calls.append(tuple(names))
        return {name: f"{self.type}-{name}" for name in names}


class Resolvers:
    def __init__(self) -> None:
        self.git = Recording("git", batch=True)
        self.file = Recording("file")
        self.system = Recording("system")
        self.prompt = Recording("prompt")
        builder = RegistryBuilder()
        for resolver in (self.git, self.file, self.system, self.prompt):
            builder.register(resolver)
        self.registry = builder.build()

    def calls(self) -> dict[str, list[tuple[str, ...]]]:
        found = {r.type: r.calls for r in (self.git, self.file, self.system, self.prompt)}
        return {kind: calls for kind, calls in found.items() if calls}


def values(
    references: Sequence[str],
    resolvers: Resolvers,
    supplied: Mapping[str, str | None],
    server_resolves: frozenset[str] | None = None,
) -> LazyValues:
    context = ResolveContext(cwd="/p", supplied=supplied, server_resolves=server_resolves)
    return LazyValues(references, context, resolvers.registry)


def test_supplied_value_is_used_and_its_resolver_not_called() -> None:
    resolvers = Resolvers()
    refs = ["git:branch", "git:status", "file:a.md", "system:time", "prompt:cwd"]
    supplied = {"git:branch": "main", "file:a.md": "text\n", "prompt:cwd": "/host"}
    found = values(refs, resolvers, supplied).resolve_all()
    assert found == {
        "git:branch": "main",
        "git:status": "git-status",  # not supplied, and the server resolves git
        "file:a.md": "text\n",  # as it is: no line ending removed
        "system:time": "system-time",
        "prompt:cwd": "/host",
    }
    assert resolvers.calls() == {"git": [("status",)], "system": [("time",)]}


def test_supplied_null_does_not_exist() -> None:
    resolvers = Resolvers()
    found = values(["file:a.md"], resolvers, {"file:a.md": None}).resolve_all()
    assert found == {"file:a.md": SUPPLIED_ABSENT}
    assert Missing("the host supplied it as not existing") == SUPPLIED_ABSENT
    assert resolvers.calls() == {}


@pytest.mark.parametrize("kind", ["git", "file", "system"])
def test_not_supplied_and_not_resolved_here_does_not_exist(kind: str) -> None:
    resolvers = Resolvers()
    key = f"{kind}:x"
    found = values([key], resolvers, {}, server_resolves=frozenset()).resolve_all()
    assert found == {
        key: Missing(
            f"the server does not resolve {kind}: (SERVER_RESOLVES); the host did not supply it"
        )
    }
    assert resolvers.calls() == {}


def test_server_resolves_lets_listed_types_resolve() -> None:
    resolvers = Resolvers()
    refs = ["git:branch", "system:os", "file:a"]
    found = values(refs, resolvers, {}, server_resolves=frozenset({"system"})).resolve_all()
    assert found["system:os"] == "system-os"
    assert isinstance(found["git:branch"], Missing) and isinstance(found["file:a"], Missing)
    assert resolvers.calls() == {"system": [("os",)]}


def test_prompt_cwd_is_the_request_value_whatever_server_resolves_says() -> None:
    resolvers = Resolvers()
    found = values(["prompt:cwd", "prompt:model"], resolvers, {}, frozenset()).resolve_all()
    assert found == {"prompt:cwd": "prompt-cwd", "prompt:model": "prompt-model"}


def test_supplied_keys_that_are_not_host_local_are_ignored() -> None:
    resolvers = Resolvers()
    found = values(["prompt:model"], resolvers, {"prompt:model": "forged"}).resolve_all()
    assert found == {"prompt:model": "prompt-model"}


def test_batch_resolver_gets_only_the_names_not_supplied() -> None:
    resolvers = Resolvers()
    refs = ["git:a", "git:b", "git:c"]
    lazy = values(refs, resolvers, {"git:b": "B"})
    assert lazy["git:a"] == "git-a"
    assert lazy.resolve_all() == {"git:a": "git-a", "git:b": "B", "git:c": "git-c"}
    assert resolvers.git.calls == [("a", "c")]


def test_server_resolves_is_checked() -> None:
    ResolveContext(cwd=None, server_resolves=frozenset({"prompt", "git", "file", "system"}))
    with pytest.raises(ValueError, match="gti"):
        ResolveContext(cwd=None, server_resolves=frozenset({"gti"}))


def test_working_directory_is_only_a_value_when_nothing_reads_the_disk(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert ResolveContext(cwd=str(link)).directory == real(tmp_path)
    assert ResolveContext(cwd=str(link), server_resolves=frozenset({"git"})).directory
    only_value = ResolveContext(cwd=str(link), server_resolves=frozenset({"system"}))
    assert only_value.directory is None
    assert only_value.working_directory == str(link)


# With the real resolvers: the disk is never looked at


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = make_repo(tmp_path / "repo")
    (path / "AGENTS.md").write_text("Read me.\n")
    return path


TEMPLATE = "[git:branch]|[git:status]|[file:AGENTS.md]|[prompt:cwd]|[system:os]"


def real_context(
    repo: Path,
    *,
    supplied: Mapping[str, str | None] | None = None,
    server_resolves: frozenset[str] | None = None,
    library: MemorySource | None = None,
) -> ResolveContext:
    return ResolveContext(
        cwd=str(repo),
        options=ResolverOptions(allowed_roots=(str(repo),)),
        supplied=supplied or {},
        server_resolves=server_resolves,
        library=library,
    )


def test_real_resolvers_read_the_repository_by_default(
    repo: Path, audit_hook_installed: None
) -> None:
    with recording() as log:
        resolution = resolve_prompt(TEMPLATE, real_context(repo))
    assert resolution.prompt is not None
    assert resolution.prompt.startswith("main|?? AGENTS.md|Read me.|")
    assert any(path.startswith(real(repo)) for path in log.opened())


def test_server_that_resolves_only_system_never_opens_the_repository(
    repo: Path, audit_hook_installed: None
) -> None:
    context = real_context(repo, server_resolves=frozenset({"system"}))
    with recording() as log:
        resolution = resolve_prompt(TEMPLATE, context)
    assert resolution.prompt is not None
    assert resolution.prompt.startswith(f"|||{repo}|")
    assert not any(path.startswith(real(repo)) for path in log.opened())
    assert log.processes() == []
    reasons = {key: resolution.values.reason(key) for key in ("git:branch", "file:AGENTS.md")}
    assert all(reason and "SERVER_RESOLVES" in reason for reason in reasons.values())


def test_supplied_values_need_no_disk(repo: Path, audit_hook_installed: None) -> None:
    supplied = {"git:branch": "host-branch", "git:status": "", "file:AGENTS.md": "Host file."}
    context = real_context(repo, supplied=supplied, server_resolves=frozenset())
    with recording() as log:
        resolution = resolve_prompt(TEMPLATE, context)
    assert resolution.prompt is not None
    assert resolution.prompt.startswith(f"host-branch||Host file.|{repo}|")
    assert not any(path.startswith(real(repo)) for path in log.opened())


def test_fragments_and_presets_see_the_same_supplied_values(repo: Path) -> None:
    source = library(
        {
            "env": "Branch [git:branch]; [fragment:deeper]",
            "deeper": "file [file:AGENTS.md]",
            "preset": "Preset on [git:branch]",
        }
    )
    supplied = {"git:branch": "host-branch", "file:AGENTS.md": "Host file."}
    context = real_context(repo, supplied=supplied, server_resolves=frozenset(), library=source)
    resolution = resolve_prompt("[git:branch]: [fragment:env]", context)
    assert resolution.prompt == "host-branch: Branch host-branch; file Host file."
    layered = layered_prompt(resolution.prompt, [Override(preset="preset")], context)
    assert layered.prompt == f"{resolution.prompt}\n\nPreset on host-branch"


def test_supplied_values_are_bounded_by_the_prompt_limit() -> None:
    options = ResolverOptions(allowed_roots=(), max_prompt_bytes=10)
    context = ResolveContext(cwd=None, options=options, supplied={"file:big": "x" * 11})
    resolution = resolve_prompt("[file:big]ok", context, build_registry())
    assert resolution.prompt == "ok"
    assert resolution.dropped == {"file:big"}
