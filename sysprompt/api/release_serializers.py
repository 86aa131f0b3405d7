"""Serializers of the releases endpoints (releases §5): releases, comparisons, labels
and their histories, the impact report, test contexts and agent hosts' labels.

Input serializers check the shape; ``sysprompt.releases.validation`` checks the rest
(names, targets, pointers, messages) and names the field in its 400.

In the schema a target is ``Target``: one of the named components ``LatestTarget``
(the string ``"latest"``), ``ReleaseTarget`` (``{"release": N}``) and ``SplitTarget``
(``{"split": [SplitArm, …]}``); an arm's release is a ``Pointer``: one of
``ReleaseNumber`` and ``LatestTarget``; an impact's candidate a ``Candidate``: a
``Pointer`` or a ``ReleaseTarget``. Every part has a name, so client generators make
one type each.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    PolymorphicProxySerializer,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers

from sysprompt.api.serializers import (
    CwdField,
    DiagnosticOutputSerializer,
    FragmentUseOutputSerializer,
    HostValuesField,
    JsonValueField,
    OverrideField,
    PageOutputSerializer,
    StrictBooleanField,
    StrictCharField,
    ToolsField,
    VariablesField,
)
from sysprompt.releases.gates import GATE_FIELDS, GATE_MODELS_MAX
from sysprompt.releases.validation import (
    MESSAGE_MAX_LENGTH,
    WINDOW_DAYS_DEFAULT,
    WINDOW_DAYS_MAX,
)
from sysprompt_core.limits import CWD_MAX_LENGTH, MODEL_MAX_LENGTH
from sysprompt_core.releases import (
    LABEL_NAME_MAX_LENGTH,
    LABEL_NAME_PATTERN,
    RELEASE_NUMBER_MAX,
    SPLIT_MAX_ARMS,
    SPLIT_MIN_ARMS,
    SPLIT_TOTAL,
)

# --- targets and pointers (schema only: the values are checked by the validation) ----


class LatestTargetSchema(serializers.Serializer[Any]):
    """``"latest"``: the working copy (``schema.LatestTargetScheme`` gives its schema)."""


class ReleaseNumberSchema(serializers.Serializer[Any]):
    """A release's number (``schema.ReleaseNumberScheme`` gives its schema)."""


POINTER = PolymorphicProxySerializer(
    component_name="Pointer",
    serializers=[ReleaseNumberSchema, LatestTargetSchema],
    resource_type_field_name=None,
)


@extend_schema_field(POINTER)
class PointerField(JsonValueField):
    """A release number or ``"latest"``, checked by ``releases.validation.pointer_valid``."""


@extend_schema_serializer(component_name="ReleaseTarget")
class ReleaseTargetSchema(serializers.Serializer[Any]):
    release = serializers.IntegerField(min_value=1, max_value=RELEASE_NUMBER_MAX)


@extend_schema_serializer(component_name="SplitArm")
class SplitArmSchema(serializers.Serializer[Any]):
    release = PointerField(help_text='A release number, or "latest" (the working copy).')
    weight = serializers.IntegerField(
        min_value=1,
        max_value=SPLIT_TOTAL - 1,
        help_text=f"Basis points (100 = 1%); the arms' weights add up to {SPLIT_TOTAL:,}.",
    )


@extend_schema_serializer(component_name="SplitTarget")
class SplitTargetSchema(serializers.Serializer[Any]):
    split = serializers.ListField(
        child=SplitArmSchema(),
        min_length=SPLIT_MIN_ARMS,
        max_length=SPLIT_MAX_ARMS,
        help_text=(
            "The arms, in order: a conversation gets the first whose running total of "
            'weights exceeds its point, sha256(label ":" conversation_id) modulo 10,000.'
        ),
    )


CANDIDATE = PolymorphicProxySerializer(
    component_name="Candidate",
    serializers=[ReleaseNumberSchema, ReleaseTargetSchema, LatestTargetSchema],
    resource_type_field_name=None,
)


@extend_schema_field(CANDIDATE)
class CandidateField(JsonValueField):
    """A release number, ``{"release": N}`` or ``"latest"``, checked by
    ``releases.validation.candidate_valid``."""


