"""Input serializers validate what comes in; output serializers shape what goes out."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from sysprompt.prompts.rendering import PREVIEW_SECTION_CHARS, PREVIEW_VALUE_CHARS
from sysprompt.prompts.validation import template_size_check
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, CWD_MAX_LENGTH, MODEL_MAX_LENGTH


class StrictCharField(serializers.CharField):
    """A JSON string and nothing else: DRF's CharField would turn ``3`` into ``"3"``."""

    default_error_messages = {"invalid": "Must be a JSON string, not {kind}."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid", kind=_json_kind(data))
        return super().to_internal_value(data)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def template_field(**kwargs: Any) -> StrictCharField:
    return StrictCharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text=(
            "The template, stored byte for byte (see the template language). "
            '"" is a valid template: no system prompt is sent.'
        ),
        **kwargs,
    )


@extend_schema_field({"type": "string", "pattern": "^/"})  # maxLength: from max_length
class CwdField(StrictCharField):
    """A ``cwd``: the schema gives the absolute-path check of ``validation.cwd_check``."""


def cwd_field() -> StrictCharField:
    return CwdField(
        max_length=CWD_MAX_LENGTH,
        trim_whitespace=False,
        help_text=(
            "The conversation's working directory: an absolute path to an existing "
            "directory inside the configured allowed roots."
        ),
    )


def model_field() -> StrictCharField:
    return StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MODEL_MAX_LENGTH,
        trim_whitespace=False,
        help_text="The model the conversation talks to ([prompt:model]).",
    )


@extend_schema_serializer(component_name="TemplateInput")
class TemplateInputSerializer(serializers.Serializer[Any]):
    template = template_field()

    def validate_template(self, value: str) -> str:
        template_size_check(value)
        return value


@extend_schema_serializer(component_name="Template")
class TemplateOutputSerializer(serializers.Serializer[Any]):
    template = serializers.CharField(source="text")
    version = serializers.IntegerField(help_text="0 for the built-in default template.")
    updated_at = serializers.DateTimeField(allow_null=True)
    is_default = serializers.BooleanField()


