"""Input serializers validate what comes in; output serializers shape what goes out."""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from sysprompt.prompts.hosts import ALLOWED_MAX_ITEMS
from sysprompt.prompts.rendering import PREVIEW_SECTION_CHARS, PREVIEW_VALUE_CHARS
from sysprompt.prompts.services import KEPT_FIELDS
from sysprompt.prompts.validation import template_size_check
from sysprompt_core.library import FRAGMENT_NAME_MAX_LENGTH
from sysprompt_core.limits import (
    CONVERSATION_ID_MAX_LENGTH,
    CWD_MAX_LENGTH,
    HOST_TOOLS_MAX_COUNT,
    HOST_VALUE_KEY_MAX_LENGTH,
    HOST_VALUES_MAX_COUNT,
    HOST_VARIABLE_NAME_MAX_LENGTH,
    HOST_VARIABLES_MAX_COUNT,
    MODEL_MAX_LENGTH,
)
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH
from sysprompt_core.releases import LABEL_NAME_MAX_LENGTH


class StrictCharField(serializers.CharField):
    """A JSON string and nothing else: DRF's CharField would turn ``3`` into ``"3"``."""

    default_error_messages = {"invalid": "Must be a JSON string, not {kind}."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid", kind=_json_kind(data))
        return super().to_internal_value(data)


SURROGATE = re.compile("[\ud800-\udfff]")


class StrictBooleanField(serializers.BooleanField):
    """``true`` or ``false`` and nothing else: DRF's BooleanField would take ``"yes"``."""

    default_error_messages = {"invalid": "Must be a JSON boolean (true or false), not {kind}."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", kind=_json_kind(data))
        return data


class JsonValueField(serializers.JSONField):
    """Any JSON value, checked by the server's own validation later (which names the
    field); refused here only when a string in it (a key or a value) holds a NUL
    character or a lone surrogate, which no database stores."""

    default_error_messages = {
        "null_character": "Null characters are not allowed.",
        "surrogate": "Surrogate characters are not allowed: U+{code:X}.",
    }

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        for text in _strings(value):
            if "\0" in text:
                self.fail("null_character")
            if bad := SURROGATE.search(text):
                self.fail("surrogate", code=ord(bad[0]))
        return value


def _strings(value: object) -> list[str]:
    """Every string in a JSON value, keys included (iteratively: depth is unbounded)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
    return found


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


TEMPLATE_HELP = (
    "The template, stored byte for byte (see the template language). "
    '"" is a valid template: no system prompt is sent.'
)


def template_field(help_text: str = TEMPLATE_HELP, **kwargs: Any) -> StrictCharField:
    return StrictCharField(allow_blank=True, trim_whitespace=False, help_text=help_text, **kwargs)


@extend_schema_field({"type": "string", "pattern": "^/"})  # maxLength: from max_length
class CwdField(StrictCharField):
    """A ``cwd``: the schema gives the absolute-path check of ``validation.cwd_check``."""


CWD_HELP = (
    "The conversation's working directory: an absolute path to an existing directory "
    "inside the configured allowed roots."
)


def cwd_field(*, required: bool = True, help_text: str = CWD_HELP) -> StrictCharField:
    return CwdField(
        required=required, max_length=CWD_MAX_LENGTH, trim_whitespace=False, help_text=help_text
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


# --- the host context (library.md §3) -----------------------------------------------

STRATEGY_SCHEMA: dict[str, Any] = {
    "type": "string",
    "enum": ["append", "prepend"],
    "nullable": True,
    "description": 'How the text joins the prompt: "append" (after it) or "prepend".',
}
VARIABLES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {"type": "string"},
    "maxProperties": HOST_VARIABLES_MAX_COUNT,
}
OVERRIDE_DESCRIPTION = (
    "Text layered onto the rendered template: a string (that text, appended), an "
    "OverrideText {content, strategy?} or an OverridePreset {preset, variables?, "
    'strategy?}; null for none. "replace" is refused: an override adds, it never removes.'
)
OVERRIDE_TEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Text of the override's own, appended or prepended.",
    "properties": {"content": {"type": "string"}, "strategy": STRATEGY_SCHEMA},
    "required": ["content"],
    "additionalProperties": False,
}
OVERRIDE_PRESET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "A preset: a fragment rendered with its defaults and these variables, appended "
        "or prepended (its own strategy when this one does not say)."
    ),
    "properties": {
        "preset": {"type": "string", "maxLength": FRAGMENT_NAME_MAX_LENGTH},
        "variables": {**VARIABLES_SCHEMA, "nullable": True},
        "strategy": STRATEGY_SCHEMA,
    },
    "required": ["preset"],
    "additionalProperties": False,
}
"""The two object forms of an override: named components of the schema
(``schema.OverrideFieldScheme``), so that client generators make a class of each."""


class OverrideField(JsonValueField):
    """An override (library.md §4), checked by the server's validation; in the schema
    the ``Override`` component: a string, an ``OverrideText`` or an ``OverridePreset``
    (``schema.OverrideFieldScheme``)."""


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": HOST_VARIABLE_NAME_MAX_LENGTH},
        "maxItems": HOST_TOOLS_MAX_COUNT,
    }
)
class ToolsField(JsonValueField):
    """The host's tool names (``tool:<name>``), checked by ``host_context_check``."""


@extend_schema_field(VARIABLES_SCHEMA)
class VariablesField(JsonValueField):
    """Names → string values (``var:<name>``), checked by ``host_context_check``."""


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"type": "string", "nullable": True},
        "maxProperties": HOST_VALUES_MAX_COUNT,
    },
    component_name="HostValues",
)
class HostValuesField(JsonValueField):
    """Host-local ``"type:name"`` keys → text or null (agent-hosts §0), checked by
    ``host_context_check`` (``sysprompt_core.variables.check_supplied``)."""