TARGET = PolymorphicProxySerializer(
    component_name="Target",
    serializers=[LatestTargetSchema, ReleaseTargetSchema, SplitTargetSchema],
    resource_type_field_name=None,
)


@extend_schema_field(TARGET)
class TargetField(JsonValueField):
    """A label's target, checked by ``releases.validation.target_valid``."""


def message_field(**kwargs: Any) -> StrictCharField:
    return StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=MESSAGE_MAX_LENGTH,
        **kwargs,
    )


# --- releases -----------------------------------------------------------------------------


@extend_schema_serializer(component_name="ReleaseInput")
class ReleaseInputSerializer(serializers.Serializer[Any]):
    message = message_field(help_text="What this release is; kept with it.")


@extend_schema_serializer(component_name="Release")
class ReleaseOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text="The prompt's name (default: today's routes).")
    number = serializers.IntegerField(min_value=1)
    message = serializers.CharField(allow_blank=True)
    author = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    template_version = serializers.IntegerField(
        min_value=0, help_text="The template version it holds; 0 for the built-in default."
    )


@extend_schema_serializer(component_name="ReleaseDetail")
class ReleaseDetailOutputSerializer(ReleaseOutputSerializer):
    fragments = FragmentUseOutputSerializer(
        many=True,
        help_text="The version of every fragment variant it holds, by name, provider, model.",
    )


@extend_schema_serializer(component_name="ReleasePage")
class ReleasePageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/releases`` (cursor pagination, newest first)."""

    results = ReleaseOutputSerializer(many=True)


class CompareQuerySerializer(serializers.Serializer[Any]):
    """``?with=latest|N``: what the release is compared with."""

    with_ = StrictCharField(
        required=False,
        default="latest",
        max_length=20,
        trim_whitespace=False,
        help_text='"latest" (the working copy, the default) or a release number.',
    )

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        fields["with"] = fields.pop("with_")
        return fields


@extend_schema_serializer(component_name="TemplateChange")
class TemplateChangeOutputSerializer(serializers.Serializer[Any]):
    before_version = serializers.IntegerField(min_value=0, help_text="0: the built-in default.")
    after_version = serializers.IntegerField(min_value=0, help_text="0: the built-in default.")
    diff = serializers.CharField(allow_blank=True, help_text="A unified diff, before → after.")
    diff_truncated = serializers.BooleanField(help_text="The diff was cut at its size limit.")
    diff_too_large = serializers.CharField(
        allow_null=True,
        help_text=(
            "null, or why the diff is not shown (too large, or not done within the "
            "deadline all the diffs of this answer share), with both sides' sizes; "
            "diff is then empty."
        ),
    )


@extend_schema_serializer(component_name="VariantChange")
class VariantChangeOutputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    provider = serializers.CharField(allow_null=True, help_text="null: any provider.")
    model = serializers.CharField(allow_null=True, help_text="null: any model.")
    before_version = serializers.IntegerField(
        allow_null=True, help_text="null: the variant is not on this side (or deleted)."
    )
    after_version = serializers.IntegerField(
        allow_null=True, help_text="null: the variant is not on this side (or deleted)."
    )
    diff = serializers.CharField(allow_blank=True, help_text="A unified diff of the text.")
    diff_truncated = serializers.BooleanField()
    diff_too_large = serializers.CharField(
        allow_null=True,
        help_text=(
            "null, or why the diff is not shown (too large, or not done within the "
            "deadline all the diffs of this answer share), with both sides' sizes; "
            "diff is then empty."
        ),
    )
    settings_changed = serializers.BooleanField(
        help_text="compress, defaults or strategy differ (the text may be the same)."
    )


@extend_schema_serializer(component_name="ReleaseComparison")
class ComparisonOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text="The prompt's name (default: today's routes).")
    release = serializers.IntegerField(min_value=1, help_text="The release compared (before).")
    with_ = PointerField(help_text="What it is compared with (after).")
    changed = serializers.BooleanField()
    template = TemplateChangeOutputSerializer(
        allow_null=True, help_text="null: both hold the same template version."
    )
    fragments = VariantChangeOutputSerializer(
        many=True, help_text="Every variant that differs, by name, provider and model."
    )

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        fields["with"] = fields.pop("with_")
        return fields


# --- labels -------------------------------------------------------------------------------


def _gate_schema(*, given: bool) -> dict[str, Any]:
    """A gate's schema: as a PUT gives it (``given``: only the suite required, at least
    one model when models are named) or as a label shows it (every field, the models
    its runs must use)."""
    models: dict[str, Any] = {
        "type": "array",
        "items": {"type": "string"},
        "maxItems": GATE_MODELS_MAX,
    }
    if given:
        models["minItems"] = 1
    return {
        "type": "object",
        "nullable": True,
        "properties": {
            "suite": {"type": "string"},
            "max_regressions": {"type": "integer", "minimum": 0},
            "min_pass_rate": {"type": "number", "minimum": 0, "maximum": 1},
            "models": models,
        },
        "required": ["suite"] if given else list(GATE_FIELDS),
    }


@extend_schema_field(_gate_schema(given=False))
class GateField(JsonValueField):
    """A label's gate as the API shows it."""


