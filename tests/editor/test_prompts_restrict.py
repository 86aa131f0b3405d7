"""The Prompts page's "Who may edit" form: a folder restricted to groups (or lifted)
by a superuser or a holder of the folder restriction permission, audited; anyone else
sees who may edit and gets no form, and a forged POST changes nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from sysprompt.events.models import AuditRecord
from sysprompt.prompts import catalog_selectors, catalog_services
from tests.editor.library_support import web

RESTRICT = "/prompts/-/restrict"


def root() -> User:
    return User.objects.get_or_create(username="root", is_superuser=True)[0]


@pytest.fixture
def support() -> None:
    catalog_services.prompt_create(name="support/triage", author=None)
    Group.objects.create(name="support-leads")
    Group.objects.create(name="tier-2")


@pytest.fixture
def restrictor_web(author: User) -> Client:
    author.user_permissions.add(Permission.objects.get(codename="change_folderrestriction"))
    return web(User.objects.get(pk=author.pk))


def test_restrict_form_sets_groups_and_is_audited(restrictor_web: Client, support: None) -> None:
    page = restrictor_web.get("/prompts/", {"folder": "support"}).content.decode()
    answer = restrictor_web.post(
        RESTRICT, {"folder": "support/", "groups": ["tier-2", "support-leads"]}, follow=True
    )

    assert 'id="restrict-form"' in page and 'value="tier-2"' in page
    assert catalog_selectors.folder_groups("support/") == ["support-leads", "tier-2"]
    assert "Only members of support-leads, tier-2" in answer.content.decode()
    record = AuditRecord.objects.get(action="folder.restricted")
    assert record.actor == "author"
    shown = restrictor_web.get("/prompts/", {"folder": "support"}).content.decode()
    assert 'value="tier-2" checked' in shown


def test_restrict_form_with_no_group_lifts_the_restriction(
    restrictor_web: Client, support: None
) -> None:
    catalog_services.folder_restrict(folder="support/", editor_groups=["tier-2"], author=root())

    answer = restrictor_web.post(RESTRICT, {"folder": "support/"}, follow=True)

    assert catalog_selectors.folder_groups("support/") == []
    assert "is no longer restricted" in answer.content.decode()


def test_restrict_form_absent_and_post_refused_without_the_permission(
    author_web: Client, support: None
) -> None:
    catalog_services.folder_restrict(folder="support/", editor_groups=["tier-2"], author=root())

    page = author_web.get("/prompts/", {"folder": "support"}).content.decode()
    answer = author_web.post(RESTRICT, {"folder": "support/", "groups": []}, follow=True)

    assert 'id="restrict-form"' not in page
    assert "Only members of tier-2" in page
    assert catalog_selectors.folder_groups("support/") == ["tier-2"]
    assert answer.status_code == 200
    assert 'class="message message-error"' in answer.content.decode()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"folder": "support/", "groups": ["nobody"]}, "No group is named &#x27;nobody&#x27;"),
        ({"folder": "Bad Folder/", "groups": ["tier-2"]}, "folder"),
        ({"groups": ["tier-2"]}, "folder"),
    ],
)
def test_restrict_form_refuses_bad_input_and_writes_nothing(
    restrictor_web: Client, support: None, data: dict[str, object], problem: str
) -> None:
    answer = restrictor_web.post(RESTRICT, data, follow=True)

    assert problem in answer.content.decode()
    assert catalog_selectors.folder_groups("support/") == []
    assert not AuditRecord.objects.filter(action="folder.restricted").exists()


def test_restrict_page_without_groups_says_to_make_them(restrictor_web: Client) -> None:
    catalog_services.prompt_create(name="support/triage", author=None)

    page = restrictor_web.get("/prompts/", {"folder": "support"}).content.decode()

    assert "There are no groups yet" in page
