"""reachable_references (agent-hosts §0): every key a template can reach, for a host."""

from __future__ import annotations

import pytest

from sysprompt_core.library import MemorySource, Override, reachable_references
from sysprompt_core.limits import FRAGMENT_MAX_DEPTH
from tests.core.variables.fragment_support import CountingSource, library, variant


def reach(
    template: str,
    source: MemorySource | None,
    *,
    provider: str | None = None,
    model: str | None = None,
    overrides: tuple[Override | None, ...] = (),
    compress: bool = False,
) -> frozenset[str]:
    return reachable_references(
        template,
        library=source,
        provider=provider,
        model=model,
        overrides=overrides,
        compress=compress,
    )


def test_the_template_own_references_in_every_branch() -> None:
    template = "[prompt:cwd] [if git:branch][git:status][else][file:a.md][endif][if !var:x]y[endif]"
    assert reach(template, None) == {
        "prompt:cwd",
        "git:branch",
        "git:status",
        "file:a.md",
        "var:x",
    }


def test_literal_tags_are_not_references() -> None:
    assert reach("[if file:x] never closed [git:branch ] [ file:y]", None) == set()


def test_compress_is_applied_first() -> None:
    assert reach("[file:a  b]", None) == {"file:a  b"}
    assert reach("[file:a  b]", None, compress=True) == {"file:a b"}


SOURCE = library(
    {
        "core": "Core [system:date]\n[if tool:grep][fragment:tools/grep][endif]\n[fragment:env]",
        "tools/grep": "Grep in [prompt:cwd]",
        "env": "[if git:branch]\n[fragment:env/git]\n[else]\n[fragment:env/plain]\n[endif]",
        "env/git": "Branch [git:branch], status [git:status]",
        "env/plain": "Files: [file:AGENTS.md]",
        "loop/a": "A [var:a] [fragment:loop/b]",
        "loop/b": "B [var:b] [fragment:loop/a]",
        "preset": "Preset [var:tone] [fragment:env/plain]",
    },
    variant("core", "Anthropic core [system:time]", "anthropic"),
    variant("env/git", "Sonnet git [git:status]", "anthropic", "claude-sonnet"),
    variant("preset", "OpenAI preset [file:OPENAI.md]", "openai", compress=True),
)


def test_through_fragments_every_branch_without_fragment_keys() -> None:
    assert reach("[fragment:core]", SOURCE) == {
        "system:date",
        "tool:grep",
        "prompt:cwd",
        "git:branch",
        "git:status",
        "file:AGENTS.md",
    }


def test_if_fragment_reaches_the_fragment_too() -> None:
    assert reach("[if fragment:env/plain]yes[endif]", SOURCE) == {"file:AGENTS.md"}


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        (None, None, {"git:branch", "git:status"}),
        ("anthropic", None, {"git:branch", "git:status"}),
        ("anthropic", "Claude Sonnet", {"git:status"}),
    ],
)
def test_the_variant_for_provider_and_model(
    provider: str | None, model: str | None, expected: set[str]
) -> None:
    assert reach("[fragment:env/git]", SOURCE, provider=provider, model=model) == expected


def test_provider_variant_replaces_the_default_one() -> None:
    assert reach("[fragment:core]", SOURCE, provider="anthropic") == {"system:time"}


def test_cycles_stop() -> None:
    assert reach("[fragment:loop/a]", SOURCE) == {"var:a", "var:b"}


def test_unknown_and_invalid_fragments_reach_nothing() -> None:
    assert reach("[fragment:nope] [fragment:Bad Name] [var:x]", SOURCE) == {"var:x"}
    assert reach("[fragment:core] [var:x]", None) == {"var:x"}


def chain_library(length: int) -> MemorySource:
    """f1 includes f2 … includes f<length>; each fi refers to var:i."""
    texts = {f"f{i}": f"[var:{i}] [fragment:f{i + 1}]" for i in range(1, length)}
    texts[f"f{length}"] = f"[var:{length}]"
    return library(texts)


def test_depth_beyond_the_limit_is_not_reached() -> None:
    source = chain_library(FRAGMENT_MAX_DEPTH + 2)
    found = reach("[fragment:f1]", source)
    assert found == {f"var:{i}" for i in range(1, FRAGMENT_MAX_DEPTH + 1)}


def test_the_least_depth_counts() -> None:
    source = chain_library(FRAGMENT_MAX_DEPTH + 2)
    deepest = f"f{FRAGMENT_MAX_DEPTH + 2}"
    found = reach(f"[fragment:f1] [fragment:{deepest}]", source)
    assert f"var:{FRAGMENT_MAX_DEPTH + 2}" in found
    assert f"var:{FRAGMENT_MAX_DEPTH + 1}" not in found


def test_presets_of_the_overrides_are_reached() -> None:
    overrides = (Override(preset="preset"), None, Override(content="[var:never] content"))
    assert reach("[prompt:model]", SOURCE, overrides=overrides) == {
        "prompt:model",
        "var:tone",
        "file:AGENTS.md",
    }
    assert reach("", SOURCE, provider="OpenAI", overrides=overrides) == {"file:OPENAI.md"}


def test_each_fragment_is_read_once_however_often_reached() -> None:
    layer = {
        f"d{i}/{j}": " ".join(f"[fragment:d{i + 1}/{k}]" for k in range(4))
        for i in range(6)
        for j in range(4)
    }
    layer.update({f"d6/{k}": f"[var:{k}]" for k in range(4)})
    source = CountingSource(layer)
    found = reach("[fragment:d0/0] [fragment:d0/1]", source)
    assert found == {f"var:{k}" for k in range(4)}
    assert max(source.lookups.values()) == 1


def test_deterministic() -> None:
    first = reach("[fragment:core] [fragment:loop/b]", SOURCE)
    assert all(reach("[fragment:core] [fragment:loop/b]", SOURCE) == first for _ in range(5))
