"""Audit records and webhook events name their prompt (named-prompts §2): the audit
log filtered by ``?prompt=`` (a name or a folder), a subscription's ``prompts`` (names
or folders; [] = all) checked with the name rule, and deliveries only to subscriptions
whose prompts match the event's (events of no prompt go to every one), sent to real
receivers."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt.events.models import AuditRecord, Webhook
from sysprompt.library import services as library
from sysprompt.prompts.models import Prompt
from sysprompt.prompts.services import template_save
from tests.events.support import ALLOW_LOCAL, Received, receiving, run_queued

WEBHOOKS = "/api/webhooks"
AUDIT = "/api/audit"


@pytest.fixture(autouse=True)
def allow_local(settings: Settings) -> None:
    settings.SYSPROMPT = dict(ALLOW_LOCAL)


def named(name: str) -> Prompt:
    now = timezone.now()
    return Prompt.objects.create(name=name, created_at=now, updated_at=now)


def test_webhook_prompts_are_stored_shown_and_changed(author_client: APIClient) -> None:
    created = author_client.post(
        WEBHOOKS,
        {
            "url": "https://ci.example.com/hooks",
            "events": ["template.saved"],
            "prompts": ["support/", "coding/reviewer", "support"],
        },
        format="json",
    )
    default = author_client.post(
        WEBHOOKS,
        {"url": "https://ci.example.com/all", "events": ["template.saved"]},
        format="json",
    )

    assert created.status_code == 201, created.json()
    assert created.json()["prompts"] == ["coding/reviewer", "support", "support/"]
    assert default.json()["prompts"] == []
    url = f"{WEBHOOKS}/{created.json()['id']}"
    assert author_client.get(url).json()["prompts"] == ["coding/reviewer", "support", "support/"]
    changed = author_client.put(url, {"prompts": []}, format="json")
    assert changed.status_code == 200
    assert changed.json()["prompts"] == []
    listed = author_client.get(WEBHOOKS).json()
    assert [hook["prompts"] for hook in listed] == [[], []]
    record = AuditRecord.objects.filter(action="webhook.updated").get()
    assert "prompts to all" in record.summary


@pytest.mark.parametrize(
    "prompts",
    [
        ["Support/"],
        ["support//"],
        ["../x"],
        ["/etc/passwd"],
        ["a\\b"],
        "support/",
        [3],
        ["x" * 201],
    ],
)
def test_webhook_prompts_that_break_the_rule_are_400_naming_prompts(
    author_client: APIClient, prompts: object
) -> None:
    refused = author_client.post(
        WEBHOOKS,
        {"url": "https://ci.example.com/hooks", "events": ["template.saved"], "prompts": prompts},
        format="json",
    )
    hook = Webhook.objects.create(
        url="https://ci.example.com/x",
        events=["template.saved"],
        secret="whsec_x",
        created_at=timezone.now(),
        updated_at=timezone.now(),
    )
    refused_update = author_client.put(f"{WEBHOOKS}/{hook.pk}", {"prompts": prompts}, format="json")

    assert refused.status_code == 400
    assert "prompts" in refused.json()
    assert refused_update.status_code == 400
    assert "prompts" in refused_update.json()
    assert list(Webhook.objects.values_list("prompts", flat=True)) == [[]]


def test_events_reach_only_subscriptions_whose_prompts_match(
    author: User, author_client: APIClient
) -> None:
    triage = named("support/triage")
    reviewer = named("coding/reviewer")
    with receiving() as support, receiving() as coding, receiving() as everyone:
        for receiver, prompts in (
            (support, ["support/"]),
            (coding, ["coding/reviewer"]),
            (everyone, []),
        ):
            made = author_client.post(
                WEBHOOKS,
                {
                    "url": receiver.url,
                    "events": ["template.saved", "fragment.saved"],
                    "prompts": prompts,
                },
                format="json",
            )
            assert made.status_code == 201, made.json()
            receiver.secret = made.json()["secret"]

        template_save(text="Triage.", author=author, prompt=triage)
        template_save(text="Review.", author=author, prompt=reviewer)
        template_save(text="Default.", author=author)
        library.variant_save(name="core", text="Core.", author=author)
        run_queued()

        got_support = support.wait_for(2)
        got_coding = coding.wait_for(2)
        got_everyone = everyone.wait_for(4)

    def shown(items: list[Received]) -> list[tuple[str, str | None]]:
        verified = [item.verified for item in items]
        return [(v["type"], v["data"].get("prompt")) for v in verified if v is not None]

    assert shown(got_support) == [("template.saved", "support/triage"), ("fragment.saved", None)]
    assert shown(got_coding) == [("template.saved", "coding/reviewer"), ("fragment.saved", None)]
    assert shown(got_everyone) == [
        ("template.saved", "support/triage"),
        ("template.saved", "coding/reviewer"),
        ("template.saved", "default"),
        ("fragment.saved", None),
    ]


def test_audit_filters_by_prompt_and_folder(author: User, author_client: APIClient) -> None:
    triage = named("support/triage")
    refunds = named("support/refunds")
    reviewer = named("coding/reviewer")
    template_save(text="T.", author=author, prompt=triage)
    template_save(text="R.", author=author, prompt=refunds)
    template_save(text="C.", author=author, prompt=reviewer)
    library.variant_save(name="core", text="Core.", author=author)

    one = author_client.get(AUDIT, {"prompt": "support/triage"}).json()["results"]
    folder = author_client.get(AUDIT, {"prompt": "support/"}).json()["results"]
    everything = author_client.get(AUDIT, {"action": "fragment.saved"}).json()["results"]
    bad = author_client.get(AUDIT, {"prompt": "Support"})
    bad_folder = author_client.get(AUDIT, {"prompt": "a//"})

    assert [(r["prompt"], r["action"]) for r in one] == [("support/triage", "template.saved")]
    assert [r["prompt"] for r in folder] == ["support/refunds", "support/triage"]
    assert [r["prompt"] for r in everything] == [None]
    assert (bad.status_code, list(bad.json())) == (400, ["prompt"])
    assert (bad_folder.status_code, list(bad_folder.json())) == (400, ["prompt"])
