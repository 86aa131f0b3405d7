"""The shared prefix through the layers (agent-hosts §1, library §4): the instance
override is the host's, the thread override the conversation's."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sysprompt_core.library import (
    Layered,
    MemorySource,
    Override,
    layered_prompt,
    render_override,
)
from sysprompt_core.variables import ResolveContext, ResolverOptions, resolve_prompt
from tests.core.variables.fragment_support import library

PRESETS: MemorySource = library(
    {
        "static": "Always the same for [prompt:provider].\n",
        "dated": "Host rules. Today: [system:date]\n",
        "blank": "[if var:missing]only sometimes[endif]\n",
        "early": "[var:who] rules.",
    }
)
BASE_STATIC = "Base text."
BASE_VARYING = "Base at [system:time] then more."


def context() -> ResolveContext:
    return ResolveContext(
        cwd=None,
        provider="anthropic",
        options=ResolverOptions(allowed_roots=()),
        library=PRESETS,
        server_resolves=frozenset({"system"}),
    )


def layered(base: str, overrides: Sequence[Override | None]) -> Layered:
    resolution = resolve_prompt(base, context())
    return layered_prompt(
        resolution.prompt, overrides, context(), base_prefix=resolution.shared_prefix
    )


BASE_SHARED = len("Base at ")
STATIC = "Always the same for anthropic."
DATED_SHARED = len("Host rules. Today: ")


@pytest.mark.parametrize(
    ("base", "overrides", "expected"),
    [
        (BASE_STATIC, [], len(BASE_STATIC)),
        (BASE_VARYING, [], BASE_SHARED),
        (BASE_VARYING, [None, None], BASE_SHARED),
        # The instance override (first): shared, except its preset's own values.
        (BASE_STATIC, [Override(content="Inst.")], len(BASE_STATIC + "\n\nInst.")),
        (BASE_VARYING, [Override(content="Inst.")], BASE_SHARED),
        (
            BASE_VARYING,
            [Override(content="Inst.", strategy="prepend")],
            len("Inst.\n\n") + BASE_SHARED,
        ),
        (
            BASE_STATIC,
            [Override(preset="static", strategy="prepend")],
            len(STATIC + "\n\n" + BASE_STATIC),
        ),
        (BASE_VARYING, [Override(preset="dated", strategy="prepend")], DATED_SHARED),
        (BASE_STATIC, [Override(preset="dated")], len(BASE_STATIC + "\n\n") + DATED_SHARED),
        # A preset whose text may be there or not ends it where the base ends.
        (BASE_STATIC, [Override(preset="early")], len(BASE_STATIC)),
        (BASE_STATIC, [Override(preset="blank")], len(BASE_STATIC)),
        (BASE_STATIC, [Override(preset="early", strategy="prepend")], 0),
        # The thread override (second): per conversation.
        (BASE_STATIC, [None, Override(content="Thread.")], len(BASE_STATIC)),
        (BASE_VARYING, [None, Override(content="Thread.")], BASE_SHARED),
        (BASE_STATIC, [None, Override(content="Thread.", strategy="prepend")], 0),
        (BASE_VARYING, [None, Override(content="Thread.", strategy="prepend")], 0),
        (BASE_STATIC, [None, Override(preset="static")], len(BASE_STATIC)),
        (BASE_STATIC, [None, Override(preset="static", strategy="prepend")], 0),
        # A thread override that adds nothing here changes nothing.
        (BASE_STATIC, [None, Override(content="  \n", strategy="prepend")], len(BASE_STATIC)),
        # Both: the instance one first moves it on, the thread one before all ends it.
        (
            BASE_STATIC,
            [Override(content="Inst.", strategy="prepend"), Override(content="Thread.")],
            len("Inst.\n\n" + BASE_STATIC),
        ),
        (
            BASE_VARYING,
            [
                Override(content="Inst.", strategy="prepend"),
                Override(content="Thread.", strategy="prepend"),
            ],
            0,
        ),
    ],
)
def test_layered_prefix(base: str, overrides: list[Override | None], expected: int) -> None:
    result = layered(base, overrides)
    assert result.prompt is not None
    assert result.shared_prefix_chars == expected


def test_layered_prompt_text_is_unchanged_by_the_prefix() -> None:
    overrides = [Override(content="Inst.", strategy="prepend"), Override(content="Thread.")]
    result = layered(BASE_VARYING, overrides)
    assert result.prompt is not None
    assert result.prompt.startswith("Inst.\n\nBase at ")
    assert result.prompt.endswith(" then more.\n\nThread.")
    assert result.prompt[: result.shared_prefix_chars] == "Inst.\n\nBase at "


def test_whole_prompt_shared_is_none_and_counts_all() -> None:
    result = layered(BASE_STATIC, [Override(content="Inst.")])
    assert result.shared_prefix is None
    assert result.prompt is not None
    assert result.shared_prefix_chars == len(result.prompt)


def test_base_prefix_defaults_to_nothing_known() -> None:
    result = layered_prompt(BASE_STATIC, [Override(content="Inst.")], context())
    assert result.shared_prefix_chars == 0


def test_shared_overrides_says_which_are_the_hosts() -> None:
    overrides = [
        Override(content="A.", strategy="prepend"),
        Override(content="B.", strategy="prepend"),
    ]
    both = layered_prompt(BASE_STATIC, overrides, context(), base_prefix=None, shared_overrides=2)
    assert both.prompt == "B.\n\nA.\n\nBase text."
    assert both.shared_prefix is None
    none = layered_prompt(BASE_STATIC, overrides, context(), base_prefix=None, shared_overrides=0)
    assert none.shared_prefix_chars == 0


@pytest.mark.parametrize(
    ("base", "base_prefix", "overrides", "expected"),
    [
        (None, None, [], (None, 0)),
        ("  ", None, [Override(content="Inst.")], ("Inst.", 5)),
        # A base that is empty here but may not be elsewhere: nothing is shared.
        ("  ", 0, [Override(content="Inst.")], ("Inst.", 0)),
        (None, 0, [None, Override(content="Thread.")], ("Thread.", 0)),
        ("Base.", 99, [], ("Base.", 5)),
    ],
)
def test_layered_prefix_edges(
    base: str | None,
    base_prefix: int | None,
    overrides: list[Override | None],
    expected: tuple[str | None, int],
) -> None:
    result = layered_prompt(base, overrides, context(), base_prefix=base_prefix)
    assert (result.prompt, result.shared_prefix_chars) == expected


def test_render_override_carries_the_presets_prefix() -> None:
    assert render_override(Override(preset="static"), context()).shared_prefix is None
    layer = render_override(Override(preset="dated"), context())
    assert layer.shared_prefix == DATED_SHARED
    assert render_override(Override(content="x"), context()).shared_prefix is None
