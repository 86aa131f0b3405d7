"""Serializers of the library's endpoints (library.md §8): fragments and their variants,
versions, the preview, the import report and the agent hosts' instance overrides.

Input serializers check the shape; the library's validation checks the rest (names,
keys, settings, overrides) and names the field in its 400.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from sysprompt.api.serializers import (
    STRATEGY_SCHEMA,
    VARIABLES_SCHEMA,
    FragmentUseOutputSerializer,
    HostContextInputSerializer,
    JsonValueField,
    OverrideField,
    PageOutputSerializer,
    PreviewOutputSerializer,
    StrictBooleanField,
    StrictCharField,
    cwd_field,
    model_field,
    template_field,
)
from sysprompt.prompts.validation import template_size_check
from sysprompt_core.library import FRAGMENT_NAME_MAX_LENGTH
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, MODEL_MAX_LENGTH

STRATEGIES = ["append", "prepend"]
SOURCES = ["user", "default", "import"]


@extend_schema_field({**STRATEGY_SCHEMA, "nullable": False})
class StrategyField(JsonValueField):
    """``append`` or ``prepend``, checked by the library (which says why not ``replace``)."""


@extend_schema_field({**VARIABLES_SCHEMA, "description": "Values for [var:<name>] as a preset."})
class DefaultsField(JsonValueField):
    """A version's ``defaults``: names → string values, checked by the library."""


# --- the variant picked by ?provider=&model= -------------------------------------------


class VariantQuerySerializer(serializers.Serializer[Any]):
    """``?provider=&model=``: which variant; both left out (or empty) is the default."""

    provider = StrictCharField(
        required=False, allow_blank=True, max_length=MODEL_MAX_LENGTH, trim_whitespace=False
    )
    model = StrictCharField(
        required=False, allow_blank=True, max_length=MODEL_MAX_LENGTH, trim_whitespace=False
    )


class LibraryQuerySerializer(serializers.Serializer[Any]):
    search = StrictCharField(
        required=False, allow_blank=True, max_length=FRAGMENT_NAME_MAX_LENGTH, trim_whitespace=False
    )


# --- a variant ---------------------------------------------------------------------------


@extend_schema_serializer(component_name="FragmentVariantInput")
class VariantInputSerializer(serializers.Serializer[Any]):
    text = template_field(
        help_text=(
            "The fragment's template source for this variant, stored byte for byte; at "
            "most MAX_TEMPLATE_BYTES in UTF-8."
        )
    )
    compress = StrictBooleanField(
        required=False,
        help_text="Compress the text before parsing. Left out: the current version's (false).",
    )
    defaults = DefaultsField(
        required=False,
        help_text="Values for var: when used as a preset. Left out: the current version's ({}).",
    )
    strategy = StrategyField(
        required=False,
        help_text=(
            "The merge when applied as a preset override that does not say. Left out: the "
            'current version\'s ("append").'
        ),
    )

    def validate_text(self, value: str) -> str:
        template_size_check(value)
        return value


class VariantFlagsOutputSerializer(serializers.Serializer[Any]):
    """What the library says about a variant's newest version."""

    provider = serializers.CharField(allow_null=True, help_text="null: the default variant.")
    model = serializers.CharField(allow_null=True, help_text="null: any model of the provider.")
    version = serializers.IntegerField(help_text="The newest version's number, from 1.")
    compress = serializers.BooleanField()
    strategy = serializers.ChoiceField(choices=STRATEGIES)
    # A field named "source": the stubs type Field.source (the attribute path) as str.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=SOURCES, help_text="Who wrote it: a person, the installer, an import."
    )
    deleted = serializers.BooleanField(
        help_text="The newest version deletes the variant (resolution skips it; PUT restores)."
    )
    edited = serializers.BooleanField(help_text="Not the installer's text.")
    newer_default = serializers.BooleanField(
        help_text="A release since this edit ships a text other than the one it started from."
    )
    pinned = serializers.BooleanField(help_text='"Keep mine": the installer leaves it alone.')
    author = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="FragmentVariantSummary")
class VariantSummaryOutputSerializer(VariantFlagsOutputSerializer):
    pass


@extend_schema_serializer(component_name="FragmentVariant")
class VariantOutputSerializer(VariantFlagsOutputSerializer):
    name = serializers.CharField()
    text = serializers.CharField(help_text="The newest version's text (kept when deleted).")
    defaults = serializers.DictField(child=serializers.CharField())
    shipped_text = serializers.CharField(
        allow_null=True, help_text="The text the installer last shipped for it; null if none."
    )


@extend_schema_serializer(component_name="FragmentVariantDetail")
class VariantDetailOutputSerializer(VariantOutputSerializer):
    used_by = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="The prompts whose working copy or served releases include the fragment "
        "(directly or through other fragments), by name; null for a user who is no prompt "
        "author.",
    )
    used_by_truncated = serializers.BooleanField(
        help_text="A bound stopped the reading: used_by may miss some prompts."
    )


@extend_schema_serializer(component_name="Fragment")
class FragmentOutputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    variants = VariantSummaryOutputSerializer(
        many=True, help_text="The default variant first, then by provider and model."
    )


