"""The shared prefix of a resolution (agent-hosts §1): which values end it, fragments."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import pytest

from sysprompt_core.library import MemorySource
from sysprompt_core.template import PrefixEnd
from sysprompt_core.variables import (
    PER_CONVERSATION_KEYS,
    PER_CONVERSATION_TYPES,
    Resolution,
    ResolveContext,
    ResolverOptions,
    is_per_conversation,
    resolve_prompt,
)
from tests.core.variables.fragment_support import library, variant

NOW = datetime(2026, 11, 22, 9, 15, 3, 123000, tzinfo=UTC)
HEAD = "Static head.\n"


def resolve(
    template: str,
    source: MemorySource | None = None,
    *,
    supplied: Mapping[str, str | None] | None = None,
    variables: Mapping[str, str] | None = None,
    tools: frozenset[str] = frozenset(),
) -> Resolution:
    """A resolution that reads nothing from this machine: git: and file: values are
    the ones ``supplied`` (server_resolves lists only system)."""
    context = ResolveContext(
        cwd="/work/project",
        model="claude-sonnet",
        provider="anthropic",
        conversation_id="conv-1",
        now=NOW,
        options=ResolverOptions(allowed_roots=()),
        tools=tools,
        variables=variables or {},
        library=source,
        supplied=supplied or {},
        server_resolves=frozenset({"system"}),
    )
    return resolve_prompt(template, context)


SUPPLIED = {"git:branch": "main", "git:status": "", "file:AGENTS.md": "Be brief."}


@pytest.mark.parametrize(
    "key",
    [
        "prompt:cwd",
        "prompt:conversation_id",
        "system:time",
        "system:date",
        "system:hostname",
        "git:branch",
        "git:status",
        "file:AGENTS.md",
        "file:missing.md",
        "var:project",
        "var:unset",
        "tool:grep",
        "tool:unlisted",
    ],
)
def test_per_conversation_key_ends_the_prefix_at_its_place(key: str) -> None:
    resolution = resolve(
        f"{HEAD}Here: [{key}] and on.\n[prompt:model]",
        supplied=SUPPLIED,
        variables={"project": "sysprompt"},
        tools=frozenset({"grep"}),
    )
    assert resolution.prompt is not None
    assert resolution.shared_prefix_chars == len(HEAD + "Here: ")
    assert resolution.prefix_end == PrefixEnd(key, 2, 7)


@pytest.mark.parametrize(
    "key",
    [
        "prompt:cwd",
        "prompt:conversation_id",
        "system:time",
        "system:date",
        "system:hostname",
        "git:branch",
        "file:AGENTS.md",
        "var:project",
        "tool:grep",
    ],
)
@pytest.mark.parametrize("negated", ["", "!"])
def test_block_on_a_per_conversation_key_ends_the_prefix_at_its_start(
    key: str, negated: str
) -> None:
    resolution = resolve(
        f"{HEAD}[if {negated}{key}]\nyes\n[else]\nno\n[endif]\ntail",
        supplied=SUPPLIED,
        variables={"project": "sysprompt"},
        tools=frozenset({"grep"}),
    )
    assert resolution.shared_prefix_chars == len(HEAD)
    assert resolution.prefix_end == PrefixEnd(key, 2, 1)


@pytest.mark.parametrize(
    "template",
    [
        "[prompt:model] [prompt:provider] [system:os]",
        "[if prompt:model]m[endif][if !prompt:provider]p[endif][if system:os]o[endif]",
        "[system:nope] [prompt:nope] [nope:x] [if nope:y]n[endif]",  # unknown: never exist
        "literal [git:branch ] text [else] and [endif]",
    ],
)
def test_static_keys_and_literal_text_never_end_it(template: str) -> None:
    resolution = resolve(HEAD + template)
    assert resolution.prompt is not None
    assert resolution.shared_prefix_chars == len(resolution.prompt)
    assert (resolution.shared_prefix, resolution.prefix_end) == (None, None)


def test_vocabulary_is_the_spec_list() -> None:
    assert {"git", "file", "var", "tool"} == PER_CONVERSATION_TYPES
    assert {
        "prompt:cwd",
        "prompt:conversation_id",
        "system:time",
        "system:date",
        "system:hostname",
    } == PER_CONVERSATION_KEYS
    assert not any(
        map(is_per_conversation, ["prompt:model", "prompt:provider", "system:os", "fragment:x"])
    )


def test_no_prompt_shares_nothing() -> None:
    assert resolve("").shared_prefix_chars == 0
    assert resolve(" \n").shared_prefix_chars == 0
    resolution = resolve("   [var:unset]  ")
    assert resolution.prompt is None
    assert (resolution.shared_prefix, resolution.shared_prefix_chars) == (0, 0)


def test_prefix_counts_code_points() -> None:
    resolution = resolve("Grüße ✓ [system:time]")
    assert resolution.shared_prefix_chars == len("Grüße ✓ ") == 8


# Fragments: selection and static parts do not end it; their own values do, inside.

FRAGMENTS = library(
    {
        "static": "A static fragment for [prompt:provider].\n",
        "env": "Env head.\nBranch: [git:branch]\n",
        "wrap": "Wrap [fragment:static] then [fragment:env] end",
        "outer": "Outer [fragment:wrap]",
        "guarded": "[if git:branch]on a branch[endif]\n",
        "tail": "All static until [system:date]",
    },
    variant("env", "OpenAI env [file:AGENTS.md]\n", "openai"),
)


@pytest.mark.parametrize(
    ("template", "shared", "end"),
    [
        ("Head [fragment:static] more", None, None),
        ("Head [fragment:env] more", len("Head Env head.\nBranch: "), (1, 6)),
        (
            "Head [fragment:wrap] more",
            len("Head Wrap A static fragment for anthropic. then Env head.\nBranch: "),
            (1, 6),
        ),
        (
            "H\n[fragment:outer]",
            len("H\nOuter Wrap A static fragment for anthropic. then Env head.\nBranch: "),
            (2, 1),
        ),
        ("Head [fragment:guarded] more", len("Head "), (1, 6)),
        ("[fragment:tail]", len("All static until "), (1, 1)),
        # Whether a fragment exists is the same everywhere: [if fragment:x] does not end it.
        (
            "[if fragment:env]\nHas env: [fragment:env]\n[endif]",
            len("Has env: Env head.\nBranch: "),
            (2, 10),
        ),
        ("[if fragment:nope]x[endif][fragment:nope] static", None, None),
        # A value before the fragment ends it first.
        ("[system:time] [fragment:env]", 0, (1, 1)),
    ],
)
def test_fragment_prefix(template: str, shared: int | None, end: tuple[int, int] | None) -> None:
    resolution = resolve(template, FRAGMENTS, supplied=SUPPLIED)
    assert resolution.prompt is not None
    if shared is None:
        assert resolution.shared_prefix is None
        assert resolution.shared_prefix_chars == len(resolution.prompt)
        assert resolution.prefix_end is None
    else:
        assert resolution.shared_prefix_chars == shared
        assert resolution.prefix_end is not None
        assert resolution.prefix_end[1:] == end


def test_fragment_included_twice_keeps_its_prefix() -> None:
    resolution = resolve("[fragment:static]\n[fragment:static]\n[fragment:env]", FRAGMENTS)
    expected = "A static fragment for anthropic.\n" * 2 + "Env head.\nBranch: "
    assert resolution.shared_prefix_chars == len(expected)
    assert resolution.prefix_end == PrefixEnd("fragment:env", 3, 1)


def test_fragment_value_ends_with_a_value_that_lost_its_line_ending() -> None:
    # The fragment's text ends with its value: the one line ending stripped after it
    # cannot move the prefix past the end of the value.
    source = library({"x": "Head [var:unset]\n"})
    resolution = resolve("[fragment:x]!", source)
    assert resolution.prompt == "Head !"
    assert resolution.shared_prefix_chars == len("Head ")


def test_prefix_is_the_same_for_two_conversations() -> None:
    template = "Intro.\n[fragment:wrap]\n[if var:project]Project [var:project][endif]"
    first = resolve(template, FRAGMENTS, supplied=SUPPLIED, variables={"project": "a"})
    second = resolve(template, FRAGMENTS, supplied={"git:branch": "dev"})
    assert first.prompt is not None and second.prompt is not None
    shared = first.shared_prefix_chars
    assert shared == second.shared_prefix_chars
    assert first.prompt[:shared] == second.prompt[:shared]
    assert first.prompt[shared:] != second.prompt[shared:]