HOST_FIELDS = ("provider", "tools", "variables", "override", "values")


class HostContextInputSerializer(serializers.Serializer[Any]):
    """The host context beside ``cwd`` and ``model``; each field optional. The fields are
    checked by ``sysprompt.prompts.validation.host_context_check``, whose 400 names the
    field (``variables.<name>``, ``override.strategy``, …)."""

    provider = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=MODEL_MAX_LENGTH,
        trim_whitespace=False,
        help_text=(
            "The provider the conversation talks to ([prompt:provider]); with `model` it "
            "picks each fragment's variant."
        ),
    )
    tools = ToolsField(
        required=False,
        help_text=(
            f"The tools the host offers (at most {HOST_TOOLS_MAX_COUNT}); [tool:<name>] "
            "exists for each."
        ),
    )
    variables = VariablesField(
        required=False,
        help_text=(
            f"Values for [var:<name>]: at most {HOST_VARIABLES_MAX_COUNT}, each at most "
            "64 KiB in UTF-8."
        ),
    )
    override = OverrideField(
        required=False,
        allow_null=True,
        help_text=(
            "The conversation's thread override, stored with it. Left out, a stored "
            "conversation keeps its own; null removes it."
        ),
    )
    values = HostValuesField(
        required=False,
        help_text=(
            "Host-local values the agent host resolved itself: prompt:cwd, git:<name>, "
            "file:<path> or system:<name> (keys of at most "
            f"{HOST_VALUE_KEY_MAX_LENGTH:,} characters, at most {HOST_VALUES_MAX_COUNT:,} "
            "of them) → the text, or null when it does not exist. Used as given instead "
            "of the server's own resolution; each at most MAX_FILE_BYTES and all at most "
            "MAX_READ_BYTES in UTF-8. Never stored."
        ),
    )


COMPRESS_HELP = (
    "Compress the source before it is parsed (the text stays as written). Left out: "
    "the current version's setting (false for the built-in default)."
)


@extend_schema_serializer(component_name="TemplateInput")
class TemplateInputSerializer(serializers.Serializer[Any]):
    template = template_field()
    compress = StrictBooleanField(required=False, help_text=COMPRESS_HELP)

    def validate_template(self, value: str) -> str:
        template_size_check(value)
        return value


