"""Checking what authors send for suites, cases and runs; :class:`InvalidInput` names
the field (``checks[2].pattern``, ``messages[3].role``) and says what to write."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput, TestContextNotFound
from sysprompt.prompts.models import Prompt
from sysprompt.prompts.validation import conversation_id_check
from sysprompt.releases.selectors import test_context_get
from sysprompt.releases.validation import call_label_valid, label_name_valid, test_context_valid
from sysprompt_core._json import json_type
from sysprompt_core.evaluations import InvalidCheck, JudgeCheck, parse_checks
from sysprompt_core.releases import LATEST, RELEASE_NUMBER_MAX

__all__ = [
    "CONTEXT_FIELDS",
    "CheckedCase",
    "RunSide",
    "case_valid",
    "run_side_valid",
    "suite_name_valid",
]

CONTEXT_FIELDS = (
    "cwd",
    "values",
    "provider",
    "model",
    "tools",
    "variables",
    "override",
    "label",
)
"""A case's inline context; ``label`` is the label a recorded conversation was served
from (``from_conversation`` copies it): kept as where the case came from, while the
run's two sides say what each case is rendered with."""
MESSAGES_MAX = 200
MESSAGE_MAX_CHARS = 100_000
TOOLS_MAX = 64
DESCRIPTION_MAX_CHARS = 2_000
REFERENCE_MAX_CHARS = 100_000
REPEAT_MAX = 10

RunSide: TypeAlias = Literal["latest"] | int | dict[str, str]
"""What a side of a run evaluates, as stored: ``"latest"``, a release number or
``{"label": name}``."""


def suite_name_valid(name: object, field: str = "name") -> str:
    """A suite's name: the rule of a label's name (lowercase, digits, ``. _ -``)."""
    return label_name_valid(name, field)


