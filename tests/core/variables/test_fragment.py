"""fragment:<name> — variant choice, same-context rendering, line endings (library §1–§2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sysprompt_core.library import FragmentUse, MemorySource
from sysprompt_core.variables import Missing, ResolveContext, ResolverOptions
from sysprompt_core.variables.fragment import FragmentResolver
from tests.core.variables.fragment_support import library, render, variant
from tests.core.variables.support import make_repo

CORE_VARIANTS = library(
    {"core": "default"},
    variant("core", "anthropic", "anthropic"),
    variant("core", "anthropic sonnet", "Anthropic", "Claude Sonnet 4.5"),
    variant("core", "openai gpt-5", "openai", "gpt-5"),
)


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        (None, None, "default"),
        (None, "claude-sonnet-4-5", "default"),  # a model without a provider
        ("anthropic", None, "anthropic"),
        ("Anthropic", "claude-opus-4", "anthropic"),
        ("anthropic", "claude-sonnet-4-5", "anthropic sonnet"),
        ("ANTHROPIC", "Claude Sonnet 4.5", "anthropic sonnet"),
        ("openai", "GPT 5", "openai gpt-5"),
        ("openai", "gpt-4o", "default"),
        ("google", "gemini", "default"),
    ],
)
def test_fragment_variant_is_chosen_for_provider_and_model(
    provider: str | None, model: str | None, expected: str
) -> None:
    resolution = render("[fragment:core]", CORE_VARIANTS, provider=provider, model=model)
    assert resolution.prompt == expected


def test_fragment_records_the_variant_used() -> None:
    resolution = render(
        "[fragment:core]", CORE_VARIANTS, provider="anthropic", model="Claude Sonnet 4.5"
    )
    assert resolution.fragments_used == (FragmentUse("core", "anthropic", "claude-sonnet-4-5", 1),)


@pytest.mark.parametrize(
    ("source", "name", "reason"),
    [
        (None, "core", "there is no fragment library"),
        (MemorySource(), "core", "no fragment named 'core'"),
        (library({"core": "x"}), "nope", "no fragment named 'nope'"),
        (
            MemorySource([variant("core", "x", "openai")]),
            "core",
            "no fragment named 'core' for provider 'anthropic' (it has only other variants)",
        ),
    ],
)
def test_fragment_missing_has_a_reason(source: MemorySource | None, name: str, reason: str) -> None:
    context = ResolveContext(cwd=None, provider="anthropic", library=source)
    assert FragmentResolver().value(name, context) == Missing(reason)


@pytest.mark.parametrize("name", ["Core", "env//git", "../core", "core/", " core"])
def test_fragment_invalid_name_is_missing_with_the_rule(name: str) -> None:
    context = ResolveContext(cwd=None, library=library({"core": "x"}))
    value = FragmentResolver().value(name, context)
    assert isinstance(value, Missing)
    assert "fragment name" in value.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("text", "<text>"),
        ("text\n", "<text>"),
        ("text\r\n", "<text>"),
        ("text\n\n", "<text\n>"),
        ("\n", "<>"),
        ("", "<>"),
    ],
)
def test_fragment_loses_one_trailing_line_ending(text: str, expected: str) -> None:
    assert render("<[fragment:x]>", library({"x": text})).prompt == expected


def test_fragment_line_alone_keeps_its_line_ending() -> None:
    resolution = render("A\n[fragment:x]\nB", library({"x": "X\n"}))
    assert resolution.prompt == "A\nX\nB"


@pytest.mark.parametrize(
    ("model", "expected"),
    [("gpt-5", "[model gpt-5] yes"), (None, "[] yes")],
)
def test_fragment_rendering_empty_still_exists(model: str | None, expected: str) -> None:
    source = library({"x": "[if prompt:model]model [prompt:model][endif]"})
    template = "[[fragment:x]] [if fragment:x]yes[else]no[endif]"
    assert render(template, source, model=model).prompt == expected


def test_fragment_if_tests_existence_for_this_provider() -> None:
    source = MemorySource([variant("x", "", "anthropic")])
    template = "[if fragment:x]for anthropic[else]not here[endif]"
    assert render(template, source, provider="anthropic").prompt == "for anthropic"
    assert render(template, source, provider="openai").prompt == "not here"


def test_fragment_renders_with_the_including_context() -> None:
    source = library(
        {
            "about": (
                "[prompt:provider]/[prompt:model] in [prompt:cwd]"
                "[if tool:grep], grep[endif][if tool:shell], shell[endif]: [var:project]"
            )
        }
    )
    resolution = render(
        "Context: [fragment:about].",
        source,
        cwd="/home/ada/proj",
        provider="anthropic",
        model="claude-sonnet-4-5",
        tools=frozenset({"grep"}),
        variables={"project": "sysprompt"},
    )
    assert resolution.prompt == (
        "Context: anthropic/claude-sonnet-4-5 in /home/ada/proj, grep: sysprompt."
    )


def test_fragment_reads_git_in_the_conversation_directory(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", branch="feature/x")
    source = library({"env/git": "[if git:branch]On branch [git:branch].[endif]"})
    options = ResolverOptions(allowed_roots=(str(tmp_path),))
    resolution = render("[fragment:env/git]", source, cwd=str(repo), options=options)
    assert resolution.prompt == "On branch feature/x."


def test_fragment_output_is_never_parsed_again() -> None:
    source = library({"x": "[var:raw]"})
    resolution = render("[fragment:x]", source, variables={"raw": "[prompt:provider]"})
    assert resolution.prompt == "[prompt:provider]"


SPACED = "##  Title\n\n\n-  **Rule**:  be   brief\n"


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("anthropic", "# Title\n\n- Rule: be brief\n| ##  raw  value"),
        ("openai", "##  Title\n\n\n-  **Rule**:  be   brief\n| ##  raw  value"),
    ],
)
def test_fragment_compression_only_for_the_version_that_has_it(
    provider: str, expected: str
) -> None:
    source = MemorySource(
        [
            variant("x", SPACED + "| [var:raw]\n", "anthropic", compress=True),
            variant("x", SPACED + "| [var:raw]\n", "openai"),
        ]
    )
    resolution = render(
        "[fragment:x]", source, provider=provider, variables={"raw": "##  raw  value"}
    )
    assert resolution.prompt == expected