@extend_schema_serializer(component_name="Template")
class TemplateOutputSerializer(serializers.Serializer[Any]):
    template = serializers.CharField(source="text")
    version = serializers.IntegerField(help_text="0 for the built-in default template.")
    updated_at = serializers.DateTimeField(allow_null=True)
    is_default = serializers.BooleanField()
    compress = serializers.BooleanField(
        help_text="Whether the source is compressed before it is parsed."
    )


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
class PreviewInputSerializer(HostContextInputSerializer):
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


@extend_schema_serializer(component_name="SharedPrefixEnd")
class SharedPrefixEndOutputSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(help_text='The reference that ended it, e.g. "system:time".')
    line = serializers.IntegerField(
        min_value=1,
        help_text="Its line in the template (from 1; of the compressed text with compress).",
    )
    column = serializers.IntegerField(min_value=1, help_text="Its column (from 1).")


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
    shared_prefix_chars = serializers.IntegerField(
        min_value=0,
        help_text=(
            "How many leading characters (code points) of system_prompt every "
            "conversation of the same agent host, provider and model shares."
        ),
    )
    system_prompt_tokens = serializers.IntegerField(
        min_value=0,
        allow_null=True,
        help_text=(
            "system_prompt in tokens for the provider and model given (0 for no prompt): "
            "exact for OpenAI's models, else an estimate (tokens_exact); null when it "
            "could not be counted (tokens_error)."
        ),
    )
    shared_prefix_tokens = serializers.IntegerField(
        min_value=0,
        allow_null=True,
        help_text="The shared prefix in tokens, counted as system_prompt_tokens is.",
    )
    tokens_exact = serializers.BooleanField(
        help_text=(
            "true: the token counts are exact (OpenAI's tokenizer for one of OpenAI's "
            "models); false: an estimate (any other model, or none given; counted with "
            "o200k_base)."
        )
    )
    tokens_encoding = serializers.CharField(
        help_text='The encoding the counts are in: "o200k_base" or "cl100k_base".'
    )
    tokens_error = serializers.CharField(
        allow_null=True,
        help_text=(
            "null, or why the prompt could not be counted (its token counts are then "
            "null); the preview is answered all the same."
        ),
    )
    shared_prefix_end = SharedPrefixEndOutputSerializer(
        allow_null=True,
        help_text=(
            "The tag of the template where the shared prefix ends; null when no tag "
            "ended it (the whole prompt is shared, or an override placed before it did)."
        ),
    )


def label_field() -> StrictCharField:
    return StrictCharField(
        required=False,
        max_length=LABEL_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text=(
            "The label to build from (releases): production, staging, a tenant's name; "
            '"latest": the working copy itself. Left out: the agent host\'s label, else '
            "production. Used when a prompt is "
            "built (a first turn, construct, compact); a later turn answers the stored "
            "prompt whatever it says."
        ),
    )


PROMPT_NAME_HELP = "A prompt's name, a path such as support/triage (a former name still answers)."


def prompt_field() -> StrictCharField:
    return StrictCharField(
        required=False,
        max_length=PROMPT_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text=(
            f"{PROMPT_NAME_HELP} The prompt a new conversation is built from (left out: "
            "the agent host's default prompt, else default); an unknown one, or one the "
            "agent host may not use, is 404, an archived one 410. A stored conversation "
            "keeps the prompt it was frozen from: naming another is 409."
        ),
    )


@extend_schema_serializer(component_name="ConversationInput")
class ConversationInputSerializer(HostContextInputSerializer):
    """The context of a construct or compact: every field left out of a stored
    conversation's call is kept from its frozen context (``context_kept`` names them)."""

    cwd = cwd_field(
        required=False,
        help_text=(
            f"{CWD_HELP} Needed for a conversation without a stored prompt; left out, the "
            "stored conversation's frozen cwd."
        ),
    )
    model = model_field()
    label = label_field()  # type: ignore[assignment]  # a field named like Field's attribute
    prompt = prompt_field()


