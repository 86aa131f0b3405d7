"""FragmentVariant and FragmentUse: what a source gives and what a resolution records."""

from __future__ import annotations

from sysprompt_core.library import FragmentUse, FragmentVariant, VariantKey


def test_variant_use_is_made_once_and_names_the_version() -> None:
    variant = FragmentVariant("tools/shell", VariantKey("OpenAI", "GPT 5"), 3, "text")

    assert variant.use == FragmentUse("tools/shell", "openai", "gpt-5", 3)
    assert variant.use is variant.use
    assert variant == FragmentVariant("tools/shell", VariantKey("openai", "gpt-5"), 3, "text")
