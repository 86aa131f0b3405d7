"""The Conversations pages when two agent hosts use the same conversation id (ids are
scoped to the host): each row opens its own host's conversation, an id alone that names
several asks which, and the page's actions act on the conversation shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.prompts import services as prompts
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.prompts.services import template_save
from tests.editor.library_support import web
from tests.releases.support import PUBLISH, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def author_web(db: None) -> Client:
    accounts.groups_ensure()
    member = user("pat", PUBLISH)
    member.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    return web(User.objects.get(pk=member.pk))


@pytest.fixture
def shared(workdir: Path) -> dict[str, ConversationPrompt]:
    """conv-42 of the support bot and conv-42 of the coding agent."""
    made = {}
    for name in ("support-bot", "coding-agent"):
        host = accounts.agent_host_ensure(name=name)
        template_save(text=f"I am the {name}.", author=None)
        made[name] = prompts.conversation_prompt_resolve(
            conversation_id="conv-42",
            cwd=str(workdir),
            user=User.objects.get(username=host.username),
        ).prompt
    return made


def test_conversation_page_of_a_shared_id_opens_each_hosts_own(
    author_web: Client, shared: dict[str, ConversationPrompt]
) -> None:
    listed = author_web.get("/conversations/").content.decode()
    support = author_web.get("/conversations/conv-42/", {"host": "support-bot"})
    coding = author_web.get("/conversations/conv-42/", {"host": "coding-agent"})

    assert "/conversations/conv-42/?host=support-bot" in listed
    assert "/conversations/conv-42/?host=coding-agent" in listed
    assert "I am the support-bot." in support.content.decode()
    assert "I am the coding-agent." in coding.content.decode()


def test_conversation_page_of_a_shared_id_without_host_asks_which(
    author_web: Client, shared: dict[str, ConversationPrompt]
) -> None:
    answer = author_web.get("/conversations/conv-42/", follow=True)

    assert answer.redirect_chain == [("/conversations/?q=conv-42", 302)]
    assert "Several agent hosts use the conversation id" in answer.content.decode()


def test_conversation_forget_of_a_shared_id_forgets_that_hosts_only(
    author_web: Client, shared: dict[str, ConversationPrompt]
) -> None:
    author_web.post("/conversations/conv-42/forget?host=coding-agent")

    left = ConversationPrompt.objects.filter(conversation_id="conv-42")
    assert [row.owner.username for row in left if row.owner] == ["support-bot"]


def test_conversation_page_of_an_unknown_host_is_404(
    author_web: Client, shared: dict[str, ConversationPrompt]
) -> None:
    assert author_web.get("/conversations/conv-42/", {"host": "nobody"}).status_code == 404


def test_conversation_construct_of_a_shared_id_rebuilds_that_hosts_only(
    author_web: Client, shared: dict[str, ConversationPrompt]
) -> None:
    template_save(text="Rebuilt.", author=None)

    answer = author_web.post("/conversations/conv-42/construct?host=coding-agent")

    rows = {
        row.owner.username: row.system_prompt
        for row in ConversationPrompt.objects.filter(conversation_id="conv-42")
        if row.owner
    }
    assert rows == {"support-bot": "I am the support-bot.", "coding-agent": "Rebuilt."}
    assert answer["Location"] == "/conversations/conv-42/?host=coding-agent"
