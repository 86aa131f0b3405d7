"""fragment: includes — nesting, cycles, depth, and the variants used (library §2.3)."""

from __future__ import annotations

import pytest

from sysprompt_core.library import FragmentUse
from sysprompt_core.variables import Missing, ResolveContext
from sysprompt_core.variables.fragment import Fragments, fragment_value
from sysprompt_core.variables.resolve import resolution_state
from tests.core.variables.fragment_support import library, render, variant


def chain_library(length: int) -> dict[str, str]:
    """f1 includes f2 … includes f<length>, which ends with '!'."""
    texts = {f"f{i}": f"{i}[fragment:f{i + 1}]" for i in range(1, length)}
    texts[f"f{length}"] = f"{length}!"
    return texts


def test_fragment_includes_render_nested() -> None:
    source = library(
        {
            "core": "You are helpful.\n[fragment:env/git]\n[fragment:tools/grep]\n",
            "env/git": "In a repository.[if fragment:tools/grep] [fragment:tools/grep][endif]\n",
            "tools/grep": "Use grep.\n",
        }
    )
    resolution = render("[fragment:core]", source)
    assert resolution.prompt == "You are helpful.\nIn a repository. Use grep.\nUse grep."


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        ({"core": "<[fragment:core]>"}, "<>"),
        ({"core": "c[fragment:env/git]", "env/git": "g[fragment:core]"}, "cg"),
        ({"a": "a[fragment:b]", "b": "b[fragment:c]", "c": "c[fragment:a]"}, "abc"),
        ({"core": "c[if fragment:core]loop[else]stop[endif]"}, "cstop"),
    ],
)
def test_fragment_cycle_is_missing_at_the_inner_reference(
    texts: dict[str, str], expected: str
) -> None:
    first = next(iter(texts))
    assert render(f"[fragment:{first}]", library(texts)).prompt == expected


def test_fragment_cycle_reason_names_the_chain() -> None:
    source = library({"core": "c[fragment:env/git]", "env/git": "g[fragment:core]"})
    context, state = resolution_state(ResolveContext(cwd=None, library=source))
    state.local(Fragments).chain.extend(["core", "env/git"])
    assert fragment_value("core", context) == Missing(
        "fragment 'core' includes itself: core → env/git → core"
    )
    assert fragment_value("env/git", context) == Missing(
        "fragment 'env/git' includes itself: env/git → env/git"
    )


@pytest.mark.parametrize(
    ("length", "expected"),
    [(1, "1!"), (7, "1234567!"), (8, "12345678!"), (9, "12345678"), (12, "12345678")],
)
def test_fragment_depth_eight_renders_nine_is_missing(length: int, expected: str) -> None:
    assert render("[fragment:f1]", library(chain_library(length))).prompt == expected


def test_fragment_depth_reason_names_the_chain() -> None:
    context, state = resolution_state(ResolveContext(cwd=None, library=library(chain_library(9))))
    state.local(Fragments).chain.extend(f"f{i}" for i in range(1, 9))
    assert fragment_value("f9", context) == Missing(
        "fragments nest deeper than 8 levels: f1 → f2 → f3 → f4 → f5 → f6 → f7 → f8 → f9"
    )


def test_fragment_depth_is_counted_where_it_is_included() -> None:
    source = library(chain_library(9))
    resolution = render("[fragment:f1]|[fragment:f9]|[fragment:f2]", source)
    assert resolution.prompt == "12345678|9!|23456789!"


def test_fragments_used_in_first_use_order_with_includes() -> None:
    source = library(
        {"core": "[fragment:env/git][fragment:tools/grep]", "env/git": "[fragment:tools/grep]"},
        variant("tools/grep", "grep", version=3),
        variant("tools/grep", "anthropic grep", "anthropic", version=2),
        variant("unused", "x"),
    )
    resolution = render(
        "[fragment:core][fragment:tools/grep][if prompt:model][fragment:unused][endif]",
        source,
        provider="anthropic",
    )
    assert resolution.fragments_used == (
        FragmentUse("core", None, None, 1),
        FragmentUse("env/git", None, None, 1),
        FragmentUse("tools/grep", "anthropic", None, 2),
    )


def test_fragments_used_leaves_out_a_branch_not_taken() -> None:
    source = library({"a": "A", "b": "B"})
    resolution = render("[if prompt:model][fragment:a][else][fragment:b][endif]", source)
    assert resolution.prompt == "B"
    assert [use.name for use in resolution.fragments_used] == ["b"]
