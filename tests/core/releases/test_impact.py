"""Releases §3: the impact matrix, one pure function: contexts rendered both ways."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from sysprompt_core.library import FragmentVariant, MemorySource, Override, VariantKey
from sysprompt_core.releases import ImpactContext, Side, impact_matrix
from sysprompt_core.tokens import encoding
from sysprompt_core.variables import ResolveContext, ResolverOptions
from tests.core.variables.fragment_support import CountingSource, library, variant

NOW = datetime(2026, 11, 23, 9, 15, tzinfo=UTC)


def context(**fields: object) -> ResolveContext:
    fields.setdefault("cwd", "/home/ada/project")
    fields.setdefault("server_resolves", frozenset({"prompt", "system"}))
    return ResolveContext(now=NOW, **fields)  # type: ignore[arg-type]


def side(template: str, texts: dict[str, str], *extra: object, compress: bool = False) -> Side:
    return Side(template, library(texts, *extra), compress=compress)  # type: ignore[arg-type]


TEMPLATE = "Root for [prompt:provider].\n[fragment:core]\n[if tool:shell][fragment:shell][endif]"


def test_impact_matrix_renders_each_context_both_ways_and_sums_the_share() -> None:
    before = side(TEMPLATE, {"core": "Core v1.", "shell": "Shell v1."})
    after = side(TEMPLATE, {"core": "Core v1.", "shell": "Shell v2."})
    contexts = [
        ImpactContext("with-shell", context(provider="openai", tools={"shell"}), 30),
        ImpactContext("without", context(provider="openai"), 70),
        ImpactContext("test:fixture", context(provider="anthropic", tools={"shell"}), 0),
    ]

    impact = impact_matrix(contexts, before, after)

    rows = {row.key: row for row in impact.contexts}
    assert [row.key for row in impact.contexts] == ["with-shell", "without", "test:fixture"]
    assert rows["with-shell"].changed and rows["test:fixture"].changed
    assert not rows["without"].changed
    assert rows["without"].diff == ""
    assert rows["with-shell"].diff == (
        "--- before\n+++ after\n@@ -1,3 +1,3 @@\n Root for openai.\n Core v1.\n"
        "-Shell v1.\n\\ No newline at end of file\n+Shell v2.\n\\ No newline at end of file\n"
    )
    summary = impact.summary
    assert (summary.contexts, summary.contexts_changed) == (3, 2)
    assert (summary.conversations, summary.conversations_changed) == (100, 30)
    assert summary.share_changed == 0.3


def test_impact_matrix_counts_chars_tokens_and_shared_prefixes() -> None:
    before = side("Static text.\n[var:team]", {})
    after = side("Static text, longer now.\n[var:team]", {})
    row = impact_matrix(
        [ImpactContext("c", context(variables={"team": "infra"}), 5)], before, after
    ).contexts[0]

    assert (row.prompt_before, row.prompt_after) == (
        "Static text.\ninfra",
        "Static text, longer now.\ninfra",
    )
    assert (row.chars_before, row.chars_after) == (18, 30)
    o200k = encoding("o200k_base")
    assert (row.tokens_before, row.tokens_after) == (
        len(o200k.encode_ordinary("Static text.\ninfra")),
        len(o200k.encode_ordinary("Static text, longer now.\ninfra")),
    )
    assert row.tokens_after is not None and row.tokens_before is not None
    assert row.tokens_change == row.tokens_after - row.tokens_before > 0
    assert row.tokens_error is None
    assert not row.tokens_exact  # no provider: an estimate
    assert (row.shared_prefix_before, row.shared_prefix_after) == (13, 25)
    assert row.prefix_changed


def test_impact_matrix_sees_no_prefix_change_when_only_the_tail_changes() -> None:
    before = side("Shared.\n[prompt:cwd]\nold tail", {})
    after = side("Shared.\n[prompt:cwd]\nnew tail", {})

    impact = impact_matrix([ImpactContext("c", context(), 9)], before, after)

    row = impact.contexts[0]
    assert row.changed and not row.prefix_changed
    assert (impact.summary.prefixes_changed, impact.summary.conversations_prefix_changed) == (0, 0)


def test_impact_matrix_layers_instance_and_thread_overrides_from_each_side() -> None:
    preset = {"persona": "You are [var:who]."}
    before = side("Base.", {**preset}, variant("persona", "Old persona.", "openai"))
    after = side("Base.", {**preset})
    item = ImpactContext(
        "host",
        context(provider="openai", variables={"who": "terse"}),
        1,
        instance=Override(preset="persona"),
        thread=Override(content="Thread.", strategy="append"),
    )

    row = impact_matrix([item], before, after).contexts[0]

    assert row.prompt_before == "Base.\n\nOld persona.\n\nThread."
    assert row.prompt_after == "Base.\n\nYou are terse.\n\nThread."


def test_impact_matrix_lints_the_candidate_for_each_provider_and_model_once() -> None:
    before = side("[fragment:core]", {"core": "x"})
    after = side("[fragment:cor] [if x:y]", {"core": "x"})
    contexts = [ImpactContext(f"c{n}", context(provider="openai"), 1) for n in range(3)]

    impact = impact_matrix(contexts, before, after)

    messages = [d.message for d in impact.contexts[0].diagnostics]
    assert any("cor" in message for message in messages)
    assert any("[endif]" in message or "unmatched" in message for message in messages)
    assert impact.contexts[0].diagnostics is impact.contexts[2].diagnostics


def test_impact_matrix_reads_each_side_from_its_own_library() -> None:
    before_library = CountingSource({"core": "v1"})
    after_library = CountingSource({"core": "v2"})
    contexts = [ImpactContext(f"c{n}", context(model=f"m{n}"), 1) for n in range(5)]

    impact = impact_matrix(
        contexts, Side("[fragment:core]", before_library), Side("[fragment:core]", after_library)
    )

    assert impact.summary.contexts_changed == 5
    assert {(row.prompt_before, row.prompt_after) for row in impact.contexts} == {("v1", "v2")}
    assert before_library.lookups["core"] > 0 and after_library.lookups["core"] > 0


class RewritingSource(MemorySource):
    """A source that rewrites ``path`` the first time a fragment is looked up in it: the
    file changes between the two sides' renders."""

    def __init__(self, path: Path, text: str) -> None:
        super().__init__([variant("core", text)])
        self.path = path

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        self.path.write_text("second read\n")
        return super().variants(name)


