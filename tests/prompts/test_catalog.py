"""Prompts looked up by name (sysprompt.prompts.catalog): the rule, aliases, archive,
the default prompt, and group restrictions inherited down the folders."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from sysprompt.errors import InvalidInput, PromptArchived, PromptForbidden, PromptNotFound
from sysprompt.prompts.catalog import (
    default_prompt,
    prompt_editor_groups,
    prompt_editors_check,
    prompt_get,
    prompt_may_edit,
)
from sysprompt.prompts.models import FolderRestriction, Prompt, PromptAlias

pytestmark = pytest.mark.django_db


def make(name: str, *, archived: bool = False) -> Prompt:
    now = timezone.now()
    return Prompt.objects.create(name=name, archived=archived, created_at=now, updated_at=now)


def restrict(folder: str, *groups: str) -> None:
    row = FolderRestriction.objects.create(folder=folder, updated_at=timezone.now())
    row.editor_groups.set([Group.objects.get_or_create(name=g)[0] for g in groups])


def member(username: str, *groups: str) -> User:
    user = User.objects.create_user(username)
    user.groups.set([Group.objects.get_or_create(name=g)[0] for g in groups])
    return user


def test_default_prompt_is_the_one_the_migration_made() -> None:
    migrated = Prompt.objects.get(name="default")

    assert default_prompt().pk == migrated.pk
    assert Prompt.objects.count() == 1


def test_prompt_get_none_means_default() -> None:
    assert prompt_get(None).name == "default"


def test_prompt_get_follows_an_alias() -> None:
    triage = make("support/triage")
    PromptAlias.objects.create(name="support/old", prompt=triage, created_at=timezone.now())

    assert prompt_get("support/old").pk == triage.pk


def test_prompt_get_unknown_is_not_found_naming_it() -> None:
    with pytest.raises(PromptNotFound, match="'nobody/here'"):
        prompt_get("nobody/here")


@pytest.mark.parametrize("name", ["../etc", "A", "a//b", "", "a/-/b"])
def test_prompt_get_bad_name_is_invalid_input_naming_the_field(name: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        prompt_get(name, field="prompt")
    assert refused.value.field == "prompt"


def test_prompt_get_archived_refuses_only_a_new_conversation() -> None:
    make("old/bot", archived=True)

    assert prompt_get("old/bot").archived
    with pytest.raises(PromptArchived, match="'old/bot' is archived"):
        prompt_get("old/bot", for_new_conversation=True)


def test_prompt_unrestricted_may_be_edited_by_anyone_signed_in() -> None:
    assert prompt_may_edit(member("ann"), make("support/triage"))


def test_prompt_folder_restriction_is_inherited_down_the_tree() -> None:
    restrict("support/", "support-team")
    deep = make("support/billing/refunds")

    assert prompt_editor_groups(deep) == [["support-team"]]
    assert prompt_may_edit(member("sue", "support-team"), deep)
    assert not prompt_may_edit(member("carl", "coding"), deep)
    assert not prompt_may_edit(None, deep)
    assert prompt_may_edit(member("carl2", "coding"), make("supportive/bot"))


def test_prompt_every_restriction_on_the_chain_must_be_met() -> None:
    restrict("support/", "support-team")
    restrict("support/billing/", "billing")
    prompt = make("support/billing/refunds")
    prompt.editor_groups.set([Group.objects.get_or_create(name="refund-leads")[0]])

    assert prompt_editor_groups(prompt) == [["support-team"], ["billing"], ["refund-leads"]]
    assert not prompt_may_edit(member("b", "billing", "refund-leads"), prompt)
    assert prompt_may_edit(member("all", "support-team", "billing", "refund-leads"), prompt)


def test_prompt_superuser_passes_every_restriction() -> None:
    restrict("support/", "support-team")
    root = User.objects.create_superuser("root")

    assert prompt_may_edit(root, make("support/triage"))


def test_prompt_editors_check_names_the_groups_it_needs() -> None:
    restrict("support/", "support-team", "leads")

    with pytest.raises(PromptForbidden, match="leads or support-team"):
        prompt_editors_check(member("carl", "coding"), make("support/triage"), action="edit")
