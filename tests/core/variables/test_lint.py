"""lint with the registry's vocabulary: the engine's lint knows no variables of its own."""

from __future__ import annotations

from sysprompt_core.template import Diagnostic
from sysprompt_core.variables import lint


def brief(diagnostics: list[Diagnostic]) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.column, d.severity, d.message) for d in diagnostics]


def test_lint_default_vocabulary_when_none_given() -> None:
    assert brief(lint("[system:os] [prompt:cwd] [git:status] [file:x]")) == []
    assert "unknown variable type 'sytem'" in lint("[sytem:os]")[0].message