def test_impact_matrix_gives_the_other_side_the_values_the_first_read(tmp_path: Path) -> None:
    notes = tmp_path / "NOTES.md"
    notes.write_text("first read\n")
    options = ResolverOptions(allowed_roots=(str(tmp_path),))
    item = ImpactContext("c", ResolveContext(cwd=str(tmp_path), now=NOW, options=options), 1)
    before = side("[fragment:core]", {"core": "[file:NOTES.md] at [system:time]"})
    after = Side("[fragment:core]", RewritingSource(notes, "[file:NOTES.md] at [system:time]!"))

    row = impact_matrix([item], before, after).contexts[0]

    assert notes.read_text() == "second read\n"
    assert row.prompt_before == "first read at 2026-11-23T09:15:00.000Z"
    assert row.prompt_after == row.prompt_before + "!"


def test_impact_matrix_reports_a_side_it_cannot_render() -> None:
    small = ResolverOptions(max_prompt_bytes=10)
    item = ImpactContext("c", context(options=small), 1)

    row = impact_matrix([item], side("short", {}), side("x" * 100, {})).contexts[0]

    assert row.prompt_before == "short"
    assert row.prompt_after is None
    assert row.problem is not None and row.problem.startswith("after: ")
    assert row.changed


def test_impact_matrix_compresses_a_side_that_says_so() -> None:
    row = impact_matrix(
        [ImpactContext("c", context(), 1)],
        side("##  Title\n\n\n- **Rule**: one", {}),
        side("##  Title\n\n\n- **Rule**: one", {}, compress=True),
    ).contexts[0]

    assert row.prompt_after == "# Title\n\n- Rule: one"


CHINESE = "修改文件之前，请先阅读说明。请用中文回答，并保持简洁。" * 20


def test_impact_matrix_counts_tokens_for_each_contexts_provider_and_model() -> None:
    before = side("[var:text]", {})
    after = side("[var:text]\n再见。", {})
    values = {"text": CHINESE}
    contexts = [
        ImpactContext("gpt-4o", context(provider="openai", model="gpt-4o", variables=values)),
        ImpactContext("gpt-4", context(provider="openai", model="gpt-4", variables=values)),
        ImpactContext(
            "claude",
            context(provider="anthropic", model="claude-sonnet-4-5", variables=values),
        ),
    ]

    rows = {row.key: row for row in impact_matrix(contexts, before, after).contexts}

    for key, name, exact in (
        ("gpt-4o", "o200k_base", True),
        ("gpt-4", "cl100k_base", True),
        ("claude", "o200k_base", False),
    ):
        row = rows[key]
        tokenizer = encoding(name)
        assert row.tokens_before == len(tokenizer.encode_ordinary(CHINESE)), key
        assert row.tokens_after == len(tokenizer.encode_ordinary(CHINESE + "\n再见。")), key
        assert row.tokens_exact is exact, key
        assert row.counted_before.encoding == name, key
    # Characters ÷ 4 is far off for Chinese: the counts are not that.
    assert rows["gpt-4o"].tokens_before != -(-len(CHINESE) // 4)
    assert rows["gpt-4o"].tokens_before != rows["gpt-4"].tokens_before


class CountingRewriter(MemorySource):
    """A source that rewrites ``path`` at every fragment look-up from the second on."""

    def __init__(self, path: Path, text: str) -> None:
        super().__init__([variant("core", text)])
        self.path = path
        self.lookups = 0

    def variants(self, name: str) -> Mapping[VariantKey, FragmentVariant]:
        self.lookups += 1
        if self.lookups > 1:
            self.path.write_text(f"read {self.lookups}\n")
        return super().variants(name)


def test_impact_matrix_reads_a_place_once_for_every_context_there(tmp_path: Path) -> None:
    notes = tmp_path / "NOTES.md"
    notes.write_text("first read\n")
    options = ResolverOptions(allowed_roots=(str(tmp_path),))
    here = ResolveContext(cwd=str(tmp_path), now=NOW, options=options)
    contexts = [
        ImpactContext("own", dataclasses.replace(here, supplied={"file:NOTES.md": "mine"})),
        ImpactContext("a", dataclasses.replace(here, model="a")),
        ImpactContext("b", dataclasses.replace(here, model="b")),
    ]
    before = Side("[fragment:core]", CountingRewriter(notes, "[file:NOTES.md]"))

    rows = impact_matrix(contexts, before, side("[fragment:core]", {"core": "x"})).contexts

    assert notes.read_text() == "read 3\n"
    assert [row.prompt_before for row in rows] == ["mine", "read 2", "read 2"]
