"""Serializers of the evaluations endpoints (evaluations §5): models, suites, cases, runs
and their results.

Input serializers check the shape only; ``sysprompt.evaluations.validation`` checks the
rest (names, contexts, messages, tools, checks, run sides, models) and names the field
in its 400 (``checks[2].pattern``, ``messages[0].role``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from sysprompt.api.serializers import (
    HostValuesField,
    JsonValueField,
    PageOutputSerializer,
    StrictBooleanField,
    StrictCharField,
)
from sysprompt.evaluations.validation import DESCRIPTION_MAX_CHARS, REPEAT_MAX
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, MODEL_MAX_LENGTH
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH
from sysprompt_core.releases import LABEL_NAME_MAX_LENGTH, LABEL_NAME_PATTERN, RELEASE_NUMBER_MAX

# --- JSON parts, checked by the evaluations' validation (the schema says their shape) ---


@extend_schema_field(
    {
        "type": "object",
        "description": (
            '{"test_context": name}, or a test context\'s fields inline (cwd, values, '
            "provider, model, tools, variables, override) and the label a recorded "
            "conversation was served from (kept with the case; a run's sides decide what "
            "it is rendered with); {}: none."
        ),
    }
)
class ContextField(JsonValueField):
    """How the case's system prompt is rendered."""


@extend_schema_field(
    {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "role": {"type": "string", "enum": ["user", "assistant"]},
                "content": {"type": "string"},
            },
            "required": ["role", "content"],
        },
        "description": "The conversation so far, the last turn the user's.",
    }
)
class MessagesField(JsonValueField):
    """The case's turns."""


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "object"},
        "description": "Function tools offered to the model (OpenAI's shape).",
    }
)
class FunctionToolsField(JsonValueField):
    """The case's function tools."""


@extend_schema_field(
    {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"type": {"type": "string"}},
            "required": ["type"],
        },
        "description": (
            "Each {type, …}: contains, not_contains, equals, starts_with, regex, json, "
            "json_schema, max_chars, tool_called, judge."
        ),
    }
)
class ChecksField(JsonValueField):
    """The case's checks."""


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "maxLength": CONVERSATION_ID_MAX_LENGTH},
            {
                "type": "object",
                "properties": {
                    "host": {"type": "string"},
                    "conversation": {"type": "string", "maxLength": CONVERSATION_ID_MAX_LENGTH},
                },
                "required": ["host", "conversation"],
                "additionalProperties": False,
            },
        ]
    }
)
class FromConversationField(JsonValueField):
    """A recorded conversation: its id, or its agent host and id (checked by
    ``evaluations.selectors.case_conversation``)."""


RUN_SIDE_SCHEMA = {
    "oneOf": [
        {"type": "string", "enum": ["latest"]},
        {"type": "integer", "minimum": 1, "maximum": RELEASE_NUMBER_MAX},
        {
            "type": "object",
            "properties": {"label": {"type": "string", "pattern": f"^{LABEL_NAME_PATTERN}$"}},
            "required": ["label"],
        },
    ],
    "description": '"latest", a release number, or {"label": name}.',
}


@extend_schema_field(RUN_SIDE_SCHEMA)
class RunSideField(JsonValueField):
    """What a side of a run renders, checked by ``validation.run_side_valid``."""


@extend_schema_field({"type": "object", "nullable": True})
class SummaryField(JsonValueField):
    """A finished run's summary (null before it finishes)."""


# --- models ---------------------------------------------------------------------------------


@extend_schema_serializer(component_name="Model")
class ModelOutputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.CharField(help_text="openai, anthropic or echo.")
    model = serializers.CharField(help_text="The provider's model id.")
    max_concurrency = serializers.IntegerField()
    default = serializers.BooleanField(help_text="The model a run uses when it names none.")


@extend_schema_serializer(component_name="ModelList")
class ModelListOutputSerializer(serializers.Serializer[Any]):
    results = ModelOutputSerializer(many=True)


# --- suites ---------------------------------------------------------------------------------


