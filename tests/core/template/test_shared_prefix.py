"""The shared prefix, engine side: measured in the bounded walk, located in the source."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sysprompt_core.template import (
    Prefixed,
    PrefixEnd,
    PrefixStop,
    compile,
    render,
)

VARIES = frozenset({"v:a", "v:b", "v:gone"})


def varies(key: str) -> bool:
    return key in VARIES


VALUES: dict[str, str | None] = {
    "s:a": "S",
    "s:b": "static",
    "s:gone": None,
    "v:a": "Vary",
    "v:b": "",
    "v:gone": None,
    "f:part": Prefixed("head-tail", 5),
    "f:none": Prefixed("tail", 0),
    "f:all": "all static",
}


@pytest.mark.parametrize(
    ("template", "prefix", "stop"),
    [
        ("plain text", None, None),
        ("", None, None),
        ("a [s:a] b [s:gone] c", None, None),  # static keys never end it
        ("ab[v:a]cd", 2, PrefixStop("v:a", False, 0)),
        ("ab[v:b]cd", 2, PrefixStop("v:b", False, 0)),  # an empty value ends it too
        ("ab[v:gone]cd", 2, PrefixStop("v:gone", False, 0)),  # so does a missing one
        ("[v:a]", 0, PrefixStop("v:a", False, 0)),
        ("x[s:b]y[v:a][v:b]", 8, PrefixStop("v:a", False, 0)),  # the first one reached
        # A block on a varying key ends it at the block's start, whichever branch.
        ("ab[if v:a]then[else]else[endif]cd", 2, PrefixStop("v:a", True, 0)),
        ("ab[if v:gone]then[else]else[endif]cd", 2, PrefixStop("v:gone", True, 0)),
        ("ab[if !v:a]then[endif]cd", 2, PrefixStop("v:a", True, 0)),
        ("ab\n[if v:a]\nthen\n[endif]\ncd", 3, PrefixStop("v:a", True, 0)),  # standalone
        # A block on a static key does not; what is inside it may.
        ("ab[if s:a]x[v:a][endif]", 3, PrefixStop("v:a", False, 0)),
        ("ab[if s:gone]x[v:a][endif]cd[v:b]", 4, PrefixStop("v:b", False, 0)),
        ("ab[if s:a]x[else][v:a][endif]cd", None, None),  # the branch not taken
        ("ab[if s:a][if v:a]y[endif][endif]", 2, PrefixStop("v:a", True, 0)),
        # A Prefixed value carries its own prefix: the walk goes on into it.
        ("ab[f:part]cd", 7, PrefixStop("f:part", False, 0)),
        ("ab[f:none]cd", 2, PrefixStop("f:none", False, 0)),
        ("ab[f:all]cd[v:a]", 14, PrefixStop("v:a", False, 0)),
        ("[f:all][f:part]", 15, PrefixStop("f:part", False, 0)),
        ("[v:a][v:a]", 0, PrefixStop("v:a", False, 0)),
        ("[s:a][if v:a][endif][v:a]", 1, PrefixStop("v:a", True, 0)),
    ],
)
def test_prefix_when_case(template: str, prefix: int | None, stop: PrefixStop | None) -> None:
    result = compile(template).render_within(VALUES, 10**9, varies)
    assert result.text == render(template, VALUES)
    assert (result.prefix, result.stop) == (prefix, stop)


def test_prefix_without_varies_only_prefixed_values_end_it() -> None:
    template = compile("ab[v:a]cd[f:part]")
    result = template.render_within(VALUES, 10**9)
    assert result.prefix == len("abVarycd") + 5
    assert result.stop == PrefixStop("f:part", False, 0)


def test_prefix_counts_code_points_not_bytes() -> None:
    result = compile("é✓ [v:a]").render_within(VALUES, 10**9, varies)
    assert result.prefix == 3


@pytest.mark.parametrize(
    ("template", "limit", "prefix", "dropped"),
    [
        # A value dropped to fit ends the prefix where it stood: whether it fits depends
        # on the whole text, so on the conversation.
        ("ab[s:b]cd", 9, 2, {"s:b"}),
        ("ab[s:b]cd", 10, None, set()),
        # ... and a block on it, on the pass that no longer finds it.
        ("ab[s:b][if s:b]yes[endif]", 8, 2, {"s:b"}),
    ],
)
def test_prefix_when_a_value_is_dropped(
    template: str, limit: int, prefix: int | None, dropped: set[str]
) -> None:
    result = compile(template).render_within(VALUES, limit, varies)
    assert (result.prefix, set(result.dropped)) == (prefix, dropped)


def test_prefix_end_when_value_after_a_large_static_head() -> None:
    head = "x" * 5000
    result = compile(head + "[v:a]").render_within(VALUES, 10**9, varies)
    assert result.prefix == 5000


def test_unbounded_render_is_the_same_text() -> None:
    template = "a[f:part]b[if v:a]c[endif]"
    assert compile(template).render(VALUES) == "ahead-tailbc"


# Prefixed values


def test_prefixed_is_a_string_with_its_shared_length() -> None:
    value = Prefixed("hello", 2)
    assert value == "hello" and isinstance(value, str)
    assert value.shared == 2
    assert "x" + value == "xhello" and type(value.strip()) is str
    assert repr(value) == "Prefixed('hello', shared=2)"


@pytest.mark.parametrize(("shared", "expected"), [(-3, 0), (0, 0), (5, 5), (99, 5)])
def test_prefixed_shared_stays_within_the_text(shared: int, expected: int) -> None:
    assert Prefixed("hello", shared).shared == expected


def test_prefixed_is_immutable() -> None:
    value = Prefixed("hello", 2)
    with pytest.raises(AttributeError):
        value.shared = 3


# Where it ends in the source (Template.prefix_end)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("plain", None),
        ("ab [v:a]", PrefixEnd("v:a", 1, 4)),
        ("line one\n  [if v:a]\nx\n[endif]\n", PrefixEnd("v:a", 2, 3)),
        # The same key earlier in a branch the rendering did not take is not it.
        ("[if s:gone]\n[v:a]\n[endif]\nx [v:a]", PrefixEnd("v:a", 4, 3)),
        ("[if s:a]\n[else]\n[v:a]\n[endif]\nx [v:a]", PrefixEnd("v:a", 5, 3)),
        # Literal tags are not tags: an unmatched [if] and a stray [else] change nothing.
        ("[if s:a] open\n[else]\nx[v:a]", PrefixEnd("v:a", 3, 2)),
        ("[else][endif]\n[if v:a]x[endif]", PrefixEnd("v:a", 2, 1)),
        # A Prefixed value names its own tag.
        ("[s:a]\n\n[f:part]", PrefixEnd("f:part", 3, 1)),
        ("[if v:gone][endif]", PrefixEnd("v:gone", 1, 1)),
    ],
)
def test_prefix_end_when_case(template: str, expected: PrefixEnd | None) -> None:
    compiled = compile(template)
    result = compiled.render_within(VALUES, 10**9, varies)
    assert compiled.prefix_end(result, VALUES) == expected


def test_prefix_end_of_a_dropped_value() -> None:
    compiled = compile("ab\n[if s:a]x[endif] [s:b][if s:b]yes[endif]")
    result = compiled.render_within(VALUES, 9, varies)
    assert result.dropped == {"s:b"}
    assert compiled.prefix_end(result, VALUES) == PrefixEnd("s:b", 2, 18)


def test_prefix_end_of_a_block_on_a_dropped_value() -> None:
    compiled = compile("ab\n[if s:b]yes[endif][s:b]")
    result = compiled.render_within(VALUES, 8, varies)
    assert (result.text, set(result.dropped), result.prefix) == ("ab\n", {"s:b"}, 3)
    assert compiled.prefix_end(result, VALUES) == PrefixEnd("s:b", 2, 1)


# The property: two renderings whose values differ only in varying keys agree on the
# text up to the prefix, and the prefix is the same for both.

TAGS = ["[s:a]", "[s:gone]", "[v:a]", "[v:b]", "[if s:a]", "[if v:a]", "[if !s:gone]"]
PIECES = st.lists(st.sampled_from(["x", "yz\n", "[else]", "[endif]", *TAGS]), max_size=25).map(
    "".join
)
VARYING = st.one_of(st.none(), st.text(alphabet="pq\n", max_size=4))


@settings(max_examples=300, deadline=None)
@given(PIECES, VARYING, VARYING, VARYING, VARYING)
def test_prefix_is_shared_by_every_conversation(
    template: str, a1: str | None, b1: str | None, a2: str | None, b2: str | None
) -> None:
    compiled = compile(template)
    first = compiled.render_within({**VALUES, "v:a": a1, "v:b": b1}, 10**9, varies)
    second = compiled.render_within({**VALUES, "v:a": a2, "v:b": b2}, 10**9, varies)
    assert first.prefix == second.prefix and first.stop == second.stop
    if first.prefix is None:
        assert first.text == second.text
    else:
        assert first.text[: first.prefix] == second.text[: first.prefix]
        assert first.prefix <= min(len(first.text), len(second.text))
