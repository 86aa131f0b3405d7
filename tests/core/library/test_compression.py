"""Library §5: compression of a version's source text, rule by rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sysprompt_core.library.compression import compress, split_lines


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # headings of level 2 or more become level 1
        ("## Title", "# Title"),
        ("###### Six", "# Six"),
        ("# One", "# One"),
        ("##\tTabbed", "# Tabbed"),
        ("##", "#"),
        ("####### seven is no heading", "####### seven is no heading"),
        ("##no space", "##no space"),
        ("   ## indented", "# indented"),
        # - **Label**: text → - Label: text
        ("- **Label**: text", "- Label: text"),
        ("-   **Label**:    text", "- Label: text"),
        ("- **Label**:", "- Label:"),
        ("  - **Nested**: text", "  - Nested: text"),
        ("- **Label:** text", "- **Label:** text"),
        ("* **Label**: text", "* **Label**: text"),
        ("- see **Label**: text", "- see **Label**: text"),
        # runs of spaces and tabs become one space
        ("a  b\t\tc \t d", "a b c d"),
        ("a\tb", "a b"),
        # lines are trimmed, except a list item's indentation
        ("   text   ", "text"),
        ("\t\ttext", "text"),
        ("    - item  ", "    - item"),
        ("\t* item", "\t* item"),
        ("  + item", "  + item"),
        ("   12. item", "   12. item"),
        ("  3) item", "  3) item"),
        ("  -", "  -"),
        ("  -x", "-x"),
        ("  1.5 is a number", "1.5 is a number"),
        # runs of blank lines become one
        ("a\n\n\n\nb", "a\n\nb"),
        ("a\n \t\n  \nb", "a\n\nb"),
        ("\n\n\na", "\na"),
        # the trailing line ending is dropped (and blank lines before it)
        ("a\n", "a"),
        ("a\n\n\n", "a"),
        ("\n", ""),
        ("   \n\t\n", ""),
        ("", ""),
    ],
)
def test_compress_when_rule(source: str, expected: str) -> None:
    assert compress(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # both delimiters keep their lines byte for byte
        (
            "## a\n```py\n  ## keep  \n\n\n\t- **L**: x\n```\n## b",
            "# a\n```py\n  ## keep  \n\n\n\t- **L**: x\n```\n# b",
        ),
        ("~~~\n  a   b  \n~~~\n  c   d", "~~~\n  a   b  \n~~~\nc d"),
        # only the same delimiter closes: ``` inside ~~~ and ~~~ inside ``` are content
        ("~~~\n```\n## x\n```\n~~~\n## y", "~~~\n```\n## x\n```\n~~~\n# y"),
        ("```\n~~~\n## x\n~~~\n```\n## y", "```\n~~~\n## x\n~~~\n```\n# y"),
        # nested-looking fences: a longer fence is closed only by one as long or longer
        ("````md\n```\n## x\n```\n````\n## y", "````md\n```\n## x\n```\n````\n# y"),
        ("```\n## x\n`````\n## y", "```\n## x\n`````\n# y"),
        ("~~~~\n~~~\n## x\n~~~~~\n## y", "~~~~\n~~~\n## x\n~~~~~\n# y"),
        ("``\n##  x", "``\n# x"),
        # an indented fence is a fence (trimming would make it one)
        ("  ```\n  a   b\n  ```\n## c", "  ```\n  a   b\n  ```\n# c"),
        # a fence closed on the last line loses only the final line ending
        ("```\ncode  \n```\n", "```\ncode  \n```"),
        ("```\ncode\n```\n\n\n", "```\ncode\n```"),
        # an unclosed fence runs to the end, kept byte for byte, endings included
        ("## a\n```\ncode  \n\n\n", "# a\n```\ncode  \n\n\n"),
        ("```\n## x", "```\n## x"),
        ("```\n", "```"),
        # blank lines around a fence are collapsed outside it only
        ("a\n\n\n```\n\n\n```\n\n\nb", "a\n\n```\n\n\n```\n\nb"),
    ],
)
def test_compress_when_fenced(source: str, expected: str) -> None:
    assert compress(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("## a  \r\n\r\n\r\n- **L**:  x\r\n", "# a\r\n\r\n- L: x"),
        ("a\r\n```\r\n  x  \r\n```\r\nb\r\n", "a\r\n```\r\n  x  \r\n```\r\nb"),
        ("a\r\nb\nc", "a\r\nb\nc"),
        ("a\rb  c", "a\rb c"),
        ("##\r \n#", "#\n#"),
        ("a \r\r\nb", "a\r\nb"),
    ],
)
def test_compress_when_crlf_keeps_each_line_ending(source: str, expected: str) -> None:
    assert compress(source) == expected


def test_compress_when_fenced_bytes_are_identical() -> None:
    block = "```python\n  def f( x ):\t\n\n\n      return  x  # **b**: c\n## not a heading\n```"
    prose = "##   Heading  \n\n\n- **Label**:   text   \n"
    result = compress(prose + block + "\n" + prose)
    assert block in result
    assert result.count(block) == 1
    assert result == "# Heading\n\n- Label: text\n" + block + "\n# Heading\n\n- Label: text"


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("", []),
        ("a", [("a", "")]),
        ("a\n", [("a", "\n")]),
        ("a\r\nb", [("a", "\r\n"), ("b", "")]),
        ("\n\n", [("", "\n"), ("", "\n")]),
    ],
)
def test_split_lines_when_source(source: str, lines: list[tuple[str, str]]) -> None:
    assert split_lines(source) == lines
    assert "".join(text + ending for text, ending in lines) == source


_PIECES = st.sampled_from(
    ["#", "##", "###", "-", "*", "+", "1.", "2)", "**", "- **L**: ", "```", "~~~", "````"]
    + [" ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "a", "b c", ":", "."]
)
_MARKDOWNISH = st.lists(_PIECES, max_size=50).map("".join)


@settings(max_examples=500)
@given(st.one_of(_MARKDOWNISH, st.text(max_size=200)))
def test_compress_when_applied_twice_is_idempotent(source: str) -> None:
    once = compress(source)
    assert compress(once) == once


@given(st.text(alphabet=st.characters(blacklist_characters="`~\n"), max_size=80), _MARKDOWNISH)
def test_compress_when_fenced_content_is_never_changed(info: str, content: str) -> None:
    lines = content.split("\n")
    fenced = "\n".join(line for line in lines if not line.lstrip(" \t\r").startswith("```"))
    block = f"```{info}\n{fenced}\n```"
    assert block in compress(f"## a  \n\n\n{block}\n\n\n- **b**:  c\n")


@given(_MARKDOWNISH)
def test_compress_when_any_text_never_grows(source: str) -> None:
    assert len(compress(source)) <= len(source)