@extend_schema_serializer(component_name="LibraryPage")
class LibraryPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/library`` (cursor pagination, by name)."""

    results = FragmentOutputSerializer(many=True)


@extend_schema_serializer(component_name="FragmentVersion")
class FragmentVersionOutputSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField(source="number")
    text = serializers.CharField()
    compress = serializers.BooleanField()
    defaults = serializers.DictField(child=serializers.CharField())
    strategy = serializers.ChoiceField(choices=STRATEGIES)
    source = serializers.ChoiceField(choices=SOURCES)  # type: ignore[assignment]
    deleted = serializers.BooleanField()
    author = serializers.CharField(source="author.get_username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="FragmentVersionPage")
class FragmentVersionPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/library/fragments/{name}/versions`` (newest first)."""

    results = FragmentVersionOutputSerializer(many=True)


# --- the preview ---------------------------------------------------------------------------


@extend_schema_serializer(component_name="LibraryPreviewInput")
class LibraryPreviewInputSerializer(HostContextInputSerializer):
    cwd = cwd_field()
    model = model_field()
    conversation_id = StrictCharField(
        required=False,
        allow_blank=False,
        trim_whitespace=False,
        min_length=1,
        max_length=CONVERSATION_ID_MAX_LENGTH,
        help_text="Rendered as [prompt:conversation_id]; nothing is stored under it.",
    )
    template = template_field(
        required=False,
        help_text="A template to render instead of the current one; not with `fragment`.",
    )
    compress = StrictBooleanField(
        required=False, default=False, help_text="Compress `template` first, as a version would."
    )
    fragment = StrictCharField(
        required=False,
        min_length=1,
        max_length=FRAGMENT_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text=(
            "Render this fragment's variant for the provider and model instead of a "
            "template (no overrides applied); not with `template`."
        ),
    )

    def validate_template(self, value: str) -> str:
        template_size_check(value)
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "template" in attrs and "fragment" in attrs:
            raise serializers.ValidationError(
                {"fragment": ["Give either template or fragment, not both."]}
            )
        return attrs


@extend_schema_serializer(component_name="Compression")
class CompressionOutputSerializer(serializers.Serializer[Any]):
    chars_before = serializers.IntegerField()
    chars_after = serializers.IntegerField()
    tokens_before = serializers.IntegerField(
        allow_null=True,
        help_text=(
            "The source in tokens for the provider and model (see tokens_exact); null "
            "when it could not be counted (tokens_error)."
        ),
    )
    tokens_after = serializers.IntegerField(
        allow_null=True, help_text="The compressed source, likewise."
    )
    tokens_exact = serializers.BooleanField(
        help_text="true: exact (one of OpenAI's models); false: an estimate (o200k_base)."
    )
    tokens_error = serializers.CharField(
        allow_null=True, help_text="null, or why the texts could not be counted."
    )


@extend_schema_serializer(component_name="LibraryPreview")
class LibraryPreviewOutputSerializer(PreviewOutputSerializer):
    fragments_used = FragmentUseOutputSerializer(
        many=True, help_text="Which variant and version of each fragment, in first-use order."
    )
    compression = CompressionOutputSerializer(
        allow_null=True,
        help_text="What compression did to the source text; null when compress is off.",
    )


# --- import ---------------------------------------------------------------------------------


class ImportQuerySerializer(serializers.Serializer[Any]):
    dry_run = serializers.ChoiceField(
        choices=["0", "1", "true", "false"],
        required=False,
        default="0",
        help_text="1 or true: report what would happen, change nothing.",
    )


@extend_schema_serializer(component_name="ImportTarget")
class ImportTargetOutputSerializer(serializers.Serializer[Any]):
    fragment = serializers.CharField(
        allow_null=True, help_text="The fragment's name; null: the root template."
    )
    provider = serializers.CharField(allow_null=True, help_text="Normalised; null: any.")
    model = serializers.CharField(allow_null=True, help_text="Normalised; null: any.")


@extend_schema_serializer(component_name="ImportItem")
class ImportItemOutputSerializer(serializers.Serializer[Any]):
    path = serializers.CharField(help_text="The file's path in the archive, as written there.")
    action = serializers.ChoiceField(
        choices=["created", "changed", "unchanged", "refused", "ignored"],
        help_text="ignored: not part of a library (not .md, not sysprompt.json, hidden).",
    )
    reason = serializers.CharField(allow_blank=True, help_text="Why.")
    variant = ImportTargetOutputSerializer(
        allow_null=True,
        help_text=(
            "What the file becomes: the root template or a fragment's variant, provider "
            "and model normalised (providers/gemini/models/gemini-2.5-flash/core.md "
            "becomes core for gemini / gemini-2-5-flash); null when refused or ignored, "
            "and for a named prompt's file."
        ),
    )
    prompt = serializers.CharField(
        allow_null=True,
        help_text=(
            "The named prompt the file sets (prompts/<name>.md: its working copy, with its "
            "description and tags from prompts.json); null otherwise."
        ),
    )


@extend_schema_serializer(component_name="ImportReport")
class ImportReportOutputSerializer(serializers.Serializer[Any]):
    applied = serializers.BooleanField(
        help_text="Whether the import changed anything (never on a dry run or a refusal)."
    )
    items = ImportItemOutputSerializer(many=True)


# --- an agent host's instance override ----------------------------------------------------


@extend_schema_serializer(component_name="HostOverrideInput")
class HostOverrideInputSerializer(serializers.Serializer[Any]):
    override = OverrideField(
        allow_null=True, help_text="Applied to every conversation the host constructs; null: none."
    )


@extend_schema_serializer(component_name="HostOverride")
class HostOverrideOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text="The prompt the override is for.")
    username = serializers.CharField()
    override = OverrideField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True, help_text="null: never set.")
    updated_by = serializers.CharField(allow_null=True)
