"""Named prompts §2: releases, labels, test contexts, agent hosts' labels and overrides
belong to one prompt; a label name's protection is deployment-wide; the chooser builds
from the prompt's own label, release and template; a fragment lists the prompts that
use it, and the impact of a change of its text covers each of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.db.models import Max
from django.utils import timezone

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.errors import InvalidInput, LabelProtected, PromptForbidden
from sysprompt.events.models import AuditRecord
from sysprompt.library.selectors import host_override, host_override_state
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.models import ConversationPrompt, Prompt, TemplateVersion
from sysprompt.releases import selectors, services
from sysprompt.releases.fragments import fragment_impact, fragment_users
from sysprompt.releases.impact import impact_report
from sysprompt.releases.models import Label, LabelMove, Release
from sysprompt_core.releases import PRODUCTION
from tests.releases.support import save, template

pytestmark = pytest.mark.django_db


def prompt(name: str) -> Prompt:
    now = timezone.now()
    return Prompt.objects.create(name=name, created_at=now, updated_at=now)


def version(of: Prompt, text: str) -> int:
    """A new template version of ``of`` (numbers count across the deployment)."""
    top = TemplateVersion.objects.aggregate(top=Max("number"))["top"] or 0
    TemplateVersion.objects.create(number=top + 1, prompt=of, text=text, created_at=timezone.now())
    return top + 1


@pytest.fixture
def two(writer: User, publisher: User) -> tuple[Prompt, Prompt]:
    """support/triage and coding/reviewer, each with its own template and release 1,
    and its own production target: triage at release 1, reviewer at latest."""
    triage, reviewer = prompt("support/triage"), prompt("coding/reviewer")
    version(triage, "Triage v1.")
    version(reviewer, "Reviewer v1.")
    for each in (triage, reviewer):
        made = services.release_create(author=writer, prompt=each)
        assert made.release.number == 1
    services.label_set(name=PRODUCTION, target={"release": 1}, author=publisher, prompt=triage)
    services.production_ensure(reviewer)
    version(triage, "Triage v2.")
    version(reviewer, "Reviewer v2.")
    return triage, reviewer


def test_release_numbers_count_per_prompt_when_two_prompts_release(
    two: tuple[Prompt, Prompt], writer: User
) -> None:
    triage, reviewer = two

    second = services.release_create(author=writer, prompt=triage).release
    default_first = services.release_create(author=writer).release

    assert second.number == 2
    assert default_first.number == 1
    assert [r.number for r in selectors.releases_list(prompt=triage)] == [2, 1]
    assert [r.number for r in selectors.releases_list(prompt=reviewer)] == [1]
    assert selectors.release_get(1, prompt=reviewer).prompt == "coding/reviewer"
    assert (
        selectors.release_get(2, prompt=triage).template_version
        == (TemplateVersion.objects.filter(prompt=triage).aggregate(top=Max("number"))["top"])
    )


def test_production_targets_are_per_prompt_when_each_is_set(two: tuple[Prompt, Prompt]) -> None:
    triage, reviewer = two

    assert selectors.label_get(PRODUCTION, prompt=triage).target.as_json() == {"release": 1}
    assert selectors.label_get(PRODUCTION, prompt=reviewer).target.as_json() == "latest"
    assert selectors.label_get(PRODUCTION).prompt == "default"


def test_chooser_builds_from_the_prompts_own_label_release_and_template_when_called(
    two: tuple[Prompt, Prompt],
) -> None:
    triage, reviewer = two
    choose = selectors.conversation_build()

    from_triage = choose(conversation_id="c1", owner_id=None, prompt=triage)
    from_reviewer = choose(conversation_id="c1", owner_id=None, prompt=reviewer)

    assert (from_triage.template.text, from_triage.release) == ("Triage v1.", 1)
    assert (from_reviewer.template.text, from_reviewer.release) == ("Reviewer v2.", None)
    built = selectors.conversation_build(prompt=triage)(conversation_id="c1", owner_id=None)
    assert built.template.text == "Triage v1."


def test_chooser_uses_the_hosts_label_of_that_prompt_when_the_call_names_none(
    two: tuple[Prompt, Prompt], publisher: User
) -> None:
    triage, reviewer = two
    agent_host_ensure(name="bot")
    host = User.objects.get(username="bot")
    for each in (triage, reviewer):
        services.label_set(name="canary", target="latest", author=publisher, prompt=each)
    services.host_label_set(username="bot", label="canary", author=publisher, prompt=triage)
    choose = selectors.conversation_build()

    on_triage = choose(conversation_id="c1", owner_id=host.pk, prompt=triage)
    on_reviewer = choose(conversation_id="c1", owner_id=host.pk, prompt=reviewer)

    assert (on_triage.label, on_triage.template.text) == ("canary", "Triage v2.")
    assert on_reviewer.label == PRODUCTION
    assert selectors.host_label_state("bot", prompt=triage).label == "canary"
    assert selectors.host_label_state("bot", prompt=reviewer).label is None
    assert selectors.host_label_state("bot").label is None


def test_host_label_refuses_a_label_of_another_prompt_when_set(
    two: tuple[Prompt, Prompt], publisher: User
) -> None:
    triage, reviewer = two
    agent_host_ensure(name="bot")
    services.label_set(name="canary", target="latest", author=publisher, prompt=triage)

    with pytest.raises(InvalidInput) as refused:
        services.host_label_set(username="bot", label="canary", author=publisher, prompt=reviewer)

    assert refused.value.field == "label"


def test_host_override_is_per_prompt_when_set(two: tuple[Prompt, Prompt], publisher: User) -> None:
    triage, reviewer = two
    agent_host_ensure(name="bot")
    host = User.objects.get(username="bot")
    override = {"strategy": "append", "content": "Only this."}

    services.host_override_set(username="bot", override=override, author=publisher, prompt=triage)

    assert host_override_state("bot", triage.pk).override == override
    assert host_override_state("bot", reviewer.pk).override is None
    assert host_override(host.pk, triage.pk) is not None
    assert host_override(host.pk) is None


def test_protection_of_a_name_applies_to_every_prompt_when_changed(
    two: tuple[Prompt, Prompt], publisher: User, writer: User
) -> None:
    triage, reviewer = two
    for each in (triage, reviewer):
        services.label_set(name="staging", target="latest", author=writer, prompt=each)

    services.label_set(name="staging", protected=True, author=publisher, prompt=triage)

    assert selectors.label_get("staging", prompt=reviewer).protected
    with pytest.raises(LabelProtected):
        services.label_set(name="staging", target={"release": 1}, author=writer, prompt=reviewer)
    services.label_set(name="staging", protected=False, author=publisher, prompt=reviewer)
    assert not selectors.label_get("staging", prompt=triage).protected


def test_a_new_label_is_protected_when_its_name_is_protected_elsewhere(
    two: tuple[Prompt, Prompt], publisher: User
) -> None:
    triage, reviewer = two
    services.label_set(
        name="stable", target="latest", protected=True, author=publisher, prompt=triage
    )

    services.label_set(name="stable", target={"release": 1}, author=publisher, prompt=reviewer)

    assert selectors.label_get("stable", prompt=reviewer).protected


def test_label_move_is_refused_and_audited_when_the_prompt_is_restricted(
    two: tuple[Prompt, Prompt], publisher: User
) -> None:
    triage, _ = two
    triage.editor_groups.add(Group.objects.create(name="support-team"))
    before = list(Label.objects.values_list()), LabelMove.objects.count()

    with pytest.raises(PromptForbidden):
        services.label_set(name=PRODUCTION, target="latest", author=publisher, prompt=triage)

    assert (list(Label.objects.values_list()), LabelMove.objects.count()) == before
    refused = AuditRecord.objects.get(action="prompt.refused")
    assert (refused.actor, refused.object) == ("publisher", "prompt support/triage")


def test_release_is_refused_when_the_prompt_is_restricted_and_allowed_for_a_member(
    two: tuple[Prompt, Prompt], writer: User
) -> None:
    triage, _ = two
    team = Group.objects.create(name="support-team")
    triage.editor_groups.add(team)

    with pytest.raises(PromptForbidden):
        services.release_create(author=writer, prompt=triage)
    assert Release.objects.filter(prompt=triage).count() == 1

    writer.groups.add(team)
    assert services.release_create(author=writer, prompt=triage).release.number == 2


def test_test_contexts_are_per_prompt_when_saved(
    two: tuple[Prompt, Prompt], writer: User, workdir: Path
) -> None:
    triage, reviewer = two

    services.test_context_save(
        name="repo", fields={"cwd": str(workdir)}, author=writer, prompt=triage
    )

    assert [row.name for row in selectors.test_contexts_list(triage)] == ["repo"]
    assert list(selectors.test_contexts_list(reviewer)) == []
    assert services.test_context_delete(name="repo", author=writer, prompt=reviewer) is False


def conversation(of: Prompt, cid: str, cwd: Path, **fields: object) -> None:
    now = timezone.now()
    ConversationPrompt.objects.create(
        prompt=of,
        conversation_id=cid,
        system_prompt="frozen",
        cwd=str(cwd),
        created_at=now,
        constructed_at=now,
        **fields,
    )


def test_impact_report_reads_only_the_prompts_conversations_when_asked(
    two: tuple[Prompt, Prompt], workdir: Path
) -> None:
    triage, reviewer = two
    conversation(triage, "t1", workdir, variables={"who": "triage"})
    conversation(reviewer, "r1", workdir, variables={"who": "reviewer"})

    report = impact_report(label=PRODUCTION, candidate="latest", prompt=triage)

    assert report.prompt == "support/triage"
    assert [row.conversation_id for row in report.contexts] == ["t1"]
    assert report.contexts[0].impact.changed


FRAGMENT_TEMPLATE = "Root.\n[fragment:tone]\n"


def test_used_by_lists_the_prompts_whose_working_copy_or_served_release_include_it(
    two: tuple[Prompt, Prompt], writer: User, publisher: User
) -> None:
    triage, reviewer = two
    save("tone", "Be kind.")
    save("wrapper", "Wrapped: [fragment:tone]")
    version(triage, "Triage includes [fragment:wrapper].")
    version(reviewer, FRAGMENT_TEMPLATE)
    services.label_set(
        name="beta",
        target={"release": services.release_create(author=writer, prompt=reviewer).release.number},
        author=writer,
        prompt=reviewer,
    )
    version(reviewer, "Reviewer without it.")
    template("Default without it.")

    users = fragment_users("tone")

    assert users.names == ["coding/reviewer", "support/triage"]
    by_name = {use.prompt.name: use for use in users.uses}
    assert (by_name["coding/reviewer"].working_copy, by_name["coding/reviewer"].releases) == (
        False,
        frozenset({2}),
    )
    assert by_name["support/triage"].working_copy
    assert fragment_users("wrapper").names == ["support/triage"]
    assert not users.truncated


def test_fragment_impact_covers_every_prompt_and_label_that_includes_it_when_asked(
    two: tuple[Prompt, Prompt], publisher: User, workdir: Path
) -> None:
    triage, reviewer = two
    save("tone", "Be kind.")
    version(triage, FRAGMENT_TEMPLATE)
    version(reviewer, FRAGMENT_TEMPLATE)
    services.label_set(name=PRODUCTION, target="latest", author=publisher, prompt=triage)
    conversation(triage, "t1", workdir)
    conversation(reviewer, "r1", workdir)
    conversation(default_prompt(), "d1", workdir)

    report = fragment_impact(name="tone", text="Be terse.")

    covered = {part.prompt: [label.label for label in part.labels] for part in report.prompts}
    assert covered == {"coding/reviewer": [PRODUCTION], "support/triage": [PRODUCTION]}
    rows = [row for part in report.prompts for label in part.labels for row in label.rows]
    assert sorted(row.conversation_id or "" for row in rows) == ["r1", "t1"]
    assert all(row.impact.changed and "Be terse." in row.impact.diff for row in rows)
    assert report.summary.conversations_changed == 2


def test_audit_records_name_the_prompt_of_each_change_when_two_prompts_change(
    two: tuple[Prompt, Prompt], writer: User, publisher: User, workdir: Path
) -> None:
    triage, _ = two
    first = AuditRecord.objects.order_by("-id").values_list("id", flat=True).first() or 0

    services.release_create(author=writer, prompt=triage)
    services.label_set(name="staging", target={"release": 2}, author=publisher, prompt=triage)
    services.test_context_save(
        name="desk", fields={"cwd": str(workdir)}, author=writer, prompt=triage
    )

    made = AuditRecord.objects.filter(id__gt=first).order_by("id")
    assert [(record.action, record.prompt) for record in made] == [
        ("release.created", "support/triage"),
        ("label.created", "support/triage"),
        ("test_context.created", "support/triage"),
    ]
