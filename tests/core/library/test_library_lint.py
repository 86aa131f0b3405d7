"""library_lint: the engine's lint with the library's fragments, cycles and depth."""

from __future__ import annotations

import time

import pytest

from sysprompt_core.library import FragmentVariant, MemorySource, VariantKey, library_lint
from sysprompt_core.template import Diagnostic


def source(texts: dict[str, str], *extra: FragmentVariant) -> MemorySource:
    return MemorySource(
        [*(FragmentVariant(name, VariantKey(), 1, text) for name, text in texts.items()), *extra]
    )


LIBRARY = source(
    {
        "core": "Core.\n[fragment:env/git]\n",
        "env/git": "Git.[if fragment:core] again[endif]\n",
        "tools/grep": "Grep.\n",
        "solo": "[fragment:solo]",
    }
)
CYCLE = (
    "fragment 'core' includes itself: core → env/git → core; "
    "there [fragment:core] renders as nothing"
)


def messages(
    text: str,
    library: MemorySource | None = LIBRARY,
    *,
    name: str | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> list[str]:
    diagnostics = library_lint(text, library=library, name=name, provider=provider, model=model)
    return [d.message for d in diagnostics]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[fragment:tools/grip]",
            "unknown variable 'fragment:tools/grip' (did you mean 'fragment:tools/grep'?); "
            "it renders as nothing",
        ),
        (
            "[if fragment:cor]x[endif]",
            "unknown variable 'fragment:cor' (did you mean 'fragment:core'?); "
            "it renders as nothing",
        ),
        (
            "[fragment:zzz]",
            "unknown variable 'fragment:zzz' (no such fragment); it renders as nothing",
        ),
    ],
)
def test_library_lint_unknown_fragment_with_suggestion(text: str, expected: str) -> None:
    assert messages(text) == [expected]


def test_library_lint_without_library_knows_no_fragment_names() -> None:
    assert messages("[fragment:anything] [fragment:core]", library=None) == []


def test_library_lint_known_fragment_without_problem_is_quiet() -> None:
    assert messages("[fragment:tools/grep]\n[if fragment:tools/grep]x[endif]") == []


def test_library_lint_cycle_names_the_chain() -> None:
    diagnostics = library_lint("Intro\n  [fragment:core]", library=LIBRARY)
    assert diagnostics == [Diagnostic(2, 3, 18, "warning", CYCLE)]


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("[fragment:env/git]", "core", CYCLE),
        (
            "[fragment:core]",
            "core",
            "fragment 'core' includes itself: core → core; there [fragment:core] "
            "renders as nothing",
        ),
        (
            "[fragment:solo]",
            None,
            "fragment 'solo' includes itself: solo → solo; there [fragment:solo] "
            "renders as nothing",
        ),
        (
            "[if fragment:core]x[endif]",
            "env/git",
            "fragment 'env/git' includes itself: env/git → core → env/git; "
            "there [fragment:env/git] renders as nothing",
        ),
    ],
)
def test_library_lint_fragment_text_is_on_the_chain(
    text: str, name: str | None, expected: str
) -> None:
    assert messages(text, name=name) == [expected]


def test_library_lint_cycle_through_another_fragment_shows_the_route() -> None:
    library = source(
        {"a": "[fragment:core]", "core": "[fragment:env/git]", "env/git": "[fragment:core]"}
    )
    assert messages("[fragment:a]", library) == [
        "fragment 'core' includes itself: a → core → env/git → core; "
        "there [fragment:core] renders as nothing"
    ]


def chain(length: int) -> MemorySource:
    texts = {f"f{i}": f"[fragment:f{i + 1}]" for i in range(1, length)}
    texts[f"f{length}"] = "end"
    return source(texts)


def test_library_lint_depth_eight_is_quiet_nine_is_reported() -> None:
    assert messages("[fragment:f1]", chain(8)) == []
    assert messages("[fragment:f1]", chain(9)) == [
        "fragments nest deeper than 8 levels: f1 → f2 → f3 → f4 → f5 → f6 → f7 → f8 → f9; "
        "there [fragment:f9] renders as nothing"
    ]
    assert messages("[fragment:f2]", chain(9)) == []
    assert messages("[fragment:f2]", chain(9), name="f1") == messages("[fragment:f1]", chain(9))


def test_library_lint_walks_the_variant_for_provider_and_model() -> None:
    library = source(
        {"core": "Core.", "env/git": "Git."},
        FragmentVariant("core", VariantKey("anthropic", "claude-sonnet-4-5"), 1, "[fragment:core]"),
    )
    assert messages("[fragment:core]", library) == []
    assert messages("[fragment:core]", library, provider="anthropic") == []
    assert (
        len(messages("[fragment:core]", library, provider="Anthropic", model="Claude Sonnet 4.5"))
        == 1
    )


def test_library_lint_keeps_engine_diagnostics_in_order() -> None:
    diagnostics = library_lint(
        "[endif][if fragment:core]x[endif]\n[fragment:nope]\n[system:nope]", library=LIBRARY
    )
    assert [(d.line, d.column, d.severity) for d in diagnostics] == [
        (1, 1, "error"),
        (1, 8, "warning"),
        (2, 1, "warning"),
        (3, 1, "warning"),
    ]
    assert diagnostics[1].message == CYCLE


def test_library_lint_unmatched_if_is_literal_and_not_checked() -> None:
    assert messages("[if fragment:nope]") == [
        "[if fragment:nope] is never closed: add [endif] after its block; "
        "it is shown as literal text"
    ]


def test_library_lint_literal_tags_are_not_checked() -> None:
    assert messages("[If fragment:nope] [fragment:nope ]") == [
        "'[If fragment:nope]' is literal text, not a tag; did you mean '[if fragment:nope]'?",
        "'[fragment:nope ]' is literal text, not a tag; did you mean '[fragment:nope]'?",
    ]


def test_library_lint_wide_diamonds_stop_at_the_render_limit() -> None:
    texts = {
        f"l{layer}/f{i}": "".join(f"[fragment:l{layer + 1}/f{j}]" for j in range(10))
        for layer in range(7)
        for i in range(10)
    }
    texts.update({f"l7/f{i}": "leaf" for i in range(10)})
    found = messages("[fragment:l0/f0]", source(texts))
    assert found == [
        "the includes of 'l0/f0' branch into more than 1,000 fragment renders; past that, "
        "fragments render as nothing"
    ]


def test_library_lint_of_many_unknown_names_in_a_large_library_is_bounded() -> None:
    """Issue 24: 2,000 unknown references, each compared with 1,000 similar fragment
    names for a "did you mean", took 38 s of CPU. The hints stop at their budget."""
    library = source({f"team/fragment-{n:04d}": "x" for n in range(1_000)})
    text = "".join(f"[fragment:team/fragmant-{n:05d}]" for n in range(2_000))

    started = time.process_time()
    found = messages(text, library)
    seconds = time.process_time() - started

    assert seconds < 3.0, f"{seconds:.1f} s"
    assert len(found) == 2_000
    assert found[0] == (
        "unknown variable 'fragment:team/fragmant-00000' "
        "(did you mean 'fragment:team/fragment-0000'?); it renders as nothing"
    )
    assert found[-1] == (
        "unknown variable 'fragment:team/fragmant-01999' (no such fragment); it renders as nothing"
    )