@extend_schema_serializer(component_name="ResolveInput")
class ResolveInputSerializer(ConversationInputSerializer):
    cwd = cwd_field()
    call_override = OverrideField(
        required=False,
        allow_null=True,
        help_text=(
            "Layered onto this answer only, never stored; the answer then also carries "
            "the stored prompt as persisted_system_prompt."
        ),
    )


@extend_schema_serializer(component_name="FragmentUse")
class FragmentUseOutputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    provider = serializers.CharField(allow_null=True, help_text="null: any provider.")
    model = serializers.CharField(allow_null=True, help_text="null: any model.")
    version = serializers.IntegerField()


class HostContextOutputSerializer(serializers.Serializer[Any]):
    """The host context a conversation was constructed with."""

    provider = serializers.CharField(help_text='As given; "" when none was.')
    tools = serializers.ListField(child=serializers.CharField())
    variables = serializers.DictField(child=serializers.CharField())
    override = OverrideField(
        allow_null=True, help_text="The stored thread override; null for none."
    )
    fragments_used = FragmentUseOutputSerializer(
        many=True, help_text="Which version of which fragment variant the prompt used."
    )


class BuiltFromOutputSerializer(serializers.Serializer[Any]):
    """What a stored prompt was built from (releases §2)."""

    label = serializers.CharField(  # type: ignore[assignment]  # named like Field's attribute
        help_text="The label it was built from (production for prompts stored before labels)."
    )
    release = serializers.IntegerField(
        allow_null=True,
        min_value=1,
        help_text="The release that label served; null: latest (the working copy).",
    )
    arm = serializers.IntegerField(
        allow_null=True,
        min_value=0,
        help_text="The arm of the label's split it got (from 0); null: no split.",
    )


PROMPT_OUTPUT_HELP = "The prompt the conversation is frozen from (its name now)."


@extend_schema_serializer(component_name="ConversationPrompt")
class ConversationPromptOutputSerializer(HostContextOutputSerializer, BuiltFromOutputSerializer):
    conversation_id = serializers.CharField()
    prompt = serializers.CharField(source="prompt.name", help_text=PROMPT_OUTPUT_HELP)
    system_prompt = serializers.CharField(allow_null=True)
    cwd = serializers.CharField(
        help_text="The working directory the prompt was built for (normalised): with model "
        "and provider, the frozen context a later turn is compared with."
    )
    model = serializers.CharField(
        allow_blank=True, help_text='The model it was built for; "" when none was given.'
    )
    template_version = serializers.IntegerField(
        source="template_version_number",
        help_text="The template version it was built from; 0 for the built-in default.",
    )
    constructed_at = serializers.DateTimeField()
    sha256 = serializers.CharField(
        allow_null=True, help_text="Hex SHA-256 of the UTF-8 prompt; null when it is null."
    )
    shared_prefix_chars = serializers.IntegerField(
        allow_null=True,
        min_value=0,
        help_text=(
            "How many leading characters (code points) of the prompt every conversation "
            "of the same agent host, provider and model shares (the part a provider's "
            "prompt cache can share); null for a prompt stored before it was recorded."
        ),
    )


def context_kept_field() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=list(KEPT_FIELDS)),
        help_text=(
            "The fields of the stored conversation's frozen context this call left out and "
            "that were kept, in this order: cwd, model, provider, tools, variables, "
            "override. Empty for a new conversation, or when every field was given."
        ),
    )


@extend_schema_serializer(component_name="ConstructedConversationPrompt")
class ConstructOutputSerializer(ConversationPromptOutputSerializer):
    context_kept = context_kept_field()


@extend_schema_serializer(component_name="CompactedConversationPrompt")
class CompactOutputSerializer(ConversationPromptOutputSerializer):
    context_kept = context_kept_field()
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