def description_valid(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > DESCRIPTION_MAX_CHARS:
        raise InvalidInput("description", f"text of at most {DESCRIPTION_MAX_CHARS:,} characters")
    return value


@dataclass(frozen=True)
class CheckedCase:
    name: str
    context: dict[str, Any]
    messages: list[dict[str, str]]
    tools: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    reference: str | None


def case_valid(
    fields: Mapping[str, Any], *, name: object | None = None, prompt: Prompt | None = None
) -> CheckedCase:
    """A case's fields, each checked (``name`` given apart when the URL names the case);
    a ``test_context`` must be one of ``prompt``'s (``default`` when None)."""
    unknown = set(fields) - {"name", "context", "messages", "tools", "checks", "reference"}
    if unknown:
        field = sorted(unknown)[0]
        raise InvalidInput(
            field, "unknown field; a case has name, context, messages, tools, checks, reference"
        )
    for field, value in fields.items():
        unstorable_check(value, field)
    given_name = fields.get("name") if name is None else name
    if not isinstance(given_name, str):
        raise InvalidInput("name", "a case's name is text such as 'refuses-rm-rf'")
    try:
        checked_name = conversation_id_check(given_name)
    except InvalidInput as error:
        raise InvalidInput("name", error.message) from None
    reference = fields.get("reference")
    if reference is not None and (
        not isinstance(reference, str) or len(reference) > REFERENCE_MAX_CHARS
    ):
        raise InvalidInput("reference", f"text of at most {REFERENCE_MAX_CHARS:,} characters")
    return CheckedCase(
        name=checked_name,
        context=context_valid(fields.get("context", {}), prompt=prompt),
        messages=messages_valid(fields.get("messages")),
        tools=tools_valid(fields.get("tools", [])),
        checks=checks_valid(fields.get("checks", [])),
        reference=reference,
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def unstorable_check(value: object, field: str) -> None:
    """Refuse a NUL character or a lone surrogate anywhere in ``value`` (its keys too):
    no database stores them (PostgreSQL's text and jsonb refuse both)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                raise InvalidInput(field, "null characters are not allowed")
            if _SURROGATE.search(item):
                raise InvalidInput(field, "surrogate characters are not allowed")


def context_valid(value: object, *, prompt: Prompt | None = None) -> dict[str, Any]:
    """``{"test_context": name}`` (the test context must exist) or the fields of a test
    context inline (``cwd``, ``values``, ``provider``, ``model``, ``tools``,
    ``variables``, ``override``), checked as a test context's are — but for the cwd:
    ``{"provider", "model"}`` alone is a context (the prompt renders as a turn without a
    working directory does) — and the ``label`` a conversation was served from (a
    label's name or ``latest``); ``{}``: none."""
    if not isinstance(value, dict):
        raise InvalidInput("context", f"must be an object, got {json_type(value)}")
    if "test_context" in value:
        if set(value) != {"test_context"}:
            raise InvalidInput(
                "context", "a context names a test_context, or gives its fields inline, not both"
            )
        name = label_name_valid(value["test_context"], "context.test_context")
        try:
            test_context_get(name, prompt=prompt)
        except TestContextNotFound as error:
            raise InvalidInput("context.test_context", str(error)) from None
        return {"test_context": name}
    for key in value:
        if key not in CONTEXT_FIELDS:
            raise InvalidInput(
                f"context.{key}",
                f"unknown field; a context has test_context, or {', '.join(CONTEXT_FIELDS)}",
            )
    if not value:
        return {}
    fields = dict(value)
    if "label" in fields:
        fields["label"] = call_label_valid(fields["label"], "context.label")
    try:
        test_context_valid(
            name="inline",
            fields={k: v for k, v in fields.items() if k != "label"},
            location_required=False,
        )
    except InvalidInput as error:
        raise InvalidInput(f"context.{error.field}", error.message) from None
    return fields


def messages_valid(value: object) -> list[dict[str, str]]:
    """The conversation so far: 1–200 turns ``{"role": "user"|"assistant", "content"}``,
    the last one the user's (the model writes the next assistant turn)."""
    if not isinstance(value, list) or not value:
        raise InvalidInput(
            "messages",
            'the conversation so far: a list like [{"role": "user", "content": "…"}]',
        )
    if len(value) > MESSAGES_MAX:
        raise InvalidInput("messages", f"at most {MESSAGES_MAX} turns")
    turns = []
    for index, turn in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(turn, dict) or set(turn) != {"role", "content"}:
            raise InvalidInput(where, 'a turn is {"role": "user" or "assistant", "content": text}')
        if turn["role"] not in ("user", "assistant"):
            raise InvalidInput(
                f"{where}.role",
                "user or assistant (the system prompt is what the run renders)",
            )
        content = turn["content"]
        if not isinstance(content, str) or len(content) > MESSAGE_MAX_CHARS:
            raise InvalidInput(
                f"{where}.content", f"text of at most {MESSAGE_MAX_CHARS:,} characters"
            )
        turns.append({"role": str(turn["role"]), "content": content})
    if turns[-1]["role"] != "user":
        raise InvalidInput(
            f"messages[{len(turns) - 1}].role",
            "the last turn is the user's: the model answers it",
        )
    return turns


def tools_valid(value: object) -> list[dict[str, Any]]:
    """Function tools in OpenAI's shape: ``{"type": "function", "function": {"name",
    "description"?, "parameters"?}}`` (translated for Anthropic)."""
    if not isinstance(value, list) or len(value) > TOOLS_MAX:
        raise InvalidInput("tools", f"a list of at most {TOOLS_MAX} function tools")
    names = set()
    for index, tool in enumerate(value):
        where = f"tools[{index}]"
        function = tool.get("function") if isinstance(tool, dict) else None
        if (
            not isinstance(tool, dict)
            or tool.get("type") != "function"
            or not isinstance(function, dict)
        ):
            raise InvalidInput(
                where, '{"type": "function", "function": {"name": …, "parameters": {…}}}'
            )
        name = function.get("name")
        if not isinstance(name, str) or not name or len(name) > 64:
            raise InvalidInput(f"{where}.function.name", "a name of 1 to 64 characters")
        if name in names:
            raise InvalidInput(f"{where}.function.name", f"{name!r} is offered twice")
        names.add(name)
        parameters = function.get("parameters", {})
        if not isinstance(parameters, dict):
            raise InvalidInput(f"{where}.function.parameters", "a JSON Schema object")
    return list(value)


def checks_valid(value: object) -> list[dict[str, Any]]:
    """The checks (:func:`sysprompt_core.evaluations.parse_checks`); a judge's model must
    be one of the configured models."""
    try:
        checks = parse_checks(value)
    except InvalidCheck as error:
        raise InvalidInput(error.field, error.message) from None
    models = app_settings().models
    for index, check in enumerate(checks):
        if isinstance(check, JudgeCheck) and check.model is not None and check.model not in models:
            raise InvalidInput(
                f"checks[{index}].model",
                f"there is no model {check.model!r}; GET /api/models lists them",
            )
    assert isinstance(value, list)
    return list(value)


def run_side_valid(value: object, field: str) -> RunSide:
    """A side of a run: ``"latest"``, a release number (or ``{"release": N}``) or
    ``{"label": name}``."""
    if value == LATEST:
        return LATEST
    if isinstance(value, dict) and set(value) == {"label"}:
        return {"label": label_name_valid(value["label"], f"{field}.label")}
    number = value["release"] if isinstance(value, dict) and set(value) == {"release"} else value
    if (
        isinstance(number, bool)
        or not isinstance(number, int)
        or not 1 <= number <= RELEASE_NUMBER_MAX
    ):
        raise InvalidInput(
            field, '"latest", a release number, {"release": N} or {"label": "<name>"}'
        )
    return number


def repeat_valid(value: object) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= REPEAT_MAX:
        raise InvalidInput("repeat", f"a whole number from 1 to {REPEAT_MAX}")
    return value


def model_valid(value: object, field: str) -> str:
    """A configured model's name (``None``: the default, ``EVAL_DEFAULT_MODEL`` — else
    the first real model configured, else ``echo``)."""
    conf = app_settings()
    if value is None:
        return conf.eval_default_model
    if not isinstance(value, str) or value not in conf.models:
        raise InvalidInput(field, f"one of the models: {', '.join(conf.models)}")
    return value