@extend_schema_serializer(component_name="SuiteUpdateInput")
class SuiteUpdateInputSerializer(serializers.Serializer[Any]):
    description = StrictCharField(
        required=False, allow_blank=True, max_length=DESCRIPTION_MAX_CHARS, trim_whitespace=False
    )


@extend_schema_serializer(component_name="SuiteInput")
class SuiteInputSerializer(SuiteUpdateInputSerializer):
    name = StrictCharField(
        max_length=LABEL_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text=f"Its name: {LABEL_NAME_PATTERN} (as a label's).",
    )


PROMPT_HELP = "The prompt it belongs to."


@extend_schema_serializer(component_name="Suite")
class SuiteOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(source="prompt.name", help_text=PROMPT_HELP)
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    cases_count = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="SuitePage")
class SuitePageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/suites`` (cursor pagination, by name)."""

    results = SuiteOutputSerializer(many=True)


# --- cases ----------------------------------------------------------------------------------


class _CaseFields(serializers.Serializer[Any]):
    context = ContextField(required=False)  # type: ignore[assignment]  # Field.context
    messages = MessagesField(required=False)
    tools = FunctionToolsField(required=False)
    checks = ChecksField(required=False)
    reference = StrictCharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False
    )


@extend_schema_serializer(component_name="CaseUpdateInput")
class CaseUpdateInputSerializer(_CaseFields):
    name = StrictCharField(
        required=False,
        max_length=CONVERSATION_ID_MAX_LENGTH,
        trim_whitespace=False,
        help_text="A new name renames the case; absent: the path's.",
    )


@extend_schema_serializer(component_name="CaseInput")
class CaseInputSerializer(_CaseFields):
    name = StrictCharField(
        required=False,
        max_length=CONVERSATION_ID_MAX_LENGTH,
        trim_whitespace=False,
        help_text="Required, unless from_conversation names one (its id is the default).",
    )
    from_conversation = FromConversationField(
        required=False,
        help_text=(
            "A recorded conversation the caller may see, of the suite's prompt: its id (when "
            'one agent host holds it) or {"host": username, "conversation": id}. Its '
            "context (label, provider, model, tools, variables, thread override, cwd) "
            "becomes the case's; messages and values come from this request (the server "
            "never stores them)."
        ),
    )
    values = HostValuesField(
        required=False, help_text="With from_conversation: the host-local values to render with."
    )


@extend_schema_serializer(component_name="Case")
class CaseOutputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    context = ContextField()  # type: ignore[assignment]  # Field.context
    messages = MessagesField()
    tools = FunctionToolsField()
    checks = ChecksField()
    reference = serializers.CharField(allow_null=True, allow_blank=True)


@extend_schema_serializer(component_name="CasePage")
class CasePageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/suites/{name}/cases`` (cursor pagination, as added)."""

    results = CaseOutputSerializer(many=True)


@extend_schema_serializer(component_name="CasesImported")
class CasesImportedOutputSerializer(serializers.Serializer[Any]):
    imported = serializers.IntegerField(help_text="Cases added or replaced.")


# --- runs -----------------------------------------------------------------------------------


def _model_field(help_text: str) -> StrictCharField:
    return StrictCharField(
        required=False, max_length=MODEL_MAX_LENGTH, trim_whitespace=False, help_text=help_text
    )


@extend_schema_serializer(component_name="EvaluationInput")
class EvaluationInputSerializer(serializers.Serializer[Any]):
    prompt = StrictCharField(
        required=False,
        max_length=PROMPT_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text="The prompt whose suite runs and whose releases or labels the sides name "
        "(support/triage). Left out: default.",
    )
    suite = StrictCharField(max_length=LABEL_NAME_MAX_LENGTH, trim_whitespace=False)
    candidate = RunSideField()
    baseline = RunSideField(required=False, help_text='Default {"label": "production"}.')
    model = _model_field("A configured model's name; default EVAL_DEFAULT_MODEL.")
    baseline_model = _model_field("Compare two models: the baseline's (instead of model).")
    candidate_model = _model_field("Compare two models: the candidate's (instead of model).")
    repeat = serializers.IntegerField(required=False, min_value=1, max_value=REPEAT_MAX)
    fresh = StrictBooleanField(required=False, help_text="true: bypass the response cache.")


