"""The prompt name rule (sysprompt_core.prompt_names): paths of segments, folders."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sysprompt_core.prompt_names import (
    PROMPT_NAME_MAX_LENGTH,
    PROMPT_NAME_PATTERN,
    InvalidPromptName,
    folder_check,
    folders_of,
    in_folder,
    is_prompt_name,
    prompt_name_check,
)

GOOD = [
    "default",
    "support/triage",
    "coding/reviewer",
    "a",
    "0",
    "a.b_c-d",
    "/".join(["s"] * 8),
    "x" * 64,
    "/".join(["y" * 24] * 8),  # 199 characters
]
BAD = [
    "",
    "/a",
    "a/",
    "a//b",
    "-a",
    "a/-b",
    ".a",
    "_a",
    "A",
    "support/Triage",
    "a b",
    "a\\b",
    "../x",
    "a/../b",
    "a/./b",
    "é",
    "x" * 65,
    "/".join(["s"] * 9),
    "/".join(["y" * 25] * 8),  # 207 characters, every segment fine
    "a\n",
    "a/-/releases",
]


@pytest.mark.parametrize("name", GOOD)
def test_prompt_name_check_accepts_names_by_the_rule(name: str) -> None:
    assert prompt_name_check(name) == name


@pytest.mark.parametrize("name", BAD)
def test_prompt_name_check_refuses_names_naming_the_field_and_the_rule(name: str) -> None:
    with pytest.raises(InvalidPromptName) as refused:
        prompt_name_check(name, "prompt")
    assert refused.value.field == "prompt"
    assert "segments separated by '/'" in refused.value.message


@pytest.mark.parametrize("value", [None, 3, ["a"], b"a"])
def test_prompt_name_check_refuses_what_is_no_string(value: object) -> None:
    with pytest.raises(InvalidPromptName, match="is not a prompt name"):
        prompt_name_check(value)


@given(st.from_regex(PROMPT_NAME_PATTERN, fullmatch=True))
def test_prompt_name_rule_never_admits_a_path_escape(name: str) -> None:
    if is_prompt_name(name):
        assert len(name) <= PROMPT_NAME_MAX_LENGTH
        assert all(part not in {"", ".", ".."} for part in name.split("/"))
        assert not name.startswith("/") and "\\" not in name and "/-" not in name


def test_folders_of_lists_the_folders_outermost_first() -> None:
    assert folders_of("a/b/c") == ["a/", "a/b/"]
    assert folders_of("default") == []


@pytest.mark.parametrize(
    ("folder", "expected"), [("support", "support/"), ("support/", "support/"), ("a/b/", "a/b/")]
)
def test_folder_check_answers_the_folder_with_its_slash(folder: str, expected: str) -> None:
    assert folder_check(folder) == expected


@pytest.mark.parametrize("folder", ["", "/", "a//", "-a/", "../", "a/../"])
def test_folder_check_refuses_what_is_no_folder(folder: str) -> None:
    with pytest.raises(InvalidPromptName) as refused:
        folder_check(folder)
    assert refused.value.field == "folder"


def test_in_folder_matches_whole_segments_only() -> None:
    assert in_folder("support/triage", "support/")
    assert not in_folder("supportive/x", "support/")
