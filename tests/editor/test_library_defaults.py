"""A newer shipped default on a variant's page: the diff shipped-vs-yours, Adopt
default and Keep mine; and the host context on a conversation's page."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import Permission, User
from django.test import Client

from sysprompt.library import selectors, services
from sysprompt.prompts import services as prompts
from sysprompt.prompts.validation import host_context_check
from sysprompt_core.library import TreeRecord
from tests.editor.library_support import SCRIPT, save, web

NEWER = "You are a coding agent, as shipped by a newer release.\n"


def edited_core(author: User) -> selectors.VariantState:
    """core installed, edited by ``author``, then a newer release shipped ``NEWER``: the
    variant's state."""
    services.library_install()
    shipped = selectors.variant_current("core")
    assert shipped is not None and not shipped.edited
    save("core", "My own core.\n", author=author)
    services.library_install(shipped=[TreeRecord("core", None, None, NEWER)])
    newer = selectors.variant_current("core")
    assert newer is not None and newer.shipped_text == NEWER
    return newer


def test_an_edit_with_nothing_newer_shipped_shows_no_newer_default(
    author_web: Client, author: User
) -> None:
    services.library_install()
    save("core", "My own core.\n", author=author)

    response = author_web.get("/library/core")

    content = response.content.decode()
    assert response.context["newer_default_diff"] is None
    assert 'id="newer-default"' not in content and 'id="adopt-default"' not in content
    assert "badge-edited" in content and "badge-newer" not in content
    assert "badge-newer" not in author_web.get("/library/").content.decode()


def test_newer_default_shows_the_diff_and_both_answers(author_web: Client, author: User) -> None:
    edited_core(author)

    response = author_web.get("/library/core")

    content = response.content.decode()
    diff = response.context["newer_default_diff"]
    assert diff.changed
    assert 'id="adopt-default"' in content and 'id="keep-mine"' in content
    assert "badge-newer" in author_web.get("/library/").content.decode()
    # From your text to the newer release's, not to the text your edit started from.
    assert "My own core." in content and "as shipped by a newer release" in content


def test_adopt_default_takes_the_shipped_text(author_web: Client, author: User) -> None:
    edited_core(author)

    response = author_web.post("/library/core/-/adopt", follow=True)

    state = selectors.variant_current("core")
    assert state is not None and state.text == NEWER and not state.newer_default
    assert response.context["newer_default_diff"] is None
    assert "Adopted the shipped default" in response.content.decode()


def test_keep_mine_pins_the_variant(author_web: Client, author: User) -> None:
    edited_core(author)

    response = author_web.post("/library/core/-/keep-mine", follow=True)

    state = selectors.variant_current("core")
    assert state is not None and state.pinned and state.text == "My own core.\n"
    assert response.context["newer_default_diff"] is None
    assert "badge-pinned" in response.content.decode()


def test_adopt_without_a_shipped_default_says_why(author_web: Client) -> None:
    save("mine", "Only mine.")

    response = author_web.post("/library/mine/-/adopt", follow=True)

    assert "Nothing changed" in response.content.decode()


def test_conversation_page_shows_its_host_context(author: User, workdir: Path) -> None:
    save("env/git", "Git.")
    host = host_context_check(
        provider="anthropic",
        tools=["shell"],
        variables={"who": SCRIPT},
        override={"content": "Thread."},
    )
    prompts.conversation_prompt_resolve(
        conversation_id="c1", cwd=str(workdir), user=author, host=host
    )
    prompts.template_save(text="[fragment:env/git]")
    prompts.conversation_prompt_construct(
        conversation_id="c1", cwd=str(workdir), user=author, host=host
    )
    author.user_permissions.add(Permission.objects.get(codename="view_conversationprompt"))

    page = web(User.objects.get(pk=author.pk)).get("/conversations/c1/")

    content = page.content.decode()
    assert page.status_code == 200
    assert 'id="conversation-provider">anthropic' in content
    assert SCRIPT not in content and "Thread." in content
    assert [row["name"] for row in page.context["fragments_used"]] == ["env/git"]
