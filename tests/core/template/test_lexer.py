"""Spec §2: what is a tag and what is literal text."""

from __future__ import annotations

import pytest

from sysprompt_core.template.lexer import PATTERN, Kind, LineIndex, tokenize


@pytest.mark.parametrize(
    ("text", "kind", "key", "negated"),
    [
        ("[system:os]", Kind.VARIABLE, "system:os", False),
        ("[file:docs/My Notes.md]", Kind.VARIABLE, "file:docs/My Notes.md", False),
        ("[file:/etc/hostname]", Kind.VARIABLE, "file:/etc/hostname", False),
        ("[a-b_9:x]", Kind.VARIABLE, "a-b_9:x", False),
        ("[a::b]", Kind.VARIABLE, "a::b", False),
        ("[file:a\tb]", Kind.VARIABLE, "file:a\tb", False),
        ("[if:x]", Kind.VARIABLE, "if:x", False),
        ("[if git:branch]", Kind.IF, "git:branch", False),
        ("[if \t  git:branch]", Kind.IF, "git:branch", False),
        ("[if !git:branch]", Kind.IF, "git:branch", True),
        ("[else]", Kind.ELSE, None, False),
        ("[endif]", Kind.ENDIF, None, False),
    ],
)
def test_tag_when_valid(text: str, kind: Kind, key: str | None, negated: bool) -> None:
    (token,) = tokenize(text)
    assert (token.kind, token.key, token.negated, token.text) == (kind, key, negated, text)


@pytest.mark.parametrize(
    "text",
    [
        "[If x:y]",
        "[IF x:y]",
        "[ENDIF]",
        "[Else]",
        "[endif ]",
        "[ endif]",
        "[if x:y ]",
        "[if ! x:y]",
        "[if!x:y]",
        "[ifx:y ]",
        "[ file:x]",
        "[Note: be brief]",
        "[TODO:x]",
        "[see: above]",
        "[x]",
        "[a:]",
        "[:b]",
        "[a:b ]",
        "[a:b\n]",
        "[a:b\rc]",
        "[1a:b]",
        "[_a:b]",
        "[a.b:c]",
        "[file:a]b]",
        "[if]",
        "[else ]",
        "[a:\tb]",
    ],
)
def test_literal_when_not_a_tag(text: str) -> None:
    assert PATTERN.fullmatch(text) is None


def test_tag_innermost_when_nested_brackets() -> None:
    assert [t.text for t in tokenize("[a:[b:c]]")] == ["[b:c]"]


def test_tokens_line_and_column_when_multiline() -> None:
    tokens = list(tokenize("x [a:b]\n\n  [if c:d]\r\n[endif]"))
    assert [(t.line, t.column) for t in tokens] == [(1, 3), (3, 3), (4, 1)]
    assert [t.end for t in tokens] == [7, 19, 28]


def test_line_index_position_when_lone_cr() -> None:
    index = LineIndex("a\rb\nc")
    assert index.position(2) == (1, 3)
    assert index.position(4) == (2, 1)


def test_scan_linear_when_many_open_brackets() -> None:
    # 200,000 candidates that never close: each is abandoned at the next "[".
    assert list(tokenize("[a:b " * 200_000)) == []
