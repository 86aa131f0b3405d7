"""Serializers of the catalog of prompts (``/api/prompts``, ``/api/folders``): the
body's shape only; names, tags and groups are checked by the services, which name the
field in their 400."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from sysprompt.api.release_serializers import TargetField
from sysprompt.api.serializers import (
    JsonValueField,
    PageOutputSerializer,
    StrictBooleanField,
    StrictCharField,
)
from sysprompt.prompts.catalog_services import (
    DESCRIPTION_MAX_LENGTH,
    TAG_MAX_LENGTH,
    TAGS_MAX,
)
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH, PROMPT_NAME_RULE

NAME_HELP = f"The prompt's name: {PROMPT_NAME_RULE}."


def _name(**kwargs: Any) -> StrictCharField:
    return StrictCharField(trim_whitespace=False, help_text=NAME_HELP, **kwargs)


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": TAG_MAX_LENGTH},
        "maxItems": TAGS_MAX,
    }
)
class TagsField(JsonValueField):
    """Tags, checked by ``catalog_services.tags_valid`` (400 naming tags)."""


@extend_schema_field({"type": "array", "items": {"type": "string", "maxLength": 150}})
class GroupsField(JsonValueField):
    """Group names, checked by ``catalog_services.groups_valid`` (400 naming editor_groups)."""


def _tags(**kwargs: Any) -> TagsField:
    return TagsField(
        help_text=f"Short strings (at most {TAGS_MAX}, each 1 to {TAG_MAX_LENGTH} printable "
        "characters).",
        **kwargs,
    )


def _groups(**kwargs: Any) -> GroupsField:
    return GroupsField(
        help_text="Group names: only their members (and superusers) may change it; empty: "
        "no restriction of its own.",
        **kwargs,
    )


class PromptListQuerySerializer(serializers.Serializer[Any]):
    folder = StrictCharField(required=False, allow_blank=True, max_length=PROMPT_NAME_MAX_LENGTH)
    search = StrictCharField(required=False, allow_blank=True, max_length=200)
    tag = StrictCharField(required=False, allow_blank=True, max_length=TAG_MAX_LENGTH)
    label = StrictCharField(  # type: ignore[assignment]  # a field, not Field.label
        required=False, allow_blank=True, max_length=200
    )
    archived = serializers.BooleanField(required=False, default=False)


@extend_schema_serializer(component_name="PromptListItem")
class PromptRowOutputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    description = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    archived = serializers.BooleanField()
    version = serializers.IntegerField(
        help_text="The working copy's template version; 0: none saved (the built-in default)."
    )
    updated_at = serializers.DateTimeField()
    labels = serializers.DictField(
        child=TargetField(),
        help_text="Each label (by name) of this prompt and its target. A prompt with no "
        'production row still serves "production" as the working copy.',
    )


@extend_schema_serializer(component_name="PromptPage")
class PromptPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/prompts`` (cursor pagination, by name)."""

    results = PromptRowOutputSerializer(many=True)


@extend_schema_serializer(component_name="Prompt")
class PromptOutputSerializer(PromptRowOutputSerializer):
    id = serializers.IntegerField(help_text="Never changes, a rename included.")
    aliases = serializers.ListField(
        child=serializers.CharField(),
        help_text="Former names: each still answers until a prompt takes it.",
    )
    editor_groups = serializers.ListField(
        child=serializers.CharField(), help_text="Its own restriction (group names)."
    )
    restricted_by = serializers.ListField(
        child=serializers.CharField(),
        help_text="The folders above it that are restricted to groups (each must be passed).",
    )


class PromptCreateInputSerializer(serializers.Serializer[Any]):
    name = _name()
    description = StrictCharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=DESCRIPTION_MAX_LENGTH
    )
    tags = _tags(required=False)
    template = StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="Its first template version; left out: it starts from the built-in default.",
    )


class PromptUpdateInputSerializer(serializers.Serializer[Any]):
    description = StrictCharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=DESCRIPTION_MAX_LENGTH
    )
    tags = _tags(required=False)
    editor_groups = _groups(required=False)


class PromptRenameInputSerializer(serializers.Serializer[Any]):
    name = _name()


class PromptDuplicateInputSerializer(serializers.Serializer[Any]):
    name = _name()
    test_contexts = StrictBooleanField(
        required=False, default=False, help_text="Copy its test contexts too."
    )
    suites = StrictBooleanField(
        required=False, default=False, help_text="Copy its suites and their cases too."
    )


@extend_schema_serializer(component_name="Folder")
class FolderOutputSerializer(serializers.Serializer[Any]):
    folder = serializers.CharField(help_text='Whole segments ending in "/".')
    editor_groups = serializers.ListField(child=serializers.CharField())


class FolderInputSerializer(serializers.Serializer[Any]):
    editor_groups = _groups()
