"""What the pages say: a provider variant's installer version is "the shipped default",
not "(default)"; a text override's strategy offers no "preset's own"; the editor has
one History control (the tab)."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from sysprompt.accounts import services as accounts
from sysprompt.library import selectors, services
from sysprompt_core.library import TreeRecord
from tests.editor.library_support import htmx, save, web


def options(page: str, name: str) -> list[str]:
    """The option labels of the first ``<select name=…>`` on the page."""
    found = re.search(rf'<select [^>]*name="{name}"[^>]*>(.*?)</select>', page, re.S)
    assert found is not None, f"no select named {name}"
    return [
        html.unescape(label)
        for label in re.findall(r"<option [^>]*>([^<]*)</option>", found.group(1))
    ]


def test_provider_variant_installer_version_says_shipped_default(author_web: Client) -> None:
    services.library_install(shipped=[TreeRecord("core", "anthropic", None, "For Claude.\n")])

    page = author_web.get("/library/core?provider=anthropic").content.decode()
    history = author_web.get(
        "/library/core/-/history?provider=anthropic", headers=htmx()
    ).content.decode()

    overview = re.search(r'<p class="muted" id="overview-version">(.*?)</p>', page, re.S)
    assert overview is not None
    words = " ".join(overview.group(1).split())
    assert "Variant <strong>anthropic</strong>" in words
    assert "by the installer" in words and "(the shipped default)" in words
    assert "(default)" not in words
    assert '<span class="badge badge-source">shipped default</span>' in history
    assert ">default</span>" not in history


def test_imported_version_says_imported(author_web: Client) -> None:
    save("core", "Imported.\n", "openai", source="import")

    page = author_web.get("/library/core?provider=openai").content.decode()
    history = author_web.get(
        "/library/core/-/history?provider=openai", headers=htmx()
    ).content.decode()

    assert "(imported)" in page and "(import)" not in page
    assert '<span class="badge badge-source">imported</span>' in history


@pytest.fixture
def manager_web(author: User) -> Client:
    author.user_permissions.add(Permission.objects.get(codename="add_token"))
    # production is protected: a host's label and override on it are a publisher's
    author.user_permissions.add(Permission.objects.get(codename="publish_release"))
    return web(User.objects.get(pk=author.pk))


def test_text_override_strategy_offers_no_preset_s_own(manager_web: Client) -> None:
    accounts.agent_host_ensure(name="build-01")

    page = manager_web.get("/agent-hosts/").content.decode()

    assert options(page, "text_strategy") == [
        "append (after the template)",
        "prepend (before the template)",
    ]
    assert options(page, "preset_strategy") == [
        "the preset's own (else append)",
        "append (after the template)",
        "prepend (before the template)",
    ]
    assert page.count("the preset&#x27;s own") == 1  # only in the preset's field


@pytest.mark.parametrize(
    ("fields", "stored"),
    [
        ({"text_strategy": "append"}, {"content": "Be brief."}),
        ({"text_strategy": "prepend"}, {"content": "Be brief.", "strategy": "prepend"}),
        # a preset's strategy posted beside a text is not the text's
        ({"preset_strategy": "prepend"}, {"content": "Be brief."}),
    ],
)
def test_text_override_takes_its_own_strategy_field(
    manager_web: Client, fields: dict[str, str], stored: dict[str, str]
) -> None:
    host = accounts.agent_host_ensure(name="build-01").username

    manager_web.post(
        f"/agent-hosts/{host}/override", {"kind": "text", "content": "Be brief.", **fields}
    )

    assert selectors.host_override_state(host).override == stored


def test_text_override_prepend_is_shown_selected(manager_web: Client) -> None:
    host = accounts.agent_host_ensure(name="build-01").username
    manager_web.post(
        f"/agent-hosts/{host}/override",
        {"kind": "text", "content": "Be brief.", "text_strategy": "prepend"},
    )

    page = manager_web.get("/agent-hosts/").content.decode()

    assert '<option value="prepend" selected>prepend (before the template)</option>' in page


@pytest.mark.parametrize("path", ["/editor/", "/library/core/-/edit"])
def test_editor_has_one_history_control(author_web: Client, path: str) -> None:
    save("core", "Core.\n")

    page = author_web.get(path).content.decode()

    assert 'id="history-button"' not in page
    assert len(re.findall(r">History</button>", page)) == 1
    assert 'role="tab" id="tab-history"' in page
