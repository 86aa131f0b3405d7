"""The lint hint: a per-conversation value early, with much text after it uncached."""

from __future__ import annotations

import pytest

from sysprompt_core.library import library_lint
from sysprompt_core.template.prefix_lint import EARLY_MIN_AFTER, early_prefix_end
from sysprompt_core.variables import is_per_conversation

LONG = "Rules of the house.\n" * 60  # 1,200 characters


def hint_messages(text: str) -> list[str]:
    return [d.message for d in library_lint(text, library=None) if "shared prefix" in d.message]


def test_early_per_conversation_value_gets_a_hint_where_it_stands() -> None:
    text = "You are an agent.\nToday is [system:date].\n" + LONG
    diagnostics = [d for d in library_lint(text, library=None) if "shared prefix" in d.message]
    assert len(diagnostics) == 1
    hint = diagnostics[0]
    assert (hint.line, hint.column, hint.end_column, hint.severity) == (2, 10, 23, "warning")
    assert hint.message == (
        "the shared prefix ends here at [system:date]; 1,202 characters after it are "
        "re-sent uncached for each conversation: move it later"
    )


def test_a_block_on_a_per_conversation_value_counts() -> None:
    text = "Intro.\n[if git:branch]\nOn [git:branch].\n[endif]\n" + LONG
    tags = len("[if git:branch]") + len("[git:branch]") + len("[endif]")
    after = len(text) - tags - len("Intro.\n")
    assert hint_messages(text) == [
        f"the shared prefix ends here at [if git:branch]; {after:,} characters after it "
        "are re-sent uncached for each conversation: move it later"
    ]


@pytest.mark.parametrize(
    "text",
    [
        LONG + "Today is [system:date].",  # late: fine
        "[system:date]" + "x" * EARLY_MIN_AFTER,  # not much after it (1,000: not more)
        "[prompt:model] [system:os]\n" + LONG,  # nothing per conversation
        "[if system:date literal\n" + LONG,  # literal text is no tag
        "[if system:date] never closed\n" + LONG,  # an unmatched [if] is literal
    ],
)
def test_no_hint(text: str) -> None:
    assert hint_messages(text) == []


def test_the_share_of_text_before_it_counts() -> None:
    before = "a" * 790
    after = "b" * 1210
    assert early_prefix_end(before + "[var:x]" + after, is_per_conversation) is not None
    before, after = "a" * 1700, "b" * 1100  # 61 % before: still early
    assert early_prefix_end(before + "[var:x]" + after, is_per_conversation) is not None
    before, after = "a" * 4500, "b" * 1100  # 80 % before: late enough
    assert early_prefix_end(before + "[var:x]" + after, is_per_conversation) is None


def test_only_the_first_per_conversation_tag_is_hinted() -> None:
    text = "[system:time] [var:x]\n" + LONG
    assert len(hint_messages(text)) == 1


def test_prefix_hint_can_be_turned_off() -> None:
    text = "[system:time]\n" + LONG
    assert library_lint(text, library=None, prefix_hint=False) == []
