"""The Conversations pages say what each conversation was built from — its label, the
release (or latest, the working copy) and the split's arm — and what a fresh render
(compaction, Re-construct) would be built from now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.prompts import services as prompts
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.releases import selectors, services
from tests.editor.library_support import web
from tests.releases.support import PUBLISH, user


@pytest.fixture
def publisher(db: None) -> User:
    """A prompt author (sees and re-constructs every conversation) who may move
    production."""
    accounts.groups_ensure()
    services.production_ensure()
    member = user("pat", PUBLISH)
    member.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    return User.objects.get(pk=member.pk)


@pytest.fixture
def publisher_web(publisher: User) -> Client:
    return web(publisher)


def resolve(workdir: Path, conversation_id: str, label: str | None = None) -> ConversationPrompt:
    """A first turn, as an agent host makes it (naming ``label``, else production)."""
    host, _ = User.objects.get_or_create(username="host")
    return prompts.conversation_prompt_resolve(
        conversation_id=conversation_id,
        cwd=str(workdir),
        user=host,
        build=selectors.conversation_build(label),
    ).prompt


@pytest.fixture
def built(publisher: User, workdir: Path) -> dict[str, ConversationPrompt]:
    """release 1 ("one"); production → release 1, canary a split of release 1 and
    latest; then the working copy says "two". One conversation on each label."""
    prompts.template_save(text="one")
    services.release_create(author=publisher)
    services.label_set(name="production", target={"release": 1}, author=publisher)
    split = {"split": [{"release": 1, "weight": 5000}, {"release": "latest", "weight": 5000}]}
    services.label_set(name="canary", target=split, author=publisher)
    prompts.template_save(text="two")
    return {"prod": resolve(workdir, "prod-1"), "canary": resolve(workdir, "canary-1", "canary")}


def cells(content: str, conversation_id: str) -> list[str]:
    """The text of a conversation's row in the list, cell by cell."""
    row = re.search(rf"<tr>\s*<th[^>]*>.*?>{conversation_id}</a></th>(.*?)</tr>", content, re.S)
    assert row is not None, content
    return [
        re.sub(r"<[^>]+>", "", cell).strip()
        for cell in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.S)
    ]


def test_conversation_list_shows_label_release_and_arm(
    publisher_web: Client, built: dict[str, ConversationPrompt]
) -> None:
    content = publisher_web.get("/conversations/").content.decode()

    assert '<th scope="col">Label</th>' in content
    assert cells(content, "prod-1")[:3] == ["production", "1", "—"]
    canary = built["canary"]
    assert canary.arm is not None
    release = "1" if canary.arm == 0 else "latest"
    assert cells(content, "canary-1")[:3] == ["canary", release, str(canary.arm)]


def test_conversation_page_shows_label_release_and_arm(
    publisher_web: Client, built: dict[str, ConversationPrompt]
) -> None:
    prod = publisher_web.get("/conversations/prod-1/").content.decode()
    canary = publisher_web.get("/conversations/canary-1/").content.decode()

    assert 'id="conversation-label">production<' in prod
    assert 'id="conversation-release">1<' in prod
    assert 'id="conversation-arm">— (not a split)<' in prod
    assert 'id="conversation-label">canary<' in canary
    arm = built["canary"].arm
    assert f'id="conversation-arm">{arm} <' in canary
    release = "1" if arm == 0 else "latest (the working copy)"
    assert f'id="conversation-release">{release}<' in canary


def test_conversation_page_names_what_the_fresh_render_is(
    publisher_web: Client, publisher: User, built: dict[str, ConversationPrompt]
) -> None:
    page = publisher_web.get("/conversations/prod-1/").content.decode()
    assert "A fresh render of <strong>what production serves now: release 1</strong>" in page
    assert "a fresh render of what production serves now: release 1?" in page  # the confirm

    services.label_set(name="production", target="latest", author=publisher)
    compaction = publisher_web.post("/conversations/prod-1/compaction", HTTP_HX_REQUEST="true")
    content = compaction.content.decode()
    assert (
        "The fresh render is of what production serves now: the working copy (latest)." in content
    )
    assert compaction.context["preview"].fresh.prompt == "two"

    answer = publisher_web.post("/conversations/prod-1/construct", follow=True)
    assert (
        "Re-constructed from what production serves now: the working copy (latest)."
        in answer.content.decode()
    )
    stored = ConversationPrompt.objects.get(conversation_id="prod-1")
    assert (stored.label, stored.release, stored.system_prompt) == ("production", None, "two")
