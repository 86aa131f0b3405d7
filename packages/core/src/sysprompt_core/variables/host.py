"""``tool:<name>`` and ``var:<name>`` variables: what the agent host supplied.

* ``tool:<name>`` is ``<name>`` when the host listed that tool in ``tools``
  (``[if tool:grep]`` tells whether the agent can grep), and does not exist otherwise;
* ``var:<name>`` is the value the host gave for ``<name>`` in ``variables`` (for a
  preset, its defaults overlaid by the override's and the request's values: the caller
  puts the merged values in the context), and does not exist otherwise.

Both types are dynamic: any name can be asked for, and the answer is in the context.
"""

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

TOOL_VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo(
        "tool",
        "<name>",
        "The tool's name, when the agent host listed the tool as available.",
        dynamic=True,
    ),
)
VAR_VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo(
        "var",
        "<name>",
        "A value the agent host supplied under that name (or a preset's default).",
        dynamic=True,
    ),
)

NOT_LISTED = Missing("the host did not list this tool")
NOT_GIVEN = Missing("the host gave no value of this name")


class ToolResolver(Resolver):
    type = "tool"

    def variables(self) -> Sequence[VariableInfo]:
        return TOOL_VARIABLES

    def names(self) -> frozenset[str] | None:
        return None

    def value(self, name: str, context: ResolveContext) -> Value:
        return name if name in context.tools else NOT_LISTED


class VarResolver(Resolver):
    type = "var"

    def variables(self) -> Sequence[VariableInfo]:
        return VAR_VARIABLES

    def names(self) -> frozenset[str] | None:
        return None

    def value(self, name: str, context: ResolveContext) -> Value:
        return context.variables.get(name, NOT_GIVEN)


def register(registry_builder: RegistryBuilder) -> None:
    registry_builder.register(ToolResolver())
    registry_builder.register(VarResolver())
