"""The Conversations pages of a named prompt (``/editor/p/<name>/-/conversations/…``):
its list shows its conversations alone, a conversation reached under another prompt
goes to its own prompt's page, and the page's actions act on the conversation shown.
Today's ``/conversations/`` lists every prompt's, with a Prompt column."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.prompts import catalog_services
from sysprompt.prompts import services as prompts
from sysprompt.prompts.models import ConversationPrompt, Prompt
from sysprompt.prompts.services import template_save
from tests.editor.library_support import web
from tests.releases.support import PUBLISH, user

pytestmark = pytest.mark.django_db

TRIAGE = "/editor/p/support/triage/-/conversations/"
DEFAULT = "/editor/p/default/-/conversations/"


@pytest.fixture
def author_web(db: None) -> Client:
    accounts.groups_ensure()
    member = user("pat", PUBLISH)
    member.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    return web(User.objects.get(pk=member.pk))


def resolve(conversation_id: str, host: str, cwd: Path, prompt: str | None) -> None:
    agent = accounts.agent_host_ensure(name=host)
    prompts.conversation_prompt_resolve(
        conversation_id=conversation_id,
        cwd=str(cwd),
        user=User.objects.get(username=agent.username),
        prompt=prompt,
    )


@pytest.fixture
def triage(workdir: Path) -> Prompt:
    """``support/triage`` with tri-1 (support-bot's) and conv-42 (support-bot's);
    ``default`` with def-1 and conv-42 (coding-agent's)."""
    template_save(text="I am default.", author=None)
    found = catalog_services.prompt_create(name="support/triage", template="I triage.", author=None)
    resolve("tri-1", "support-bot", workdir, "support/triage")
    resolve("conv-42", "support-bot", workdir, "support/triage")
    resolve("def-1", "coding-agent", workdir, None)
    resolve("conv-42", "coding-agent", workdir, None)
    return found


def listed(content: str) -> set[str]:
    return {name for name in ("tri-1", "def-1") if f">{name}</a>" in content}


LISTS = {
    "support/triage's": (TRIAGE, {"tri-1"}),
    "default's": (DEFAULT, {"def-1"}),
    "every prompt's (today's URL)": ("/conversations/", {"tri-1", "def-1"}),
}


@pytest.mark.parametrize("which", LISTS)
def test_conversation_list_of_a_prompt_shows_its_conversations_only(
    author_web: Client, triage: Prompt, which: str
) -> None:
    url, expected = LISTS[which]

    content = author_web.get(url).content.decode()
    rows = author_web.get(url, {"q": "-"}, HTTP_HX_REQUEST="true").content.decode()

    assert listed(content) == expected
    assert listed(rows) == expected


def test_conversation_list_of_every_prompt_has_a_prompt_column(
    author_web: Client, triage: Prompt
) -> None:
    everyone = author_web.get("/conversations/").content.decode()
    scoped = author_web.get(TRIAGE).content.decode()

    assert '<th scope="col">Prompt</th>' in everyone
    assert f'<a href="{TRIAGE}"' in everyone
    assert f'<a href="{DEFAULT}"' in everyone
    # each row opens the conversation under its own prompt
    assert f'href="{TRIAGE}tri-1/?host=support-bot"' in everyone
    assert 'href="/conversations/def-1/?host=coding-agent"' in everyone
    assert '<th scope="col">Prompt</th>' not in scoped
    assert f'href="{TRIAGE}tri-1/?host=support-bot"' in scoped
    assert f'action="{TRIAGE}"' in scoped  # the search stays within the prompt


def test_conversation_list_of_a_prompt_searches_within_it(
    author_web: Client, triage: Prompt
) -> None:
    rows = author_web.get(TRIAGE, {"q": "conv-42"}, HTTP_HX_REQUEST="true").content.decode()

    assert f"{TRIAGE}conv-42/?host=support-bot" in rows
    assert "coding-agent" not in rows


MOVES = {
    "a named prompt's under today's URL": (
        "/conversations/tri-1/",
        f"{TRIAGE}tri-1/?host=support-bot",
    ),
    "default's under a named prompt": (
        f"{TRIAGE}def-1/",
        "/conversations/def-1/?host=coding-agent",
    ),
    "with its host named": (
        f"{DEFAULT}conv-42/?host=support-bot",
        f"{TRIAGE}conv-42/?host=support-bot",
    ),
}


@pytest.mark.parametrize("move", MOVES)
def test_conversation_page_under_another_prompt_redirects_to_its_own(
    author_web: Client, triage: Prompt, move: str
) -> None:
    url, own = MOVES[move]

    answer = author_web.get(url)

    assert (answer.status_code, answer["Location"]) == (302, own)
    assert author_web.get(own).status_code == 200


def test_conversation_page_of_a_prompt_keeps_its_links_within_it(
    author_web: Client, triage: Prompt
) -> None:
    content = author_web.get(f"{TRIAGE}tri-1/", {"host": "support-bot"}).content.decode()

    assert "I triage." in content
    assert 'id="conversation-prompt">support/triage<' in content
    for action in ("construct", "forget", "compaction"):
        assert f'action="{TRIAGE}tri-1/{action}?host=support-bot"' in content
    assert f'<a href="{TRIAGE}">Conversations of' in content


def test_conversation_of_a_shared_id_under_a_prompt_asks_which_in_its_list(
    author_web: Client, triage: Prompt
) -> None:
    answer = author_web.get(f"{TRIAGE}conv-42/")

    assert answer["Location"] == f"{TRIAGE}?q=conv-42"


def owners(conversation_id: str) -> dict[str, tuple[str, str | None]]:
    return {
        row.owner.username: (row.prompt.name, row.system_prompt)
        for row in ConversationPrompt.objects.filter(conversation_id=conversation_id)
        if row.owner
    }


def test_conversation_forget_on_a_prompts_page_forgets_that_conversation_only(
    author_web: Client, triage: Prompt
) -> None:
    answer = author_web.post(f"{TRIAGE}conv-42/forget?host=support-bot")

    assert answer["Location"] == TRIAGE
    assert owners("conv-42") == {"coding-agent": ("default", "I am default.")}
    assert ConversationPrompt.objects.filter(conversation_id="tri-1").exists()


def test_conversation_construct_on_a_prompts_page_rebuilds_that_conversation_only(
    author_web: Client, triage: Prompt
) -> None:
    template_save(text="I triage better.", author=None, prompt=triage)
    template_save(text="Default, changed.", author=None)

    answer = author_web.post(f"{TRIAGE}conv-42/construct?host=support-bot", follow=True)

    assert answer.redirect_chain == [(f"{TRIAGE}conv-42/?host=support-bot", 302)]
    assert "Re-constructed from what production serves now" in answer.content.decode()
    assert owners("conv-42") == {
        "support-bot": ("support/triage", "I triage better."),
        "coding-agent": ("default", "I am default."),
    }


def test_conversation_compaction_on_a_prompts_page_renders_its_prompt(
    author_web: Client, triage: Prompt
) -> None:
    template_save(text="I triage better.", author=None, prompt=triage)

    answer = author_web.post(f"{TRIAGE}tri-1/compaction?host=support-bot", HTTP_HX_REQUEST="true")

    assert answer.status_code == 200
    assert answer.context["preview"].fresh.prompt == "I triage better."


def test_conversation_action_under_another_prompt_is_made_under_its_own(
    author_web: Client, triage: Prompt
) -> None:
    answer = author_web.post("/conversations/tri-1/forget?host=support-bot")

    assert (answer.status_code, answer["Location"]) == (
        307,
        f"{TRIAGE}tri-1/forget?host=support-bot",
    )
    assert ConversationPrompt.objects.filter(conversation_id="tri-1").exists()
    followed = author_web.post("/conversations/tri-1/forget?host=support-bot", follow=True)
    assert followed.redirect_chain[-1][0] == TRIAGE
    assert not ConversationPrompt.objects.filter(conversation_id="tri-1").exists()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", ""),
        ("get", "tri-1/"),
        ("post", "tri-1/forget"),
        ("post", "tri-1/construct"),
        ("post", "tri-1/compaction"),
    ],
)
def test_conversation_pages_of_an_unknown_prompt_are_404(
    author_web: Client, triage: Prompt, method: str, path: str
) -> None:
    answer = getattr(author_web, method)(f"/editor/p/support/nobody/-/conversations/{path}")

    assert answer.status_code == 404
    assert ConversationPrompt.objects.filter(conversation_id="tri-1").exists()


def test_overview_of_a_prompt_counts_its_conversations(
    author_web: Client, triage: Prompt, workdir: Path
) -> None:
    resolve("def-2", "coding-agent", workdir, None)

    scoped = author_web.get("/editor/p/support/triage/-/").content.decode()
    default = author_web.get("/").content.decode()

    assert "2 conversations stored" in scoped
    assert f'<a href="{TRIAGE}" id="overview-conversations">' in scoped
    assert "3 conversations stored" in default
    assert f'<a href="{DEFAULT}" id="overview-conversations">' in default
