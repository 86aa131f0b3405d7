"""What compaction would change, bounded: identical prompts are not diffed, and a
change too large to show is said to be, with the sizes (the editor's Conversations
page; the diff itself is ``sysprompt_core.diff``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.prompts import services

# A 40,000-line prompt whose lines repeat: difflib took minutes on it, even unchanged.
PERIODIC = "\n".join("- x" if n % 2 else "" for n in range(40_000))


@pytest.fixture
def authors_web(db: None) -> Client:
    accounts.groups_ensure()
    member = User.objects.create_user("grace")
    member.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    client = Client()
    client.force_login(member)
    return client


def _first_turn(workdir: Path, conversation_id: str) -> None:
    host, _ = User.objects.get_or_create(username="host")
    services.conversation_prompt_resolve(
        conversation_id=conversation_id, cwd=str(workdir), user=host
    )


def test_compaction_of_identical_40000_line_prompt_says_nothing_changes(
    authors_web: Client, workdir: Path
) -> None:
    services.template_save(text=PERIODIC)
    _first_turn(workdir, "c1")

    response = authors_web.post("/conversations/c1/compaction", HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert "Nothing: a fresh render gives the same prompt" in response.content.decode()
    assert response.context["preview"].diff.identical


def test_compaction_of_40000_line_prompt_shows_the_change(
    authors_web: Client, workdir: Path
) -> None:
    services.template_save(text=PERIODIC)
    _first_turn(workdir, "c1")
    services.template_save(text="New first line.\n" + PERIODIC + "\nNew last line.")

    response = authors_web.post("/conversations/c1/compaction", HTTP_HX_REQUEST="true")

    diff = response.context["preview"].diff
    assert (diff.added, diff.removed, diff.too_large) == (2, 0, None)
    assert "New last line." in response.content.decode()


def test_compaction_too_large_to_show_says_so_with_sizes(
    authors_web: Client, workdir: Path
) -> None:
    services.template_save(text="Stable.")
    _first_turn(workdir, "c1")
    services.template_save(text="Stable.\n" + "\n".join(f"rule {n}" for n in range(6_000)))

    response = authors_web.post("/conversations/c1/compaction", HTTP_HX_REQUEST="true")

    content = response.content.decode()
    assert response.status_code == 200
    assert "Too large to show a line diff: 6,000 lines added and 0 removed" in content
    assert "old: 1 lines, 7 characters; new: 6,001 lines" in content
    assert "rule 5999" not in content
