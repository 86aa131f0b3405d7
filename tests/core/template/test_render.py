"""Spec §2–§5 and §7: rendering, block pairing, standalone lines, whole-prompt rules."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sysprompt_core.template import Bounded, PromptTooLarge, compile, references, render
from sysprompt_core.template.nodes import literal_size, render_nodes_within, utf8_size

DEFAULT = (
    "You are a helpful coding assistant.\n"
    "[if file:AGENTS.md]\n"
    "[file:AGENTS.md]\n"
    "[endif]\n"
    "The current working directory is [prompt:cwd].\n"
)
V = {"a:b": "A", "c:d": "C", "e:f": "", "file:x": "[system:os]"}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        # §2 variables, literal look-alikes, verbatim values
        ("[a:b][c:d]", "AC"),
        ("[x:y]", ""),
        ("[e:f]", ""),
        ("[file:x]", "[system:os]"),
        ("[a:[a:b]]", "[a:A]"),
        ("[Note: be brief] [TODO:x] [see: above] [x] [a:] [:b]", None),
        ("[If a:b] [ENDIF] [endif ] [if a:b ]", None),
        # §3 existence: empty string exists, missing does not
        ("[if e:f]yes[else]no[endif]", "yes"),
        ("[if x:y]yes[else]no[endif]", "no"),
        ("[if !x:y]yes[else]no[endif]", "yes"),
        ("[if !a:b]yes[else]no[endif]", "no"),
        ("[if !x:y]only[endif]", "only"),
        # §4 pairing
        ("[if a:b]1[if x:y]2[else]3[endif]4[endif]", "134"),
        ("[if x:y]1[if a:b]2[endif]3[else]4[endif]", "4"),
        ("[else]x", "[else]x"),
        ("[endif]x", "[endif]x"),
        ("[if a:b]1[else]2[else]3[endif]", "1"),
        ("[if x:y]1[else]2[else]3[endif]", "2[else]3"),
        ("a[if a:b]b", "a[if a:b]b"),
        ("[if a:b]1[else]2", "[if a:b]1[else]2"),
        ("[if a:b]x[if x:y]y[endif]z", "[if a:b]xz"),
        ("[if a:b][if c:d]in[endif]", "[if a:b]in"),
        ("[if x:y][if c:d][else]e[endif]", "[if x:y]"),
        ("[endif][if a:b][else][else][endif][endif]", "[endif][endif]"),
        ("[endif][if x:y][else][else][endif][endif]", "[endif][else][endif]"),
        # §5 standalone lines
        ("a\n[if a:b]\nb\n[endif]\nc\n", "a\nb\nc\n"),
        ("a\n  \t[if a:b] \t\nb\n[endif]  \nc", "a\nb\nc"),
        ("a\r\n[if a:b]\r\nb\r\n[else]\r\nz\r\n[endif]\r\nc", "a\r\nb\r\nc"),
        ("[if x:y]\nb\n[else]\nz\n[endif]", "z\n"),
        ("[if a:b]\nb\n[endif]", "b\n"),
        ("a\n[if a:b]b[endif]\nc", "a\nb\nc"),
        ("a\n[if a:b][endif]\nc", "a\n\nc"),
        ("a [if a:b]\nb\n[endif] c", "a \nb\n c"),
        ("a\r[if a:b]\nb\n[endif]\n", "a\r\nb\n"),
        ("[a:b]\n[c:d]\n", "A\nC\n"),
        ("[x:y]\n", "\n"),
        ("[if a:b]\n[endif]\n[if a:b]\n[endif]\n", ""),
        ("x\n[endif]\ny", "x\n[endif]\ny"),
        ("  [if a:b]\nunclosed\n", "  [if a:b]\nunclosed\n"),
        ("[if a:b]\n[else]\n[if c:d]\nin\n[endif]\n", "[if a:b]\n[else]\nin\n"),
        ("x\n\t[else]  \ny", "x\n\t[else]  \ny"),
    ],
)
def test_render_when_case(template: str, expected: str | None) -> None:
    expected = template if expected is None else expected
    assert render(template, V) == expected
    assert compile(template).render(V) == expected


def test_render_default_template_when_agents_absent_and_present() -> None:
    cwd = {"prompt:cwd": "/home/ada/proj"}
    assert render(DEFAULT, cwd) == (
        "You are a helpful coding assistant.\nThe current working directory is /home/ada/proj.\n"
    )
    assert render(DEFAULT, {**cwd, "file:AGENTS.md": "Use tabs."}) == (
        "You are a helpful coding assistant.\nUse tabs.\n"
        "The current working directory is /home/ada/proj.\n"
    )


@pytest.mark.parametrize(
    ("template", "expected"),
    [("", None), ("  \n\t\r\n", None), ("[x:y]\n[if x:y]a[endif]", None), (" a ", " a ")],
)
def test_render_prompt_when_empty_or_whitespace(template: str, expected: str | None) -> None:
    assert compile(template).render_prompt(V) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("[a:b] [if c:d][else][endif] [if !e:f][endif]", {"a:b", "c:d", "e:f"}),
        ("[if a:b] unclosed [x:y]", {"x:y"}),
        ("[A:b] [if x:y ] [a:[b:c]]", {"b:c"}),
        ("", set()),
    ],
)
def test_references_when_case(template: str, expected: set[str]) -> None:
    assert references(template) == expected
    assert compile(template).references == expected


class Recording(Mapping[str, "str | None"]):
    """A real Mapping that remembers which keys were looked up."""

    def __init__(self, values: dict[str, str | None]) -> None:
        self.data = values
        self.looked_up: list[str] = []

    def __getitem__(self, key: str) -> str | None:
        self.looked_up.append(key)
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def test_render_lookups_when_untaken_branch_and_literal_tags() -> None:
    values = Recording({"a:b": None, "c:d": "C"})
    template = "[if a:b][git:status][else][c:d][endif] [if lit:x] [Lit:y] [endif ]"
    assert render(template, values) == "C [if lit:x] [Lit:y] [endif ]"
    assert values.looked_up == ["a:b", "c:d"]
    assert set(values.looked_up) <= references(template)


def test_render_when_100k_nested_blocks() -> None:
    n = 100_000
    template = "[if a:b]" * n + "core" + "[else]x[endif]" * n
    assert render(template, V) == "core"
    assert render(template, {}) == "x"


def test_render_when_100k_nested_unmatched_blocks_with_else() -> None:
    n = 100_000
    template = "[if a:b]1[else]2" * n
    assert render(template, V) == template


def test_render_when_200k_unmatched_tags() -> None:
    template = "[if a:b] [endif] " * 1 + "[if x:y]\n[else]\n" * 100_000 + "[endif]\n" * 0
    assert render(template, V).count("[if x:y]") == 100_000
    strays = "[endif] [else] " * 100_000
    assert render(strays, V) == strays


def test_render_compiled_when_rendered_many_times() -> None:
    template = compile(DEFAULT)
    first = template.render({"prompt:cwd": "/a"})
    assert template.render({"prompt:cwd": "/b"}) == first.replace("/a", "/b")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("[]:!ifelsndab \t\r\nx/")), max_size=80),
    st.dictionaries(st.sampled_from(["a:b", "d:x", "i:f"]), st.none() | st.text(max_size=3)),
)
def test_render_never_raises_when_any_text(template: str, values: dict[str, str | None]) -> None:
    recording = Recording(values)
    output = render(template, _Lenient(recording))
    assert output == compile(template).render(_Lenient(Recording(values)))
    assert set(recording.looked_up) <= references(template)


@given(st.text().filter(lambda s: "[" not in s))
def test_render_identity_when_no_bracket(text: str) -> None:
    assert render(text, V) == text


class _Lenient(Mapping[str, "str | None"]):
    def __init__(self, inner: Recording) -> None:
        self.inner = inner

    def __getitem__(self, key: str) -> str | None:
        self.inner.looked_up.append(key)
        return self.inner.data.get(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.inner)

    def __len__(self) -> int:
        return len(self.inner)


# Bounded rendering (``Template.render_within``): a value that would take the text past
# the limit makes its variable not exist; blocks testing it follow on the next pass.

BOUND_VALUES: dict[str, str | None] = {
    "a:b": "AAAA",
    "c:d": "CC",
    "e:f": "",
    "u:v": "é✓",  # 5 bytes in UTF-8, 2 characters
    "file:x": "12345",
}


@pytest.mark.parametrize(
    ("template", "limit", "expected", "dropped"),
    [
        ("[a:b][c:d]", 6, "AAAACC", set()),  # fits exactly: kept
        ("[a:b][c:d]", 5, "AAAA", {"c:d"}),
        ("[a:b][c:d]", 3, "CC", {"a:b"}),  # a later, smaller value still fits
        ("x[a:b]y", 6, "xAAAAy", set()),
        ("x[a:b]y", 5, "xy", {"a:b"}),  # literal text is reserved first
        ("[a:b]x", 4, "x", {"a:b"}),
        ("[u:v]", 5, "é✓", set()),  # counted in UTF-8 bytes, not characters
        ("[u:v]", 4, "", {"u:v"}),
        ("[a:b][a:b]", 7, "", {"a:b"}),  # a variable exists whole or not at all
        ("[a:b][a:b]", 8, "AAAAAAAA", set()),
        ("[if e:f]yes[endif][e:f]", 3, "yes", set()),  # empty values exist
        ("[file:x][if file:x]yes[else]no[endif]", 7, "no", {"file:x"}),
        ("[file:x][if file:x]yes[else]no[endif]", 8, "12345yes", set()),
        ("[file:x][if !file:x]only without[endif]", 5, "12345", set()),
        ("[file:x][if !file:x]only without[endif]", 4, "", None),
        ("[if file:x]\n[file:x]\n[endif]\ntail", 8, "tail", {"file:x"}),
        ("[if x:y][a:b][endif]", 0, "", set()),  # untaken branches cost nothing
        ("[x:y]", 0, "", set()),
        ("", 0, "", set()),
    ],
)
def test_render_within_when_case(
    template: str, limit: int, expected: str, dropped: set[str] | None
) -> None:
    if dropped is None:  # dropping flips a block whose text alone is over the limit
        with pytest.raises(PromptTooLarge):
            compile(template).render_within(BOUND_VALUES, limit)
        return
    result = compile(template).render_within(BOUND_VALUES, limit)
    assert (result.text, set(result.dropped)) == (expected, dropped)
    assert utf8_size(result.text) <= limit


@pytest.mark.parametrize(
    ("template", "limit", "size"),
    [("hello [a:b]", 5, 6), ("[if c:d]long text[endif]", 8, 9), ("é", 1, 2)],
)
def test_render_within_when_literal_text_over_limit(template: str, limit: int, size: int) -> None:
    with pytest.raises(PromptTooLarge) as caught:
        compile(template).render_within(BOUND_VALUES, limit)
    assert (caught.value.size, caught.value.limit) == (size, limit)
    assert f"{size:,} bytes" in str(caught.value)


def test_render_within_when_limit_large_equals_render() -> None:
    for template in [DEFAULT, "[if a:b]1[if x:y]2[else]3[endif]4[endif]", "a\n[if a:b]\nb\n"]:
        assert compile(template).render_within(V, 10**9) == Bounded(
            render(template, V), frozenset()
        )


def test_render_within_when_26000_references_to_one_large_value() -> None:
    template = "[file:big]" * 26_000
    result = compile(template).render_within({"file:big": "x" * 1_000_000}, 1_048_576)
    assert (result.text, result.dropped) == ("", frozenset({"file:big"}))


BOUND_PIECES = [
    *("[a:b]", "[c:d]", "[u:v]", "[if a:b]", "[if !c:d]", "[if u:v]", "[else]", "[endif]"),
    *("x", "xxxxxxxx", "é✓", "\n", "[a:"),
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(BOUND_PIECES), max_size=14).map("".join),
    st.dictionaries(
        st.sampled_from(["a:b", "c:d", "u:v"]), st.none() | st.text(alphabet="xé✓", max_size=6)
    ),
    st.integers(min_value=0, max_value=40),
    st.frozensets(st.sampled_from(["a:b", "c:d", "u:v"])),
)
# A value that fits only in what an untaken branch's text leaves, while the prefix is
# still shared and after it ended.
@example("[if c:d]xxxxxxxx[endif][a:b][u:v]", {"a:b": "x", "u:v": "xxxxxx"}, 10, frozenset())
@example("[a:b][if c:d]xxxxxxxx[endif][u:v]", {"a:b": "x", "u:v": "xxxxxx"}, 10, frozenset({"a:b"}))
def test_render_within_when_literal_size_known_equals_counting_every_pass(
    template: str, values: dict[str, str | None], limit: int, varying: frozenset[str]
) -> None:
    """``Template.render_within`` reserves the literal text of every branch and counts
    what a walk reached only when a value comes near the limit: it gives exactly what
    counting on every pass gives (text, dropped keys, shared prefix), or the same error."""
    compiled = compile(template)
    assert compiled.literal_bytes == literal_size(compiled.nodes)

    def within(literal_bytes: int | None) -> Bounded | tuple[int, int]:
        try:
            return render_nodes_within(
                compiled.nodes, values, limit, varying.__contains__, literal_bytes
            )
        except PromptTooLarge as error:
            return (error.size, error.limit)

    assert within(compiled.literal_bytes) == within(None)
