"""Library §2.1 (fragment names) and §2.2 (normalised provider and model keys)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sysprompt_core.errors import CoreError, InvalidFragmentName
from sysprompt_core.library.names import (
    FRAGMENT_NAME_MAX_LENGTH,
    fragment_name_check,
    is_fragment_name,
    is_variable_name,
    normalize_key,
)


@pytest.mark.parametrize(
    "name",
    [
        "core",
        "env/git-repository",
        "tools/read-file",
        "0",
        "a.b_c-d",
        "a./b..",
        "x" * FRAGMENT_NAME_MAX_LENGTH,
        "/".join(["ab"] * 66) + "/a",
    ],
)
def test_fragment_name_when_valid(name: str) -> None:
    assert fragment_name_check(name) == name
    assert is_fragment_name(name)


@pytest.mark.parametrize(
    ("name", "reason", "example"),
    [
        ("", "is empty", "'core', 'env/git-repository'"),
        ("x" * (FRAGMENT_NAME_MAX_LENGTH + 1), "201 characters", "'xxx"),
        ("Core", "starts with 'C'", "'core'"),
        ("Env/Git Repository", "'Env'", "'env/git-repository'"),
        ("env/git repository", "holds ' '", "'env/git-repository'"),
        ("a//b", "empty segment", "'a/b'"),
        ("/core", "empty segment", "'core'"),
        ("core/", "empty segment", "'core'"),
        ("../core", "segment '..'", "'core'"),
        ("a/./b", "segment '.'", "'a/b'"),
        ("_core", "starts with '_'", "'core'"),
        ("-", "starts with '-'", "'core', 'env/git-repository' or 'tools/read-file'"),
        ("core.md\\x", "holds '\\\\'", "'core.md-x'"),
        ("tools:shell", "holds ':'", "'tools-shell'"),
        ("caf\u00e9", "holds '\u00e9'", "'caf-'"),
    ],
)
def test_fragment_name_when_invalid(name: str, reason: str, example: str) -> None:
    with pytest.raises(InvalidFragmentName) as caught:
        fragment_name_check(name)
    message = str(caught.value)
    assert reason in message
    assert f"for example {example}" in message
    assert caught.value.name == name
    assert isinstance(caught.value, CoreError)
    assert isinstance(caught.value, ValueError)
    assert not is_fragment_name(name)


def test_fragment_name_when_invalid_suggestion_is_valid() -> None:
    with pytest.raises(InvalidFragmentName) as caught:
        fragment_name_check("Tools/Read File!")
    assert "'tools/read-file-'" in str(caught.value)
    fragment_name_check("tools/read-file-")


@given(st.text(max_size=60))
def test_fragment_name_check_when_any_text_accepts_or_raises(name: str) -> None:
    try:
        assert fragment_name_check(name) == name
    except InvalidFragmentName as error:
        assert "for example" in str(error)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Claude Sonnet 4.5", "claude-sonnet-4-5"),
        ("anthropic", "anthropic"),
        ("OpenAI", "openai"),
        ("gpt-5", "gpt-5"),
        ("gemini-2.5-flash", "gemini-2-5-flash"),
        ("  --GPT__5--  ", "gpt-5"),
        ("a...b", "a-b"),
        ("caf\u00e9", "caf"),
        ("", ""),
        ("---", ""),
    ],
)
def test_normalize_key_when_text(text: str, key: str) -> None:
    assert normalize_key(text) == key


@given(st.text(max_size=40))
def test_normalize_key_when_any_text_is_idempotent(text: str) -> None:
    key = normalize_key(text)
    assert normalize_key(key) == key
    assert not key.startswith("-") and not key.endswith("-") and "--" not in key


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("project", True),
        ("team name", True),
        ("a:b", True),
        ("X_1", True),
        ("", False),
        (" a", False),
        ("a ", False),
        ("a]", False),
        ("[a", False),
        ("a\nb", False),
        ("a\rb", False),
    ],
)
def test_is_variable_name_when_name(name: str, valid: bool) -> None:
    assert is_variable_name(name) is valid