@extend_schema_field(_gate_schema(given=True))
class GateInputField(JsonValueField):
    """A label's gate as a PUT gives it, passed through as JSON
    (``sysprompt.releases.gates.gate_valid`` checks it)."""


@extend_schema_serializer(component_name="Label")
class LabelOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text="The prompt's name (default: today's routes).")
    name = serializers.CharField()
    target = TargetField()
    protected = serializers.BooleanField(help_text="Moving it needs releases.publish_release.")
    follows_latest = serializers.BooleanField(
        help_text='The target is "latest" (or a split with a latest arm): every save reaches it.'
    )
    updated_at = serializers.DateTimeField(
        allow_null=True, help_text="null: production as installed, never stored."
    )
    updated_by = serializers.CharField(allow_null=True)
    gate = GateField(
        allow_null=True,
        help_text="null: no gate; else a move needs, for each of models, a passing run of the "
        "suite on that model (409 without). models empty: a gate set before gates named "
        "models, while the default model is echo: no run counts.",
    )


@extend_schema_serializer(component_name="GateRefused")
class GateRefusedOutputSerializer(serializers.Serializer[Any]):
    """The 409 of a move that a label's gate refuses."""

    detail = serializers.CharField()
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text="What is missing, one sentence each."
    )


@extend_schema_serializer(component_name="LabelDetail")
class LabelDetailOutputSerializer(LabelOutputSerializer):
    rollback_to = TargetField(
        allow_null=True,
        help_text="Where a rollback would move the label now (each rollback goes one step "
        "further back through its history); null: nothing to roll back to.",
    )


@extend_schema_serializer(component_name="LabelPage")
class LabelPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/labels`` (cursor pagination, by name)."""

    results = LabelOutputSerializer(many=True)


@extend_schema_serializer(component_name="LabelInput")
class LabelInputSerializer(serializers.Serializer[Any]):
    target = TargetField(
        required=False,
        help_text='"latest", {"release": N} or {"split": [{"release", "weight"}, …]}; left '
        "out: the label keeps its target (a new label needs one).",
    )
    message = message_field(help_text="Why it moves; kept in the label's history.")
    protected = StrictBooleanField(
        required=False,
        help_text="Mark it protected (moving it then needs releases.publish_release); "
        "left out: unchanged (false for a new label). production is always protected.",
    )
    gate = GateInputField(
        required=False,
        allow_null=True,
        help_text='{"suite", "max_regressions" (default 0), "min_pass_rate" (0 to 1, default '
        '0), "models" (configured model names; default: [EVAL_DEFAULT_MODEL], refused when '
        "that is echo)}: a move to a release needs, for each model, a finished run of the "
        "suite on that model (both sides) with that release as candidate and the label as "
        "baseline that passed, no case or call in error; null removes it; left out: "
        "unchanged. A gated label cannot follow latest.",
    )
    force = StrictBooleanField(
        required=False,
        help_text="Move a gated label although its gate refuses (publishers only; needs a "
        "message; audited as label.forced).",
    )


@extend_schema_serializer(component_name="LabelMove")
class LabelMoveOutputSerializer(serializers.Serializer[Any]):
    from_ = TargetField(
        source="from_target", allow_null=True, help_text="null: this move created the label."
    )
    to = TargetField(source="to_target")
    author = serializers.CharField(source="author.get_username", allow_null=True, default=None)
    at = serializers.DateTimeField()
    message = serializers.CharField(allow_blank=True)
    rollback = serializers.BooleanField(help_text="Made by a rollback.")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        return {"from" if name == "from_" else name: field for name, field in fields.items()}


@extend_schema_serializer(component_name="LabelMovePage")
class LabelMovePageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/labels/{name}/history`` (cursor pagination, newest first)."""

    results = LabelMoveOutputSerializer(many=True)


