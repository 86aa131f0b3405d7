"""What a model answered, as the checks see it: text and tool calls.

The provider adapters (the server's ``sysprompt.evaluations``) turn an OpenAI or
Anthropic response into an :class:`Answer`; everything here is plain data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Answer", "ToolCall"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: the function's name and its arguments as the model wrote them.

    ``arguments`` is the raw JSON text (OpenAI) or the object (Anthropic); :meth:`parsed`
    gives the object, or ``None`` when the text is not a JSON object.
    """

    name: str
    arguments: str | Mapping[str, object] = "{}"

    def parsed(self) -> Mapping[str, object] | None:
        if isinstance(self.arguments, Mapping):
            return self.arguments
        try:
            value = json.loads(self.arguments)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None

    def as_json(self) -> dict[str, object]:
        parsed = self.parsed()
        return {"name": self.name, "arguments": parsed if parsed is not None else self.arguments}


@dataclass(frozen=True, slots=True)
class Answer:
    """The assistant's next turn: its text (possibly empty) and its tool calls."""

    text: str
    tool_calls: tuple[ToolCall, ...] = field(default=())
