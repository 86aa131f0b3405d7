"""LazyValues and resolve_prompt: only what the rendering reaches is resolved."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from sysprompt_core.sandbox.pool import DEFAULT_COMMAND
from sysprompt_core.template import PromptTooLarge, compile
from sysprompt_core.variables import (
    LazyValues,
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    ResolverOptions,
    Value,
    VariableInfo,
    build_registry,
    resolve_prompt,
)
from tests.core.variables.support import context, make_repo, real, recording

SPEC_EXAMPLE = (
    "You are a helpful coding assistant.\n"
    "[if file:AGENTS.md]\n"
    "[file:AGENTS.md]\n"
    "[endif]\n"
    "The current working directory is [prompt:cwd].\n"
)


class Counting(Resolver):
    """A resolver that records every call it gets."""

    type = "count"

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def variables(self) -> Sequence[VariableInfo]:
        return (VariableInfo("count", "a", "A."), VariableInfo("count", "b", "B."))

    def resolve(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        self.calls.append(tuple(names))
        return {name: name.upper() for name in names}


class BatchCounting(Counting):
    type = "batch"
    batch = True

    def names(self) -> frozenset[str] | None:
        return None


class Broken(Resolver):
    type = "broken"

    def variables(self) -> Sequence[VariableInfo]:
        return (VariableInfo("broken", "<any>", "Raises or forgets.", dynamic=True),)

    def names(self) -> frozenset[str] | None:
        return None

    def resolve(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        if "raise" in names:
            raise RuntimeError("boom")
        return {}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


def values_for(project: Path, *references: str, resolvers: Sequence[Resolver] = ()) -> LazyValues:
    builder = RegistryBuilder()
    for resolver in resolvers:
        builder.register(resolver)
    registry = build_registry() if not resolvers else builder.build()
    return LazyValues(references, context(project), registry)


def test_lazy_unreferenced_key_raises_and_resolves_nothing(
    project: Path, audit_hook_installed: None
) -> None:
    (project / "secret.txt").write_text("secret")
    values = values_for(project, "prompt:cwd")
    with recording() as log, pytest.raises(KeyError):
        values["file:secret.txt"]
    assert values.get("file:secret.txt") is None
    assert values.looked_up() == {}
    assert log.opened() == set()


def test_lazy_membership_and_length_resolve_nothing(project: Path) -> None:
    counting = Counting()
    values = values_for(project, "count:b", "count:a", "count:b", resolvers=[counting])
    assert list(values) == ["count:b", "count:a"]
    assert len(values) == 2
    assert "count:a" in values
    assert "count:c" not in values
    assert counting.calls == []


def test_lazy_values_are_cached(project: Path) -> None:
    notes = project / "notes.txt"
    notes.write_text("first\n")
    values = values_for(project, "file:notes.txt")
    assert values["file:notes.txt"] == "first"
    notes.write_text("second\n")
    assert values["file:notes.txt"] == "first"


def test_lazy_plain_resolver_resolves_one_name_at_a_time(project: Path) -> None:
    counting = Counting()
    values = values_for(project, "count:a", "count:b", resolvers=[counting])
    assert values["count:a"] == "A"
    assert values["count:a"] == "A"
    assert counting.calls == [("a",)]
    assert values.looked_up() == {"count:a": "A"}


def test_lazy_batch_resolver_resolves_every_reference_of_its_type(project: Path) -> None:
    batch, counting = BatchCounting(), Counting()
    refs = ("batch:x", "count:a", "batch:y", "batch:z")
    values = values_for(project, *refs, resolvers=[batch, counting])
    assert values["batch:y"] == "Y"
    assert batch.calls == [("x", "y", "z")]
    assert values.looked_up() == {"batch:x": "X", "batch:y": "Y", "batch:z": "Z"}
    assert values["batch:z"] == "Z"
    assert batch.calls == [("x", "y", "z")]
    assert counting.calls == []


def test_lazy_git_variables_resolve_together(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    ctx = context(repo, roots=(tmp_path,))
    values = LazyValues(["git:branch", "git:status"], ctx, build_registry())
    assert values["git:branch"] == "main"
    assert values.looked_up() == {"git:branch": "main", "git:status": ""}


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("weather:today", "unknown variable type 'weather'"),
        ("system:nope", "unknown variable"),
        ("git:nope", "unknown variable"),
        ("nocolon", "not a variable reference"),
        ("prompt:model", "no model was given"),
    ],
)
def test_lazy_missing_values_are_none_with_a_reason(project: Path, key: str, reason: str) -> None:
    values = values_for(project, key)
    assert values[key] is None
    assert values.reason(key) == reason
    assert values.looked_up() == {key: Missing(reason)}


def test_lazy_unknown_name_of_fixed_type_never_reaches_the_resolver(project: Path) -> None:
    counting = Counting()
    values = values_for(project, "count:zzz", resolvers=[counting])
    assert values.reason("count:zzz") == "unknown variable"
    assert counting.calls == []


def test_lazy_failing_resolver_gives_missing(project: Path) -> None:
    values = values_for(project, "broken:raise", "broken:forget", resolvers=[Broken()])
    assert values["broken:raise"] is None
    assert values.reason("broken:raise") == "the broken resolver failed: boom"
    assert values.reason("broken:forget") == "the resolver gave no value"


class Raising(Resolver):
    """A resolver that keeps the default ``resolve`` and whose ``value`` raises."""

    type = "raising"

    def variables(self) -> Sequence[VariableInfo]:
        return (VariableInfo("raising", "<any>", "Raises.", dynamic=True),)

    def names(self) -> frozenset[str] | None:
        return None

    def value(self, name: str, context: ResolveContext) -> Value:
        raise RuntimeError(f"no {name}")


def test_lazy_failing_value_gives_missing(project: Path) -> None:
    values = values_for(project, "raising:x", resolvers=[Raising()])
    assert values.get("raising:x") is None
    assert values.reason("raising:x") == "the raising resolver failed: no x"


def test_lazy_reason_of_existing_value_is_none(project: Path) -> None:
    values = values_for(project, "prompt:cwd")
    assert values.reason("prompt:cwd") is None
    with pytest.raises(KeyError):
        values.reason("prompt:model")


def test_lazy_resolve_all_forces_every_reference(project: Path) -> None:
    (project / "a.txt").write_text("A\n")
    values = values_for(project, "file:a.txt", "file:b.txt", "prompt:cwd")
    expected = {
        "file:a.txt": "A",
        "file:b.txt": Missing("no such file"),
        "prompt:cwd": str(project),
    }
    assert values.resolve_all() == expected
    assert values.looked_up() == expected
    assert dict(values) == {"file:a.txt": "A", "file:b.txt": None, "prompt:cwd": str(project)}


def test_resolve_prompt_spec_example_without_agents_file(project: Path) -> None:
    resolution = resolve_prompt(SPEC_EXAMPLE, context(project))
    assert resolution.prompt == (
        f"You are a helpful coding assistant.\nThe current working directory is {project}.\n"
    )
    assert resolution.values.reason("file:AGENTS.md") == "no such file"


def test_resolve_prompt_spec_example_with_agents_file(project: Path) -> None:
    (project / "AGENTS.md").write_text("Use tabs.\n")
    resolution = resolve_prompt(compile(SPEC_EXAMPLE), context(project))
    assert resolution.prompt == (
        "You are a helpful coding assistant.\n"
        "Use tabs.\n"
        f"The current working directory is {project}.\n"
    )
    assert resolution.values.looked_up() == {
        "file:AGENTS.md": "Use tabs.",
        "prompt:cwd": str(project),
    }


@pytest.mark.parametrize("template", ["", "   \n\t\n", "[if git:nope]text[endif]\n"])
def test_resolve_prompt_blank_result_is_none(project: Path, template: str) -> None:
    assert resolve_prompt(template, context(project)).prompt is None


def test_resolve_prompt_values_are_not_parsed_again(project: Path) -> None:
    (project / "tricky.md").write_text("[system:os] [if x:y]")
    assert resolve_prompt("<[file:tricky.md]>", context(project)).prompt == (
        "<[system:os] [if x:y]>"
    )


def test_resolve_prompt_uses_the_given_registry(project: Path) -> None:
    registry = build_registry(("sysprompt_core.variables.prompt",))
    resolution = resolve_prompt("[prompt:cwd] [system:os]", context(project), registry)
    assert resolution.prompt == f"{project} "
    assert resolution.values.reason("system:os") == "unknown variable type 'system'"


def test_resolve_prompt_without_git_starts_no_process(
    tmp_path: Path, audit_hook_installed: None
) -> None:
    repo = make_repo(tmp_path / "repo")
    template = "[system:time] [system:os] [prompt:cwd] [file:a.txt] [Git:branch] [git: status]"
    with recording() as log:
        resolution = resolve_prompt(template, context(repo))
    assert resolution.prompt is not None
    assert "one" in resolution.prompt
    assert log.processes() == []
    assert not any(key.startswith("git:") for key in resolution.values.looked_up())


def test_resolve_prompt_with_git_starts_git_positive_control(
    tmp_path: Path, audit_hook_installed: None
) -> None:
    repo = make_repo(tmp_path / "repo")
    with recording() as log:
        resolution = resolve_prompt("on [git:branch]", context(repo, roots=(tmp_path,)))
    assert resolution.prompt == "on main"
    assert "git:branch" in resolution.values.looked_up()
    # git is never run: the only process is the pool's git reader (shared by the tests,
    # so perhaps started by an earlier one).
    assert log.processes() in ([], [list(DEFAULT_COMMAND)])


def test_resolve_prompt_untaken_branch_resolves_nothing(
    tmp_path: Path, audit_hook_installed: None
) -> None:
    repo = make_repo(tmp_path / "repo")
    template = "[if !system:os][file:a.txt] [git:branch][endif]done"
    with recording() as log:
        resolution = resolve_prompt(template, context(repo))
    assert resolution.prompt == "done"
    assert log.processes() == []
    assert real(repo / "a.txt") not in log.opened()
    assert set(resolution.values.looked_up()) == {"system:os"}


def test_resolve_prompt_unreferenced_file_is_never_opened(
    project: Path, audit_hook_installed: None
) -> None:
    secret = project / "secret.txt"
    secret.write_text("secret")
    template = "[File:secret.txt] [file :secret.txt] [if file:secret.txt ] [prompt:cwd]"
    with recording() as log:
        resolution = resolve_prompt(template, context(project))
    assert resolution.prompt is not None
    assert "secret" not in resolution.prompt.replace("secret.txt", "")
    assert real(secret) not in log.opened()


def test_resolve_prompt_referenced_file_is_opened_positive_control(
    project: Path, audit_hook_installed: None
) -> None:
    secret = project / "secret.txt"
    secret.write_text("secret")
    with recording() as log:
        assert resolve_prompt("[file:secret.txt]", context(project)).prompt == "secret"
    assert real(secret) in log.opened()


def test_resolve_prompt_nothing_outside_the_roots_is_opened(
    tmp_path: Path, project: Path, audit_hook_installed: None
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (project / "link").symlink_to(outside / "secret.txt")
    template = f"[file:../outside/secret.txt][file:{outside}/secret.txt][file:link]end"
    with recording() as log:
        resolution = resolve_prompt(template, context(project))
    assert resolution.prompt == "end"
    assert not [path for path in log.opened() if path.startswith(real(outside))]
    assert set(resolution.values.looked_up().values()) == {Missing("outside the allowed roots")}


# Bounds: the prompt limit and the read budget of one resolution.


def _bounded(project: Path, *, prompt: int = 1048576, read: int = 8388608) -> ResolveContext:
    options = ResolverOptions(allowed_roots=(), max_prompt_bytes=prompt, max_read_bytes=read)
    return ResolveContext(cwd=str(project), options=options)


def test_resolve_prompt_value_over_limit_is_missing_and_blocks_follow(project: Path) -> None:
    (project / "big.txt").write_text("b" * 50)
    template = "[file:big.txt]\n[if file:big.txt]with[else]without[endif]"

    resolution = resolve_prompt(template, _bounded(project, prompt=20))

    assert resolution.prompt == "\nwithout"
    assert resolution.dropped == frozenset({"file:big.txt"})
    assert resolution.values.reason("file:big.txt") == (
        "would make the prompt larger than 20 bytes (SYSPROMPT_MAX_PROMPT_BYTES)"
    )


def test_resolve_prompt_literal_text_over_limit_raises(project: Path) -> None:
    with pytest.raises(PromptTooLarge, match=r"SYSPROMPT_MAX_PROMPT_BYTES"):
        resolve_prompt("twelve bytes", _bounded(project, prompt=11))


def test_resolve_prompt_each_resolution_has_its_own_read_budget(project: Path) -> None:
    (project / "a.txt").write_text("a" * 30)
    shared = _bounded(project, read=40)
    template = "[file:a.txt][if file:a.txt][endif]"

    first = resolve_prompt(template, shared)
    second = resolve_prompt(template, shared)

    assert first.prompt == second.prompt == "a" * 30
    assert first.values.bytes_read == second.values.bytes_read == 30
    assert shared.reads.used == 0  # the caller's context is not charged