@extend_schema_serializer(component_name="RollbackInput")
class RollbackInputSerializer(serializers.Serializer[Any]):
    message = message_field(help_text='Kept in the history; left out: "Rollback to <the target>."')
    force = StrictBooleanField(
        required=False,
        help_text="Past the label's gate (publishers only; needs a message).",
    )


# --- the impact report ------------------------------------------------------------------


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": WINDOW_DAYS_MAX})
class WindowDaysField(JsonValueField):
    """A whole number of days (a JSON number, not a string), checked by
    ``releases.validation.window_days_valid``."""


@extend_schema_serializer(component_name="ImpactInput")
class ImpactInputSerializer(serializers.Serializer[Any]):
    label = StrictCharField(  # type: ignore[assignment]  # a field named like Field's attribute
        max_length=LABEL_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text="The label whose move is previewed.",
    )
    candidate = CandidateField(
        help_text='What the label would point at: "latest" (the working copy) or a release, '
        'as its number or as a target names it ({"release": N}).'
    )
    window_days = WindowDaysField(
        required=False,
        help_text=f"How many days of the label's conversations to look at (default "
        f"{WINDOW_DAYS_DEFAULT}).",
    )


@extend_schema_serializer(component_name="ImpactSummary")
class ImpactSummaryOutputSerializer(serializers.Serializer[Any]):
    contexts = serializers.IntegerField(min_value=0, help_text="Contexts rendered.")
    contexts_changed = serializers.IntegerField(min_value=0)
    conversations = serializers.IntegerField(
        min_value=0, help_text="Recent conversations the contexts stand for."
    )
    conversations_changed = serializers.IntegerField(min_value=0)
    share_changed = serializers.FloatField(
        min_value=0, max_value=1, help_text="conversations_changed ÷ conversations (0 if none)."
    )
    prefixes_changed = serializers.IntegerField(
        min_value=0, help_text="Contexts whose shared prefix changes."
    )
    conversations_prefix_changed = serializers.IntegerField(
        min_value=0,
        help_text="Conversations that pay one provider cache write at their next construct.",
    )


