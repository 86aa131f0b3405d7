"""Lint: structure, vocabulary and near-miss diagnostics with line and column."""

from __future__ import annotations

import pytest

from sysprompt_core.template import Diagnostic, lint

VOCABULARY = {
    "system": frozenset({"time", "date", "os", "hostname"}),
    "prompt": frozenset({"cwd", "model", "conversation_id"}),
    "git": frozenset({"branch", "status"}),
    "file": None,
}


def brief(diagnostics: list[Diagnostic]) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.column, d.severity, d.message) for d in diagnostics]


@pytest.mark.parametrize(
    ("template", "line", "column", "severity", "fragment"),
    [
        ("a\n  [if file:x]\nb", 2, 3, "error", "[if file:x] is never closed"),
        ("x [endif]", 1, 3, "error", "[endif] has no open [if]"),
        ("[else]", 1, 1, "error", "[else] is outside any [if] block"),
        ("[if git:branch]\n[else]\n[else]\n[endif]", 3, 1, "error", "second [else]"),
        ("[if git:branch]\n[else]\n[else]\n[endif]", 3, 1, "error", "opened on line 1"),
        ("[if git:branch]a[else]b", 1, 17, "error", "belongs to the unmatched [if] on line 1"),
        ("\n[fiel:x]", 2, 1, "warning", "unknown variable type 'fiel' (did you mean 'file'?)"),
        ("[todo:x]", 1, 1, "warning", "unknown variable type 'todo'"),
        ("[system:hostnam]", 1, 1, "warning", "did you mean 'system:hostname'?"),
        ("[system:nope]", 1, 1, "warning", "(known: date, hostname, os, time)"),
        ("[if !git:brnch]x[endif]", 1, 1, "warning", "unknown variable 'git:brnch'"),
        ("[If git:branch]", 1, 1, "warning", "did you mean '[if git:branch]'?"),
        ("a [endif ]", 1, 3, "warning", "did you mean '[endif]'?"),
        ("[ENDIF]", 1, 1, "warning", "did you mean '[endif]'?"),
        ("[Else]", 1, 1, "warning", "did you mean '[else]'?"),
        ("[if git:branch ]", 1, 1, "warning", "did you mean '[if git:branch]'?"),
        ("[if ! git:branch]", 1, 1, "warning", "did you mean '[if !git:branch]'?"),
        ("x\ty [ file:AGENTS.md]", 1, 5, "warning", "did you mean '[file:AGENTS.md]'?"),
        ("[File:AGENTS.md]", 1, 1, "warning", "did you mean '[file:AGENTS.md]'?"),
    ],
)
def test_lint_reports_when_problem(
    template: str, line: int, column: int, severity: str, fragment: str
) -> None:
    found = [d for d in lint(template, VOCABULARY) if fragment in d.message]
    assert [(d.line, d.column, d.severity) for d in found] == [(line, column, severity)]


@pytest.mark.parametrize(
    "template",
    [
        "",
        "You are helpful.\n[if file:AGENTS.md]\n[file:AGENTS.md]\n[endif]\nIn [prompt:cwd].",
        "[Note: be brief] [see: above] [x] [a:] [:b] [TODO later]",
        "[if !git:branch]no repo[else]on [git:branch][endif]",
        "[file:any/path/at all.md]",
    ],
)
def test_lint_silent_when_clean(template: str) -> None:
    assert lint(template, VOCABULARY) == []


def test_lint_end_column_when_tag() -> None:
    (diagnostic,) = lint("ab [endif]", VOCABULARY)
    assert (diagnostic.column, diagnostic.end_column) == (4, 11)


def test_lint_ordered_by_position_when_many() -> None:
    diagnostics = lint("[endif]\n[x:y] [endif]\n[if a:b]", VOCABULARY)
    assert [(d.line, d.column) for d in diagnostics] == [(1, 1), (2, 1), (2, 7), (3, 1)]


def test_lint_linear_when_200k_unmatched_tags() -> None:
    diagnostics = lint("[if a:b]\n" * 100_000 + "[endif ]" * 100_000, {"a": None})
    assert len(diagnostics) == 200_000
