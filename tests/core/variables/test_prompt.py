"""prompt: variables — what the agent host said about the conversation."""

from __future__ import annotations

import os

import pytest

from sysprompt_core.variables import Missing, ResolveContext, Value
from sysprompt_core.variables.prompt import PromptResolver


def resolve(name: str, **given: str | None) -> Value:
    context = ResolveContext(
        cwd=given.get("cwd"), model=given.get("model"), conversation_id=given.get("id")
    )
    return PromptResolver().resolve([name], context)[name]


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [
        ("/home/ada/proj", "/home/ada/proj"),
        ("/home/ada/proj/", "/home/ada/proj"),
        ("/home/ada/./proj/../proj//src", "/home/ada/proj/src"),
        ("/does/not/exist", "/does/not/exist"),
        ("relative/dir", os.path.join(os.getcwd(), "relative", "dir")),
    ],
)
def test_prompt_cwd_is_absolute_and_normalised(cwd: str, expected: str) -> None:
    assert resolve("cwd", cwd=cwd) == expected


@pytest.mark.parametrize("cwd", [None, ""])
def test_prompt_cwd_not_given_is_missing(cwd: str | None) -> None:
    assert resolve("cwd", cwd=cwd) == Missing("no working directory was given")


@pytest.mark.parametrize(
    ("name", "key", "given", "expected"),
    [
        ("model", "model", "claude-sonnet-4", "claude-sonnet-4"),
        ("model", "model", "", ""),
        ("model", "model", None, Missing("no model was given")),
        ("conversation_id", "id", "conv-42", "conv-42"),
        ("conversation_id", "id", None, Missing("no conversation id was given")),
    ],
)
def test_prompt_given_values(name: str, key: str, given: str | None, expected: Value) -> None:
    assert resolve(name, **{key: given}) == expected


@pytest.mark.parametrize("name", ["nope", "CWD", "cwd/x"])
def test_prompt_unknown_name_is_missing(name: str) -> None:
    assert resolve(name, cwd="/tmp") == Missing("unknown variable")
