"""The optimised parser agrees with a plain, obviously-correct reading of the rules."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sysprompt_core.template import compile, references, render
from sysprompt_core.template.lexer import Kind, Token, tokenize


def reference_render(source: str, values: dict[str, str | None]) -> str:
    """Spec §4–§5 done the slow, direct way: pair tags, mark standalone lines, walk."""
    tags = list(tokenize(source))
    partner: dict[int, int] = {}  # if -> endif, and if -> else
    else_of: dict[int, int] = {}
    stack: list[int] = []
    for i, tag in enumerate(tags):
        if tag.kind is Kind.IF:
            stack.append(i)
        elif tag.kind is Kind.ELSE and stack and stack[-1] not in else_of:
            else_of[stack[-1]] = i
        elif tag.kind is Kind.ENDIF and stack:
            partner[stack.pop()] = i
    structural = set(partner) | set(partner.values())
    structural |= {e for i, e in else_of.items() if i in partner}

    def span(tag: Token) -> tuple[int, int]:
        line_start = source.rfind("\n", 0, tag.start) + 1
        end = tag.end
        while end < len(source) and source[end] in " \t":
            end += 1
        if source[line_start : tag.start].strip(" \t"):
            return tag.start, tag.end
        if source.startswith("\r\n", end):
            return line_start, end + 2
        if source.startswith("\n", end):
            return line_start, end + 1
        return (line_start, end) if end == len(source) else (tag.start, tag.end)

    out: list[str] = []
    pos = 0
    skipping: list[tuple[int, bool]] = []  # (if index, emitting before the block)
    emitting = True
    for i, tag in enumerate(tags):
        if i not in structural and tag.kind is not Kind.VARIABLE:
            continue
        start, end = span(tag) if tag.kind is not Kind.VARIABLE else (tag.start, tag.end)
        if emitting and start > pos:
            out.append(source[pos:start])
        pos = max(pos, end)
        if tag.kind is Kind.VARIABLE:
            if emitting:
                out.append(values.get(tag.key or "") or "")
        elif tag.kind is Kind.IF:
            skipping.append((i, emitting))
            exists = values.get(tag.key or "") is not None
            emitting = emitting and exists is not tag.negated
        elif tag.kind is Kind.ELSE:
            _, outer = skipping[-1]
            emitting = outer and not emitting
        else:
            emitting = skipping.pop()[1]
    if emitting:
        out.append(source[pos:])
    return "".join(out)


ALPHABET = st.sampled_from(
    ["[if a:b]", "[if !a:b]", "[if c:d]", "[else]", "[endif]", "[a:b]", "[c:d]", "[x:y]"]
    + [" ", "\t", "\n", "\r\n", "\r", "x", "[", "]", "[If a:b]", "[endif ]"]
)


@settings(max_examples=1500, deadline=None)
@example(" [if a:b]\nx[endif]", {"a:b": "A"})
@example("[if !a:b]\n [endif]", {})
@example("x\n\t[if c:d] \r\n[else]\n[endif]", {"c:d": "C"})
@example("[if a:b]\n[else]\n[else]\n[endif]\n[endif]\n", {})
@given(
    st.lists(ALPHABET, max_size=30).map("".join),
    st.fixed_dictionaries(
        {}, optional={"a:b": st.sampled_from(["", "A", "\n"]), "c:d": st.just("C")}
    ),
)
def test_parser_agrees_with_reference_when_random(
    source: str, values: dict[str, str | None]
) -> None:
    assert render(source, values) == reference_render(source, values)
    assert compile(source).render(values) == reference_render(source, values)


def test_references_exclude_unmatched_if() -> None:
    assert references("[if a:b][if c:d][endif]") == {"c:d"}