@extend_schema_serializer(component_name="ImpactContext")
class ImpactContextOutputSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(
        help_text='"recorded:<hash>" or "test:<name>", with "#arm-N" under a split.'
    )
    origin = serializers.ChoiceField(
        choices=["recorded", "test"],
        help_text="recorded: the label's recent conversations; test: a test context.",
    )
    conversations = serializers.IntegerField(min_value=0)
    changed = serializers.BooleanField()
    diff = serializers.CharField(allow_blank=True, help_text="A unified diff, before → after.")
    diff_truncated = serializers.BooleanField()
    diff_too_large = serializers.CharField(
        allow_null=True,
        help_text=(
            "null, or why the diff is not shown (too large, or not done within the "
            "deadline all the diffs of this answer share), with both sides' sizes; "
            "diff is then empty."
        ),
    )
    chars_before = serializers.IntegerField(min_value=0)
    chars_after = serializers.IntegerField(min_value=0)
    tokens_before = serializers.IntegerField(
        min_value=0,
        allow_null=True,
        help_text=(
            "The prompt before, in tokens for the context's provider and model; null "
            "when it could not be counted (tokens_error)."
        ),
    )
    tokens_after = serializers.IntegerField(
        min_value=0, allow_null=True, help_text="The prompt after, likewise."
    )
    tokens_exact = serializers.BooleanField(
        help_text=(
            "true: the counts are exact (one of OpenAI's models); false: an estimate "
            "(any other model; counted with o200k_base)."
        )
    )
    tokens_error = serializers.CharField(
        allow_null=True,
        help_text=(
            "null, or why a prompt could not be counted; the report is answered all the same."
        ),
    )
    shared_prefix_before = serializers.IntegerField(min_value=0)
    shared_prefix_after = serializers.IntegerField(min_value=0)
    prefix_changed = serializers.BooleanField(
        help_text="The shared text differs: one provider cache write per conversation."
    )
    diagnostics = DiagnosticOutputSerializer(many=True, help_text="Lint of the candidate.")
    problem = serializers.CharField(allow_null=True, help_text="A side that could not render.")
    note = serializers.CharField(allow_null=True, help_text="E.g. a cwd that no longer exists.")
    arm = serializers.IntegerField(
        allow_null=True, min_value=0, help_text="The arm of the label's split; null: no split."
    )
    before = PointerField(help_text="What the label (or the arm) serves now.")
    host_values = serializers.ChoiceField(
        choices=["server", "supplied"],
        help_text="server: host-local values resolved here (SERVER_RESOLVES); supplied: the "
        "test context's own.",
    )
    agent_host = serializers.CharField(allow_null=True)
    cwd = serializers.CharField(
        allow_null=True, help_text="null: a test context without one (its values alone)."
    )
    provider = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    tools = serializers.ListField(child=serializers.CharField())
    variables = serializers.DictField(child=serializers.CharField(allow_blank=True))
    override = OverrideField(allow_null=True)
    conversation_id = serializers.CharField(
        allow_null=True, help_text="The newest conversation it stands for (rendered with)."
    )


@extend_schema_serializer(component_name="Impact")
class ImpactOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text="The prompt's name (default: today's routes).")
    label = serializers.CharField()  # type: ignore[assignment]
    candidate = PointerField(help_text='The candidate: a release number or "latest".')
    current = TargetField(help_text="The label's target now (the before side).")
    window_days = serializers.IntegerField(min_value=1)
    since = serializers.DateTimeField()
    note = serializers.CharField(help_text="How host-local values were rendered.")
    summary = ImpactSummaryOutputSerializer()
    contexts = ImpactContextOutputSerializer(many=True)


# --- test contexts and agent hosts' labels -----------------------------------------------


class OptionalCwdField(serializers.CharField):
    """A stored cwd that may be none (stored ``""``): ``null`` then."""

    def to_representation(self, value: Any) -> Any:
        return value or None


@extend_schema_serializer(component_name="TestContextInput")
class TestContextInputSerializer(serializers.Serializer[Any]):
    cwd = CwdField(
        required=False,
        allow_null=True,
        max_length=CWD_MAX_LENGTH,
        trim_whitespace=False,
        help_text="The working directory, checked as a conversation's; left out or null: "
        "none, and the context renders with its host-local values alone (then values is "
        "required).",
    )
    values = HostValuesField(required=False, help_text="Host-local values, as a host sends them.")
    provider = StrictCharField(
        required=False, allow_blank=True, max_length=MODEL_MAX_LENGTH, trim_whitespace=False
    )
    model = StrictCharField(
        required=False, allow_blank=True, max_length=MODEL_MAX_LENGTH, trim_whitespace=False
    )
    tools = ToolsField(required=False)
    variables = VariablesField(required=False)
    override = OverrideField(required=False, allow_null=True, help_text="The thread override.")


@extend_schema_serializer(component_name="TestContextCreateInput")
class TestContextCreateInputSerializer(TestContextInputSerializer):
    name = StrictCharField(
        max_length=LABEL_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text=f"Its name: {LABEL_NAME_PATTERN} (as a label's).",
    )