def _cost_field(help_text: str) -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, help_text=help_text)


@extend_schema_serializer(component_name="EvaluationStarted")
class EvaluationStartedOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    prompt = serializers.CharField(help_text=PROMPT_HELP)
    status = serializers.CharField()
    baseline_model = serializers.CharField(help_text="The model the baseline is answered by.")
    candidate_model = serializers.CharField(help_text="The model the candidate is answered by.")
    default_model = serializers.BooleanField(
        help_text="A side named no model and got the default (EVAL_DEFAULT_MODEL)."
    )
    planned_calls = serializers.IntegerField(
        help_text="The most model calls the run may make, judges included."
    )
    planned_cost = _cost_field(
        "What those calls may cost at most, in the models' price units (an estimate); "
        "null when a model has no prices."
    )


@extend_schema_serializer(component_name="EvaluationLimits")
class EvaluationLimitsOutputSerializer(serializers.Serializer[Any]):
    max_calls_per_run = serializers.IntegerField(help_text="EVAL_MAX_CALLS_PER_RUN.")
    max_runs_per_user = serializers.IntegerField(help_text="EVAL_MAX_RUNS_PER_USER.")
    runs_going = serializers.ListField(
        child=serializers.IntegerField(), help_text="The ids of your runs queued or running."
    )
    daily_budget = _cost_field("EVAL_DAILY_BUDGET; null: none.")
    spent_today = serializers.FloatField(help_text="What today's runs spent.")
    reserved = serializers.FloatField(help_text="What the runs going may yet spend.")


@extend_schema_serializer(component_name="EvaluationPlan")
class EvaluationPlanOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text=PROMPT_HELP)
    suite = serializers.CharField()
    cases = serializers.IntegerField()
    repeat = serializers.IntegerField()
    baseline_model = serializers.CharField()
    candidate_model = serializers.CharField()
    default_model = serializers.BooleanField(
        help_text="A side named no model and would get the default (EVAL_DEFAULT_MODEL)."
    )
    calls = serializers.IntegerField(
        help_text="The most model calls the run may make: 2 sides × repeat × (1 + judge "
        "checks) per case; fewer where both prompts are the same or the cache answers."
    )
    judge_calls = serializers.IntegerField(help_text="Of those, the judges' calls.")
    cost = _cost_field(
        "What they may cost at most, in the models' price units: answers at max_tokens, "
        "inputs estimated; null when a model has no prices."
    )
    unpriced = serializers.ListField(
        child=serializers.CharField(), help_text="Models the run calls that have no prices."
    )
    limits = EvaluationLimitsOutputSerializer()
    allowed = serializers.BooleanField(help_text="Whether POST /api/evaluations would start it.")
    refused = serializers.CharField(
        allow_null=True, help_text="Why it would be refused now (null: it would start)."
    )
    refused_status = serializers.IntegerField(
        allow_null=True, help_text="The status POST would answer: 400 or 429 (null: 202)."
    )


@extend_schema_serializer(component_name="Progress")
class ProgressOutputSerializer(serializers.Serializer[Any]):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


STATUSES = ["queued", "running", "finished", "failed", "cancelled"]


@extend_schema_serializer(component_name="Evaluation")
class EvaluationOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    prompt = serializers.CharField(help_text=PROMPT_HELP)
    suite = serializers.CharField()
    candidate = RunSideField()
    baseline = RunSideField()
    candidate_model = serializers.CharField()
    baseline_model = serializers.CharField()
    default_model = serializers.BooleanField(
        help_text="A side named no model and got the default (EVAL_DEFAULT_MODEL)."
    )
    repeat = serializers.IntegerField()
    status = serializers.CharField(help_text=f"One of {', '.join(STATUSES)}.")
    cases_in_error = serializers.IntegerField(
        allow_null=True,
        help_text="A finished run's cases that ended in an error (a call failed, a judge "
        "could not answer, the case could not render); null before it finished. A run "
        "with errors never passes a gate.",
    )
    progress = ProgressOutputSerializer()
    planned_calls = serializers.IntegerField(
        help_text="The most model calls the run may make (its plan), judges included."
    )
    planned_cost = _cost_field(
        "What they may cost at most, in the models' price units; null: a model has no prices."
    )
    spent = serializers.FloatField(
        help_text="What the calls it made cost so far (judges included; cached answers cost "
        "nothing), in the models' price units."
    )
    summary = SummaryField(allow_null=True)
    error = serializers.CharField(allow_blank=True, help_text="Why a failed run failed.")
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


