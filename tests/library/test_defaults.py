"""The shipped defaults: they parse with no refusal, hold every fragment §6 names, lint
clean, and install (twice: the second time changes nothing)."""

from __future__ import annotations

import pytest

from sysprompt.library.defaults import shipped_files, shipped_records
from sysprompt.library.selectors import library_source
from sysprompt.library.services import library_install
from sysprompt_core.library import (
    FragmentVariant,
    MemorySource,
    TreeRecord,
    VariantKey,
    library_lint,
    parse_tree,
)
from tests.library.support import snapshot

REQUIRED = [
    "core",
    "env/git-repository",
    "env/sandbox",
    "env/ide-mode",
    "tools/read-file",
    "tools/write-file",
    "tools/edit",
    "tools/shell",
    "tools/grep",
    "tools/glob",
    "tools/web-fetch",
]


def shipped_source() -> MemorySource:
    return MemorySource(
        FragmentVariant(
            r.name or "",
            VariantKey(r.provider, r.model),
            1,
            r.text,
            r.compress,
            r.defaults,
            r.strategy,
        )
        for r in shipped_records()
    )


def test_shipped_tree_parses_without_refusals() -> None:
    parsed = parse_tree(shipped_files())

    assert parsed.refusals == ()
    assert parsed.records == shipped_records()
    assert all(record.name is not None for record in parsed.records)


def test_shipped_defaults_hold_every_required_fragment() -> None:
    defaults = {r.name for r in shipped_records() if r.provider is None}

    assert set(REQUIRED) <= defaults


def test_shipped_core_has_variants_for_two_providers() -> None:
    providers = {r.provider for r in shipped_records() if r.name == "core" and r.model is None}

    assert {"anthropic", "openai"} <= providers


@pytest.mark.parametrize("record", shipped_records(), ids=lambda r: r.path)
def test_shipped_defaults_lint_clean(record: TreeRecord) -> None:
    assert record.name is not None
    diagnostics = library_lint(
        record.text,
        library=shipped_source(),
        provider=record.provider,
        model=record.model,
        name=record.name,
    )

    assert diagnostics == []
    assert record.text.endswith("\n") and record.text.strip()


@pytest.mark.django_db
def test_shipped_defaults_install_then_change_nothing() -> None:
    first = library_install()
    installed = snapshot()

    second = library_install()

    assert {step.action for step in first} == {"create"}
    assert len(first) == len(shipped_records())
    assert {step.action for step in second} == {"unchanged"}
    assert snapshot() == installed
    assert set(REQUIRED) <= library_source().names()