@extend_schema_serializer(component_name="ResolvedConversationPrompt")
class ResolveOutputSerializer(ConversationPromptOutputSerializer):
    system_prompt = serializers.CharField(
        allow_null=True,
        help_text="The stored prompt; with a call_override, that prompt with it layered on.",
    )
    sha256 = serializers.CharField(allow_null=True, help_text="The SHA-256 of system_prompt.")
    persisted_system_prompt = serializers.CharField(
        allow_null=True,
        required=False,
        help_text="Only with a call_override: the stored prompt (the cached one).",
    )
    persisted_sha256 = serializers.CharField(
        allow_null=True,
        required=False,
        help_text="Only with a call_override: the SHA-256 of the stored prompt.",
    )
    shared_prefix_chars = serializers.IntegerField(
        allow_null=True,
        min_value=0,
        help_text=(
            "The shared prefix of system_prompt (with a call_override: 0 when it is "
            "placed before the prompt); null for a prompt stored before it was recorded."
        ),
    )
    persisted_shared_prefix_chars = serializers.IntegerField(
        allow_null=True,
        required=False,
        min_value=0,
        help_text="Only with a call_override: the shared prefix of the stored prompt.",
    )
    context_mismatch = serializers.ListField(
        child=serializers.ChoiceField(choices=["cwd", "model", "provider"]),
        required=False,
        help_text=(
            "Only on a later turn whose body differs from the frozen context: which of "
            "cwd, model and provider differ, in that order. The turn still gets the "
            "frozen prompt; construct or compact rebuilds it for the new context. A model "
            "or provider left out of the body is no difference."
        ),
    )


@extend_schema_serializer(component_name="ConversationSummary")
class ConversationListItemOutputSerializer(HostContextOutputSerializer, BuiltFromOutputSerializer):
    conversation_id = serializers.CharField()
    prompt = serializers.CharField(source="prompt.name", help_text=PROMPT_OUTPUT_HELP)
    host = serializers.CharField(
        source="owner.get_username",
        allow_null=True,
        default=None,
        help_text=(
            "The agent host (user) whose conversation it is: ids are scoped to it "
            "(/api/agent-hosts/{host}/conversations/{id}/…); null for a row without owner."
        ),
    )
    template_version = serializers.IntegerField(source="template_version_number")
    cwd = serializers.CharField()
    model = serializers.CharField()
    constructed_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    sha256 = serializers.CharField(
        allow_null=True, help_text="Hex SHA-256 of the prompt; null when the prompt is null."
    )


class ReferencesQuerySerializer(serializers.Serializer[Any]):
    """``?provider=&model=&label=`` of the references: as an agent host sends them in
    its body."""

    provider = StrictCharField(
        required=False, allow_blank=True, max_length=MODEL_MAX_LENGTH, trim_whitespace=False
    )
    model = StrictCharField(
        required=False, allow_blank=True, max_length=MODEL_MAX_LENGTH, trim_whitespace=False
    )
    label = StrictCharField(  # type: ignore[assignment]  # a field named like Field's attribute
        required=False, allow_blank=True, max_length=LABEL_NAME_MAX_LENGTH, trim_whitespace=False
    )


@extend_schema_serializer(component_name="TemplateReferences")
class TemplateReferencesOutputSerializer(serializers.Serializer[Any]):
    references = serializers.ListField(
        child=serializers.CharField(),
        help_text=(
            '"type:name" of every reference the current template can reach for the '
            "provider and model, in every branch, through its fragments and the "
            "caller's instance override (fragment: keys aside), sorted."
        ),
    )
    host_resolves = serializers.ListField(
        child=serializers.ChoiceField(choices=["file", "git", "system"]),
        help_text=(
            "The host-local types this server does not resolve on its own machine "
            "(SERVER_RESOLVES leaves them out), sorted: their values exist only when the "
            "host supplies them as `values`. Empty when the server resolves them all."
        ),
    )


