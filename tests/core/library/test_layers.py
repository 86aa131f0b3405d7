"""Layered resolution (library §4): overrides rendered and merged onto the base."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from sysprompt_core.library import (
    FragmentUse,
    FragmentVariant,
    Layered,
    LayerText,
    MemorySource,
    Override,
    Strategy,
    VariantKey,
    layered_prompt,
    preset_exists,
    render_override,
)
from sysprompt_core.variables import ResolveContext

PRESETS = MemorySource(
    [
        FragmentVariant(
            "review",
            VariantKey(),
            4,
            "Review [var:scope] as [var:tone] (for [prompt:provider]).\n",
            defaults={"scope": "the diff", "tone": "a mentor"},
        ),
        FragmentVariant(
            "review",
            VariantKey("openai"),
            2,
            "##  Review   first\n[fragment:rules]\n",
            compress=True,
            strategy="prepend",
        ),
        FragmentVariant("rules", VariantKey(), 1, "Be  kind.\n"),
        FragmentVariant("blank", VariantKey(), 1, " [var:nothing] \n"),
    ]
)


def context(
    provider: str | None = "anthropic", variables: Mapping[str, str] | None = None
) -> ResolveContext:
    return ResolveContext(cwd=None, provider=provider, variables=variables or {}, library=PRESETS)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (Override(content="Be terse."), LayerText("Be terse.", "append")),
        (Override(content="Be terse.", strategy="prepend"), LayerText("Be terse.", "prepend")),
        (Override(content="[prompt:provider]\n"), LayerText("[prompt:provider]\n", "append")),
    ],
)
def test_render_override_content_is_used_as_written(
    override: Override, expected: LayerText
) -> None:
    assert render_override(override, context()) == expected


@pytest.mark.parametrize(
    ("override_variables", "request_variables", "expected"),
    [
        ({}, {}, "Review the diff as a mentor (for anthropic)."),
        ({"tone": "a critic"}, {}, "Review the diff as a critic (for anthropic)."),
        (
            {"tone": "a critic"},
            {"tone": "a friend"},
            "Review the diff as a friend (for anthropic).",
        ),
        ({}, {"scope": "the branch"}, "Review the branch as a mentor (for anthropic)."),
    ],
)
def test_render_override_preset_variables_defaults_then_override_then_request(
    override_variables: dict[str, str], request_variables: dict[str, str], expected: str
) -> None:
    override = Override(preset="review", variables=override_variables)
    layer = render_override(override, context(variables=request_variables))
    assert layer == LayerText(expected, "append", (FragmentUse("review", None, None, 4),))


@pytest.mark.parametrize(
    ("provider", "given", "expected"),
    [
        ("anthropic", None, "append"),
        ("anthropic", "prepend", "prepend"),
        ("openai", None, "prepend"),
        ("openai", "append", "append"),
    ],
)
def test_render_override_strategy_override_then_version_then_append(
    provider: str, given: Strategy | None, expected: Strategy
) -> None:
    layer = render_override(Override(preset="review", strategy=given), context(provider))
    assert layer.strategy == expected


def test_render_override_preset_variant_is_compressed_and_includes() -> None:
    layer = render_override(Override(preset="review"), context("OpenAI"))
    assert layer.text == "# Review first\nBe  kind."
    assert layer.used == (
        FragmentUse("review", "openai", None, 2),
        FragmentUse("rules", None, None, 1),
    )


@pytest.mark.parametrize(
    ("name", "source"),
    [("nope", PRESETS), ("review", None), ("blank", PRESETS)],
)
def test_render_override_preset_without_text_is_none(
    name: str, source: MemorySource | None
) -> None:
    layer = render_override(Override(preset=name), ResolveContext(cwd=None, library=source))
    assert layer.text is None


@pytest.mark.parametrize(
    ("name", "provider", "model", "expected"),
    [
        ("review", None, None, True),
        ("review", "openai", "gpt-5", True),
        ("rules", "anthropic", None, True),
        ("nope", None, None, False),
        ("Not A Name", None, None, False),
    ],
)
def test_preset_exists_for_provider_and_model(
    name: str, provider: str | None, model: str | None, expected: bool
) -> None:
    assert preset_exists(name, PRESETS, provider, model) is expected


def test_preset_exists_only_for_its_provider() -> None:
    source = MemorySource([FragmentVariant("x", VariantKey("openai"), 1, "x")])
    assert preset_exists("x", source, "OpenAI", "GPT 5")
    assert not preset_exists("x", source, "anthropic", None)
    assert not preset_exists("x", source, None, None)


@pytest.mark.parametrize(
    ("base", "overrides", "expected"),
    [
        ("Base.", [], "Base."),
        ("Base.", [None, None], "Base."),
        ("Base.", [Override(content="Instance.")], "Base.\n\nInstance."),
        (
            "Base.",
            [
                Override(content="Instance."),
                Override(content="Thread.", strategy="prepend"),
                Override(content="Call."),
            ],
            "Thread.\n\nBase.\n\nInstance.\n\nCall.",
        ),
        (None, [Override(content="Only.")], "Only."),
        ("  \n", [None, Override(content="Only.", strategy="prepend")], "Only."),
        (None, [Override(content="   "), None], None),
        ("\n", [], None),
        (None, [Override(preset="blank")], None),
        ("Base.", [Override(content="")], "Base."),
    ],
)
def test_layered_prompt_merges_in_order(
    base: str | None, overrides: list[Override | None], expected: str | None
) -> None:
    assert layered_prompt(base, overrides, context()).prompt == expected


def test_layered_prompt_lists_the_fragments_used() -> None:
    layered = layered_prompt(
        "Base.",
        [Override(preset="review"), None, Override(preset="rules"), Override(preset="review")],
        context("openai"),
    )
    assert layered == Layered(
        "# Review first\nBe  kind.\n\n# Review first\nBe  kind.\n\nBase.\n\nBe  kind.",
        (FragmentUse("review", "openai", None, 2), FragmentUse("rules", None, None, 1)),
    )
