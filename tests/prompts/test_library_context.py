"""Conversations built with the library: host context, variants, overrides, the record
of fragments used, and the cache promise under library edits."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import InvalidInput
from sysprompt.library import services as library
from sysprompt.prompts import rendering, services, validation
from sysprompt.prompts.models import ConversationPrompt

pytestmark = pytest.mark.django_db

TEMPLATE = "Base for [prompt:provider].\n[fragment:core]\n[if tool:shell]Shell is on.\n[endif]"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def owner(db: None) -> User:
    return User.objects.create_user("owner")


@pytest.fixture(autouse=True)
def _library(db: None) -> None:
    services.template_save(text=TEMPLATE)
    library.variant_save(name="core", text="Core default.", author=None)
    library.variant_save(name="core", provider="Anthropic", text="Core for Claude.", author=None)
    library.variant_save(
        name="core",
        provider="anthropic",
        model="Claude Sonnet 4.5",
        text="Core for Sonnet.",
        author=None,
    )
    library.variant_save(
        name="persona",
        text="You are [var:who].",
        defaults={"who": "a careful engineer"},
        strategy="prepend",
        author=None,
    )


def host(**fields: Any) -> validation.HostContext:
    return validation.host_context_check(**fields)


def construct(
    workdir: Path, owner: User, *, model: str = "", cid: str = "c1", **fields: Any
) -> ConversationPrompt:
    return services.conversation_prompt_construct(
        conversation_id=cid, cwd=str(workdir), model=model, user=owner, host=host(**fields)
    ).prompt


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        (None, "", "Core default."),
        ("openai", "gpt-5", "Core default."),
        ("anthropic", "", "Core for Claude."),
        ("ANTHROPIC", "claude-haiku", "Core for Claude."),
        ("anthropic", "claude-sonnet-4.5", "Core for Sonnet."),
    ],
)
def test_construct_variant_follows_provider_and_model(
    workdir: Path, owner: User, provider: str | None, model: str, expected: str
) -> None:
    row = construct(workdir, owner, model=model, provider=provider)

    assert row.system_prompt is not None
    assert f"\n{expected}\n" in row.system_prompt
    assert [use["name"] for use in row.fragments_used] == ["core"]


def test_construct_stores_the_host_context(workdir: Path, owner: User) -> None:
    row = construct(
        workdir,
        owner,
        provider="anthropic",
        tools=["shell", "grep"],
        variables={"who": "a pirate"},
        override={"preset": "persona"},
    )

    row.refresh_from_db()
    assert (row.provider, row.tools, row.variables) == (
        "anthropic",
        ["shell", "grep"],
        {"who": "a pirate"},
    )
    assert row.override == {"preset": "persona"}
    assert row.system_prompt is not None
    assert row.system_prompt.startswith("You are a pirate.\n\nBase for anthropic.")
    assert "Shell is on." in row.system_prompt
    assert {use["name"] for use in row.fragments_used} == {"core", "persona"}


@pytest.mark.parametrize(
    ("override", "expected_start", "expected_end"),
    [
        ("Be brief.", "Base for", "Be brief."),
        ({"content": "First.", "strategy": "prepend"}, "First.\n\nBase for", None),
        ({"preset": "persona"}, "You are a careful engineer.\n\nBase", None),
        ({"preset": "persona", "variables": {"who": "terse"}}, "You are terse.", None),
        ({"preset": "persona", "strategy": "append"}, "Base for", "You are a careful engineer."),
    ],
)
def test_construct_thread_override_shapes(
    workdir: Path,
    owner: User,
    override: object,
    expected_start: str,
    expected_end: str | None,
) -> None:
    prompt = construct(workdir, owner, override=override).system_prompt

    assert prompt is not None
    assert prompt.startswith(expected_start)
    if expected_end is not None:
        assert prompt.endswith("\n\n" + expected_end)


def test_request_variables_win_over_override_variables_and_defaults(
    workdir: Path, owner: User
) -> None:
    prompt = construct(
        workdir,
        owner,
        variables={"who": "from the request"},
        override={"preset": "persona", "variables": {"who": "from the override"}},
    ).system_prompt

    assert prompt is not None and prompt.startswith("You are from the request.")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"provider": 3}, "provider"),
        ({"provider": "x" * 201}, "provider"),
        ({"tools": "shell"}, "tools"),
        ({"tools": ["ok"] * 201}, "tools"),
        ({"tools": ["a]b"]}, "tools"),
        ({"variables": ["x"]}, "variables"),
        ({"variables": {"who": 1}}, "variables.who"),
        ({"variables": {"who": "x" * 65_537}}, "variables.who"),
        ({"override": {"content": "x", "strategy": "replace"}}, "override.strategy"),
        ({"override": {"content": "x", "preset": "persona"}}, "override"),
        ({"call_override": 5}, "call_override"),
    ],
)
def test_host_context_check_refuses_naming_the_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        host(**fields)

    assert caught.value.field == field


def test_invalid_context_stores_nothing(workdir: Path, owner: User) -> None:
    with pytest.raises(InvalidInput):
        construct(workdir, owner, override={"preset": "missing"})

    assert not ConversationPrompt.objects.exists()


def test_compact_reapplies_the_stored_thread_override(workdir: Path, owner: User) -> None:
    construct(workdir, owner, override="Stay on task.", provider="anthropic")

    compacted = services.conversation_prompt_compact(
        conversation_id="c1", cwd=str(workdir), user=owner, host=host()
    )

    stored = compacted.stored.prompt
    assert stored.system_prompt is not None
    assert stored.system_prompt.endswith("\n\nStay on task.")
    assert "Core for Claude." in stored.system_prompt
    assert stored.override == "Stay on task."


def test_compact_with_another_override_replaces_the_thread_override(
    workdir: Path, owner: User
) -> None:
    construct(workdir, owner, override="Old rule.")

    compacted = services.conversation_prompt_compact(
        conversation_id="c1", cwd=str(workdir), user=owner, host=host(override="New rule.")
    )
    prompt = compacted.stored.prompt.system_prompt

    assert prompt is not None and prompt.endswith("New rule.") and "Old rule." not in prompt


def test_compact_with_null_override_removes_it(workdir: Path, owner: User) -> None:
    construct(workdir, owner, override="Old rule.")

    compacted = services.conversation_prompt_compact(
        conversation_id="c1", cwd=str(workdir), user=owner, host=host(override=None)
    )

    assert "Old rule." not in (compacted.stored.prompt.system_prompt or "")
    assert compacted.stored.prompt.override is None


def test_call_override_answers_once_and_is_never_stored(workdir: Path, owner: User) -> None:
    first = services.conversation_prompt_resolve(
        conversation_id="c1", cwd=str(workdir), user=owner, host=host()
    )
    frozen = first.prompt.system_prompt
    assert frozen is not None

    turn = services.conversation_prompt_resolve(
        conversation_id="c1",
        cwd=str(workdir),
        user=owner,
        host=host(call_override={"content": "Just this turn.", "strategy": "prepend"}),
    )

    assert turn.call is not None
    assert turn.call.prompt == "Just this turn.\n\n" + frozen
    assert turn.call.sha256 == sha256("Just this turn.\n\n" + frozen)
    assert turn.prompt.system_prompt == frozen
    assert ConversationPrompt.objects.get().system_prompt == frozen


def test_library_edits_change_no_frozen_prompt_until_construct(workdir: Path, owner: User) -> None:
    first = services.conversation_prompt_resolve(
        conversation_id="c1",
        cwd=str(workdir),
        model="claude-sonnet-4-5",
        user=owner,
        host=host(provider="anthropic", override={"preset": "persona"}),
    ).prompt
    frozen, digest = first.system_prompt, first.sha256

    library.variant_save(name="core", text="Edited default.", author=None)
    library.variant_save(
        name="core", provider="anthropic", model="claude-sonnet-4-5", text="Edited.", author=None
    )
    library.variant_save(
        name="persona",
        text="Edited persona [var:who].",
        defaults={"who": "a careful engineer"},
        strategy="prepend",
        author=None,
    )
    services.template_save(text="Edited root.")
    for _ in range(20):
        turn = services.conversation_prompt_resolve(
            conversation_id="c1", cwd=str(workdir), user=owner, host=host()
        ).prompt
        assert (turn.system_prompt, turn.sha256) == (frozen, digest)

    rebuilt = services.conversation_prompt_construct(
        conversation_id="c1", cwd=str(workdir), model="claude-sonnet-4-5", user=owner, host=host()
    ).prompt
    assert rebuilt.system_prompt == "Edited persona a careful engineer.\n\nEdited root."


def test_template_compress_applies_before_parsing(workdir: Path, owner: User) -> None:
    services.template_save(text="## Title\n\n\n-   **Rule**:   keep   it\n", compress=True)

    assert construct(workdir, owner).system_prompt == "# Title\n\n- Rule: keep it"


def test_preview_of_a_fragment_lists_the_variant_used(workdir: Path) -> None:
    preview = rendering.template_preview(
        cwd=str(workdir),
        model="claude-sonnet-4.5",
        fragment="core",
        host=host(provider="Anthropic"),
    )

    assert preview.rendered.prompt == "Core for Sonnet."
    [use] = preview.rendered.fragments_used
    assert (use.name, use.provider, use.model) == ("core", "anthropic", "claude-sonnet-4-5")


def test_preview_of_an_unknown_fragment_is_refused(workdir: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        rendering.template_preview(cwd=str(workdir), fragment="nope")

    assert caught.value.field == "fragment"


def test_preview_reports_compression(workdir: Path) -> None:
    preview = rendering.template_preview(
        cwd=str(workdir), template="##  A\n\n\n\nb   c\n", compress_template=True
    )

    assert preview.rendered.prompt == "# A\n\nb c"
    assert preview.compression is not None
    assert (preview.compression.chars_before, preview.compression.chars_after) == (15, 8)


def test_preview_lints_unknown_fragments(workdir: Path) -> None:
    preview = rendering.template_preview(cwd=str(workdir), template="[fragment:cor]")

    assert any("cor" in d.message for d in preview.diagnostics)


LIBRARY_EXAMPLE = """[fragment:core]
[if git:branch]
[fragment:env/git-repository]
[endif]
[if tool:shell]
[fragment:tools/shell]
[endif]
Project: [var:project]
"""


def test_library_example_renders_as_docs_library_says(workdir: Path, owner: User) -> None:
    services.template_save(text=LIBRARY_EXAMPLE)
    library.variant_delete(
        name="core", provider="anthropic", model="claude-sonnet-4-5", author=None
    )  # the example (docs/library.md) has no model variant
    library.variant_save(name="core", provider="anthropic", text="Core for Claude.\n", author=None)
    library.variant_save(name="env/git-repository", text="On branch [git:branch].", author=None)
    library.variant_save(name="tools/shell", text="Run commands with the shell.\n", author=None)
    library.variant_save(
        name="persona",
        text="You are [var:who].",
        defaults={"who": "a careful reviewer"},
        strategy="prepend",
        author=None,
    )
    body: dict[str, Any] = {
        "provider": "anthropic",
        "tools": ["shell", "read-file"],
        "variables": {"project": "billing"},
        "override": {"preset": "persona", "variables": {"who": "a terse reviewer"}},
    }

    row = construct(workdir, owner, model="claude-sonnet-4.5", **body)

    # Not a repository: no git section.
    assert row.system_prompt == (
        "You are a terse reviewer.\n\n"
        "Core for Claude.\nRun commands with the shell.\nProject: billing\n"
    )