@extend_schema_serializer(component_name="PromptsReferences")
class PromptsReferencesOutputSerializer(serializers.Serializer[Any]):
    prompts = serializers.DictField(
        child=TemplateReferencesOutputSerializer(),
        help_text=(
            "With ?prompt=a&prompt=b: each prompt's references, by the name asked for "
            "(the same answer as without a prompt, for that prompt's working copy and "
            "label)."
        ),
    )


@extend_schema_serializer(component_name="HostPrompts")
class HostPromptsOutputSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    default = serializers.CharField(
        allow_null=True,
        help_text="The prompt its conversations get when a call names none; null: default.",
    )
    allowed = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text=(
            'The prompts it may use: names and folders ("support/", every prompt in it); '
            "null: every prompt. Others are 404 to it, as unknown names."
        ),
    )
    updated_at = serializers.DateTimeField(allow_null=True)
    updated_by = serializers.CharField(allow_null=True)


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": PROMPT_NAME_MAX_LENGTH},
        "maxItems": ALLOWED_MAX_ITEMS,
        "nullable": True,
    }
)
class AllowedPromptsField(JsonValueField):
    """Prompt names and folders, checked by ``prompts.hosts.host_prompts_set`` (which
    names the field and the entry)."""


@extend_schema_serializer(component_name="HostPromptsInput")
class HostPromptsInputSerializer(serializers.Serializer[Any]):
    default = StrictCharField(
        required=False,
        allow_null=True,
        default=None,
        max_length=PROMPT_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text=f"{PROMPT_NAME_HELP} Left out or null: default.",
    )
    allowed = AllowedPromptsField(
        required=False,
        allow_null=True,
        default=None,
        help_text=(
            'Prompt names and folders ending in "/"; left out or null: every prompt. '
            "The default prompt must be among them."
        ),
    )


@extend_schema_serializer(component_name="CallerPermissions")
class CallerPermissionsOutputSerializer(serializers.Serializer[Any]):
    template = serializers.BooleanField(help_text="Save the template.")
    library = serializers.BooleanField(
        help_text="Save and delete fragment variants; export and import the library."
    )
    releases = serializers.BooleanField(
        help_text="Read and make releases, labels, test contexts and impact reports."
    )
    publish = serializers.BooleanField(help_text="Move protected labels (production) too.")
    evaluations = serializers.BooleanField(help_text="Read and run evaluations.")


@extend_schema_serializer(component_name="Caller")
class CallerOutputSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(help_text="The token's user.")
    agent_host = serializers.BooleanField(help_text='In the "Agent hosts" group.')
    permissions = CallerPermissionsOutputSerializer(
        help_text=(
            "What the token may do beyond resolving its conversations' prompts and reading "
            "the template and the library, which every token may."
        )
    )


@extend_schema_serializer(component_name="Health")
class HealthOutputSerializer(serializers.Serializer[Any]):
    status = serializers.CharField(help_text='"ok"')
    database = serializers.CharField(help_text='"ok": a query answered.')


@extend_schema_serializer(component_name="Error")
class ErrorOutputSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()


class PageOutputSerializer(serializers.Serializer[Any]):
    """The shape of every cursor page (``pagination.py``): the links to the next and
    previous pages, and a subclass's ``results``. The one definition of the page shape:
    every paginated list (here and in ``library_serializers``) subclasses it."""

    next = serializers.URLField(allow_null=True, help_text="The next page; null on the last.")
    previous = serializers.URLField(
        allow_null=True, help_text="The previous page; null on the first."
    )


@extend_schema_serializer(component_name="ConversationPage")
class ConversationPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/conversations`` (cursor pagination)."""

    results = ConversationListItemOutputSerializer(many=True)


@extend_schema_serializer(component_name="TemplateVersionPage")
class TemplateVersionPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/system-prompt/versions`` (cursor pagination)."""

    results = TemplateVersionOutputSerializer(many=True)


@extend_schema_serializer(component_name="FieldErrors")
class FieldErrorsOutputSerializer(serializers.Serializer[Any]):
    """A 400 for invalid input: field name → its messages (``schema.FieldErrorsScheme``)."""