@extend_schema_serializer(component_name="EvaluationPage")
class EvaluationPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/evaluations`` (cursor pagination, newest first)."""

    results = EvaluationOutputSerializer(many=True)


@extend_schema_serializer(component_name="CheckResult")
class CheckResultOutputSerializer(serializers.Serializer[Any]):
    repetition = serializers.IntegerField(help_text="Which repetition (from 0) it checked.")
    type = serializers.CharField()
    passed = serializers.BooleanField()
    reason = serializers.CharField(allow_blank=True)


@extend_schema_serializer(component_name="TokenCounts")
class TokenCountsOutputSerializer(serializers.Serializer[Any]):
    prompt_tokens = serializers.IntegerField(
        allow_null=True,
        help_text=(
            "The side's system prompt, counted; null when not rendered, or when it could "
            "not be counted (error)."
        ),
    )
    output_tokens = serializers.ListField(
        child=serializers.IntegerField(allow_null=True),
        help_text="Each answer counted, one per repetition (null: it could not be counted).",
    )
    exact = serializers.BooleanField(
        help_text="Whether the counts are the model's own tokenizer's (OpenAI's models); "
        "else an estimate (o200k_base)."
    )
    error = serializers.CharField(
        allow_null=True, help_text="null, or why a text of the side could not be counted."
    )


@extend_schema_serializer(component_name="SideResult")
class SideResultOutputSerializer(serializers.Serializer[Any]):
    outputs = serializers.ListField(
        child=serializers.CharField(allow_blank=True), help_text="One answer per repetition."
    )
    tool_calls = serializers.ListField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="Per repetition, the tool calls the model made.",
    )
    checks = CheckResultOutputSerializer(many=True)
    pass_rate = serializers.FloatField(help_text="The share of repetitions passing every check.")
    input_tokens = serializers.IntegerField(
        allow_null=True,
        help_text="Over the repetitions, as the provider reported them; null when it "
        "reported none (every call failed, or a provider such as echo).",
    )
    output_tokens = serializers.IntegerField(
        allow_null=True,
        help_text="Over the repetitions, as the provider reported them; null when none.",
    )
    cost = _cost_field(
        "Those tokens at the model's prices (cached answers included); null without prices "
        "or tokens."
    )
    counted = TokenCountsOutputSerializer(
        help_text="The prompt and the answers counted here, beside the provider's usage."
    )
    ms = serializers.FloatField(allow_null=True, help_text="Mean latency of a call.")
    error = serializers.CharField(allow_null=True, help_text="The first call's error, if any.")


VERDICTS = ["regression", "fix", "same_pass", "same_fail", "error"]


@extend_schema_serializer(component_name="CaseResult")
class CaseResultOutputSerializer(serializers.Serializer[Any]):
    case = serializers.CharField()
    prompt_changed = serializers.BooleanField()
    verdict = serializers.CharField(
        allow_blank=True,
        help_text=f"One of {', '.join(VERDICTS)}; empty until the run has finished.",
    )
    error = serializers.CharField(allow_blank=True, help_text="Why the case was not rendered.")
    baseline = SideResultOutputSerializer()
    candidate = SideResultOutputSerializer()


@extend_schema_serializer(component_name="EvaluationResultPage")
class EvaluationResultPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/evaluations/{id}/results`` (cursor pagination: regressions
    first, then errors, fixes, the rest)."""

    results = CaseResultOutputSerializer(many=True)
