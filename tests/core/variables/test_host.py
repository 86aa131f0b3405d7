"""prompt:provider, tool: and var: — what the agent host supplied (library spec §1)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from sysprompt_core.variables import (
    Missing,
    ResolveContext,
    Value,
    resolve_prompt,
    variable_catalog,
)
from sysprompt_core.variables.host import ToolResolver, VarResolver
from sysprompt_core.variables.prompt import PromptResolver


def host(
    provider: str | None = None,
    tools: frozenset[str] = frozenset(),
    variables: Mapping[str, str] | None = None,
) -> ResolveContext:
    return ResolveContext(cwd=None, provider=provider, tools=tools, variables=variables or {})


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("anthropic", "anthropic"),
        ("Open AI", "Open AI"),  # as given: only variant choice normalises
        ("", ""),
        (None, Missing("no provider was given")),
    ],
)
def test_prompt_provider_is_what_the_host_gave(provider: str | None, expected: Value) -> None:
    assert PromptResolver().value("provider", host(provider=provider)) == expected


@pytest.mark.parametrize(
    ("name", "tools", "expected"),
    [
        ("grep", {"grep", "glob"}, "grep"),
        ("read_file", {"read_file"}, "read_file"),
        ("web fetch", {"web fetch"}, "web fetch"),
        ("Grep", {"grep"}, Missing("the host did not list this tool")),
        ("grep", set(), Missing("the host did not list this tool")),
    ],
)
def test_tool_exists_when_listed(name: str, tools: set[str], expected: Value) -> None:
    assert ToolResolver().value(name, host(tools=frozenset(tools))) == expected


@pytest.mark.parametrize(
    ("name", "variables", "expected"),
    [
        ("project", {"project": "sysprompt"}, "sysprompt"),
        ("team name", {"team name": "Core team"}, "Core team"),
        ("empty", {"empty": ""}, ""),
        ("Project", {"project": "x"}, Missing("the host gave no value of this name")),
        ("project", {}, Missing("the host gave no value of this name")),
    ],
)
def test_var_is_the_host_supplied_value(
    name: str, variables: dict[str, str], expected: Value
) -> None:
    assert VarResolver().value(name, host(variables=variables)) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("[if tool:grep]Use grep.[else]No grep.[endif]", "Use grep."),
        ("[if tool:shell]Use the shell.[else]No shell.[endif]", "No shell."),
        ("Project [var:project] for [prompt:provider].", "Project sysprompt for anthropic."),
        ("[if var:empty]empty exists[endif]", "empty exists"),
        ("[if !var:missing]no value[endif]", "no value"),
        ("[var:value]", "[prompt:provider]"),  # a value is never parsed again
    ],
)
def test_host_variables_in_templates(template: str, expected: str) -> None:
    context = host(
        provider="anthropic",
        tools=frozenset({"grep"}),
        variables={"project": "sysprompt", "empty": "", "value": "[prompt:provider]"},
    )
    assert resolve_prompt(template, context).prompt == expected


@pytest.mark.parametrize(
    ("type_", "name", "dynamic"),
    [
        ("prompt", "provider", False),
        ("tool", "<name>", True),
        ("var", "<name>", True),
        ("fragment", "<name>", True),
    ],
)
def test_catalog_lists_the_library_variables(type_: str, name: str, dynamic: bool) -> None:
    entries = [(e["type"], e["name"], e["dynamic"]) for e in variable_catalog()]
    assert entries.count((type_, name, dynamic)) == 1