@extend_schema_serializer(component_name="TestContext")
class TestContextOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(source="prompt.name", help_text="The prompt's name.")
    name = serializers.CharField()
    cwd = OptionalCwdField(allow_null=True, help_text="null: none (host-local values only).")
    values = HostValuesField()
    provider = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    tools = serializers.ListField(child=serializers.CharField())
    variables = serializers.DictField(child=serializers.CharField(allow_blank=True))
    override = OverrideField(allow_null=True)
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(
        source="updated_by.get_username", allow_null=True, default=None
    )


@extend_schema_serializer(component_name="TestContextPage")
class TestContextPageOutputSerializer(PageOutputSerializer):
    """One page of ``GET /api/test-contexts`` (cursor pagination, by name)."""

    results = TestContextOutputSerializer(many=True)


@extend_schema_serializer(component_name="HostLabelInput")
class HostLabelInputSerializer(serializers.Serializer[Any]):
    label = StrictCharField(  # type: ignore[assignment]  # a field named like Field's attribute
        allow_null=True,
        max_length=LABEL_NAME_MAX_LENGTH,
        trim_whitespace=False,
        help_text="A label's name; null: none (the host's conversations use production).",
    )


@extend_schema_serializer(component_name="HostLabel")
class HostLabelOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text="The prompt's name (default: today's routes).")
    username = serializers.CharField()
    label = serializers.CharField(allow_null=True, help_text="null: none set.")  # type: ignore[assignment]
    effective = serializers.CharField(
        help_text="The label the host's conversations use when a call names none."
    )
    updated_at = serializers.DateTimeField(allow_null=True, help_text="null: never set.")
    updated_by = serializers.CharField(allow_null=True)


# --- a fragment's users and the impact of a change of its text ----------------------------


@extend_schema_serializer(component_name="FragmentImpactInput")
class FragmentImpactInputSerializer(serializers.Serializer[Any]):
    text = StrictCharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text="The variant's text whose impact is previewed (nothing is saved).",
    )
    provider = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=MODEL_MAX_LENGTH,
        trim_whitespace=False,
        help_text="The variant's provider (normalised); left out: the default variant.",
    )
    model = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=MODEL_MAX_LENGTH,
        trim_whitespace=False,
        help_text="The variant's model of that provider (normalised); needs provider.",
    )
    window_days = WindowDaysField(
        required=False,
        help_text=f"How many days of each label's conversations to look at (default "
        f"{WINDOW_DAYS_DEFAULT}).",
    )


@extend_schema_serializer(component_name="FragmentImpactLabel")
class FragmentImpactLabelOutputSerializer(serializers.Serializer[Any]):
    label = serializers.CharField()  # type: ignore[assignment]
    current = TargetField(help_text="The label's target now (the before side).")
    follows_latest = serializers.BooleanField(
        help_text="Whether saving the text reaches the label now (it serves the working "
        "copy, or a split arm does); a label serving a release gets it with a new release."
    )
    summary = ImpactSummaryOutputSerializer()
    contexts = ImpactContextOutputSerializer(many=True)


@extend_schema_serializer(component_name="FragmentImpactPrompt")
class FragmentImpactPromptOutputSerializer(serializers.Serializer[Any]):
    prompt = serializers.CharField(help_text="The prompt's name.")
    working_copy = serializers.BooleanField(help_text="Its working copy includes the fragment.")
    releases = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        help_text="Its releases served by a label that include the fragment.",
    )
    labels = FragmentImpactLabelOutputSerializer(
        many=True, help_text="The labels covered: those serving something that includes it."
    )


@extend_schema_serializer(component_name="FragmentImpact")
class FragmentImpactOutputSerializer(serializers.Serializer[Any]):
    fragment = serializers.CharField()
    provider = serializers.CharField(allow_null=True, help_text="null: any provider.")
    model = serializers.CharField(allow_null=True, help_text="null: any model.")
    window_days = serializers.IntegerField(min_value=1)
    since = serializers.DateTimeField()
    note = serializers.CharField(help_text="How host-local values were rendered.")
    truncated = serializers.BooleanField(
        help_text="A bound stopped the report: some prompts may be missing."
    )
    summary = ImpactSummaryOutputSerializer(help_text="Every row of every prompt and label.")
    prompts = FragmentImpactPromptOutputSerializer(
        many=True, help_text="Every prompt that includes the fragment, by name."
    )