@extend_schema_serializer(component_name="TemplateVersion")
class TemplateVersionOutputSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField(source="number")
    template = serializers.CharField(source="text")
    author = serializers.CharField(source="author.get_username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="Variable")
class VariableOutputSerializer(serializers.Serializer[Any]):
    type = serializers.CharField()
    name = serializers.CharField(help_text='For a dynamic type, a placeholder such as "<path>".')
    description = serializers.CharField()
    dynamic = serializers.BooleanField(help_text="Whether any name is valid (file:<path>).")


@extend_schema_serializer(component_name="VariableCatalog")
class VariablesOutputSerializer(serializers.Serializer[Any]):
    variables = VariableOutputSerializer(many=True)


@extend_schema_serializer(component_name="PreviewInput")
class PreviewInputSerializer(serializers.Serializer[Any]):
    cwd = cwd_field()
    model = model_field()
    conversation_id = StrictCharField(
        required=False,
        allow_blank=False,
        trim_whitespace=False,
        min_length=1,  # for the schema (minLength); "" is refused as blank first
        max_length=CONVERSATION_ID_MAX_LENGTH,
        help_text="Rendered as [prompt:conversation_id]; nothing is stored under it.",
    )
    template = template_field(required=False)

    def validate_template(self, value: str) -> str:
        template_size_check(value)
        return value


@extend_schema_serializer(component_name="Diagnostic")
class DiagnosticOutputSerializer(serializers.Serializer[Any]):
    line = serializers.IntegerField()
    column = serializers.IntegerField()
    end_column = serializers.IntegerField()
    severity = serializers.ChoiceField(choices=["error", "warning"])
    message = serializers.CharField()


@extend_schema_serializer(component_name="Preview")
class PreviewOutputSerializer(serializers.Serializer[Any]):
    system_prompt = serializers.CharField(allow_null=True)
    diagnostics = DiagnosticOutputSerializer(many=True)
    variables = serializers.DictField(
        child=serializers.CharField(allow_null=True, allow_blank=True, trim_whitespace=False),
        help_text=(
            '"type:name" → value, null when the variable does not exist. Each value is '
            f"shown up to {PREVIEW_VALUE_CHARS:,} characters, all of them together up to "
            f"{PREVIEW_SECTION_CHARS:,} (the keys cut short are in `truncated`); a value "
            "equal to an earlier key's (keys in sorted order) is given once: the later "
            'key maps to "" and appears in `same_as`.'
        ),
    )
    truncated = serializers.ListField(
        child=serializers.CharField(),
        help_text="The keys whose value in `variables` is cut short by the caps.",
    )
    same_as = serializers.DictField(
        child=serializers.CharField(),
        help_text='key → the earlier key with the identical value (the key maps to "").',
    )
    reasons = serializers.DictField(
        child=serializers.CharField(),
        help_text="key → why the variable does not exist, for every null in `variables`.",
    )


@extend_schema_serializer(component_name="ConversationInput")
class ConversationInputSerializer(serializers.Serializer[Any]):
    cwd = cwd_field()
    model = model_field()


@extend_schema_serializer(component_name="ConversationPrompt")
class ConversationPromptOutputSerializer(serializers.Serializer[Any]):
    conversation_id = serializers.CharField()
    system_prompt = serializers.CharField(allow_null=True)
    template_version = serializers.IntegerField(
        source="template_version_number",
        help_text="The template version it was built from; 0 for the built-in default.",
    )
    constructed_at = serializers.DateTimeField()
    sha256 = serializers.CharField(
        allow_null=True, help_text="Hex SHA-256 of the UTF-8 prompt; null when it is null."
    )


@extend_schema_serializer(component_name="CompactedConversationPrompt")
class CompactOutputSerializer(ConversationPromptOutputSerializer):
    system_prompt = serializers.CharField(
        source="compaction_prompt",
        allow_null=True,
        help_text='For the compaction turn: the fresh prompt + "\\n\\n" + the instructions.',
    )
    persisted_system_prompt = serializers.CharField(
        source="system_prompt",
        allow_null=True,
        help_text="The fresh prompt alone, as stored for the turns after compaction.",
    )


@extend_schema_serializer(component_name="ConversationSummary")
class ConversationListItemOutputSerializer(serializers.Serializer[Any]):
    conversation_id = serializers.CharField()
    template_version = serializers.IntegerField(source="template_version_number")
    cwd = serializers.CharField()
    model = serializers.CharField()
    constructed_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    sha256 = serializers.CharField(
        allow_null=True, help_text="Hex SHA-256 of the prompt; null when the prompt is null."
    )


@extend_schema_serializer(component_name="Health")
class HealthOutputSerializer(serializers.Serializer[Any]):
    status = serializers.CharField(help_text='"ok"')
    database = serializers.CharField(help_text='"ok": a query answered.')


@extend_schema_serializer(component_name="Error")
class ErrorOutputSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()


@extend_schema_serializer(component_name="ConversationPage")
class ConversationPageOutputSerializer(serializers.Serializer[Any]):
    """One page of ``GET /api/conversations`` (cursor pagination)."""

    next = serializers.URLField(allow_null=True, help_text="The next page; null on the last.")
    previous = serializers.URLField(
        allow_null=True, help_text="The previous page; null on the first."
    )
    results = ConversationListItemOutputSerializer(many=True)


@extend_schema_serializer(component_name="TemplateVersionPage")
class TemplateVersionPageOutputSerializer(serializers.Serializer[Any]):
    """One page of ``GET /api/system-prompt/versions`` (cursor pagination)."""

    next = serializers.URLField(allow_null=True, help_text="The next page; null on the last.")
    previous = serializers.URLField(
        allow_null=True, help_text="The previous page; null on the first."
    )
    results = TemplateVersionOutputSerializer(many=True)


@extend_schema_serializer(component_name="FieldErrors")
class FieldErrorsOutputSerializer(serializers.Serializer[Any]):
    """A 400 for invalid input: field name → its messages (``schema.FieldErrorsScheme``)."""
