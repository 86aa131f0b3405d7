"""``prompt:`` variables: what the agent host said about the conversation."""

from __future__ import annotations

from collections.abc import Sequence

from sysprompt_core.variables.registry import (
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    Value,
    VariableInfo,
)

VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo("prompt", "cwd", "The conversation's working directory, as an absolute path."),
    VariableInfo("prompt", "model", "The name of the model the conversation uses, when given."),
    VariableInfo("prompt", "conversation_id", "The conversation's id, when given."),
    VariableInfo(
        "prompt", "provider", "The name of the model's provider (anthropic, openai…), when given."
    ),
)


def _given(value: str | None, what: str) -> Value:
    return Missing(f"no {what} was given") if value is None else value


def prompt_value(name: str, context: ResolveContext) -> Value:
    match name:
        case "cwd":
            return _given(context.working_directory, "working directory")
        case "model":
            return _given(context.model, "model")
        case "conversation_id":
            return _given(context.conversation_id, "conversation id")
        case "provider":
            return _given(context.provider, "provider")
        case _:
            return Missing("unknown variable")


class PromptResolver(Resolver):
    type = "prompt"

    def variables(self) -> Sequence[VariableInfo]:
        return VARIABLES

    def value(self, name: str, context: ResolveContext) -> Value:
        return prompt_value(name, context)


def register(registry_builder: RegistryBuilder) -> None:
    registry_builder.register(PromptResolver())
