"""The editor's webhooks and audit pages with named prompts: a subscription's prompts
(names or folders, checked with the rule) set from the form and shown; the audit log
filtered by a prompt or a folder, with each record's prompt beside its object."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from sysprompt.events.models import Webhook
from sysprompt.prompts.models import Prompt
from sysprompt.prompts.services import template_save

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(client: Client, author: User) -> Client:
    client.force_login(author)
    return client


def named(name: str) -> Prompt:
    now = timezone.now()
    return Prompt.objects.create(name=name, created_at=now, updated_at=now)


def _form(**fields: str) -> dict[str, object]:
    return {"url": "https://ci.example.com/hooks", "events": ["template.saved"], **fields}


def test_webhook_form_sets_and_shows_prompts(page: Client) -> None:
    created = page.post(reverse("editor:webhooks"), _form(prompts="support/, coding/reviewer"))

    assert created.status_code == 201
    hook = Webhook.objects.get()
    assert hook.prompts == ["coding/reviewer", "support/"]
    listed = page.get(reverse("editor:webhooks")).content.decode()
    assert "prompts: coding/reviewer, support/" in listed
    detail = page.get(reverse("editor:webhook", args=[hook.pk])).content.decode()
    assert 'value="coding/reviewer, support/"' in detail
    saved = page.post(reverse("editor:webhook", args=[hook.pk]), _form(prompts="", active="on"))
    assert saved.status_code == 302
    hook.refresh_from_db()
    assert hook.prompts == []


def test_webhook_form_refuses_prompts_that_break_the_rule(page: Client) -> None:
    refused = page.post(reverse("editor:webhooks"), _form(prompts="Support/Triage ../x"))

    assert refused.status_code == 400
    assert 'id="webhook-prompts-error"' in refused.content.decode()
    assert not Webhook.objects.exists()


def test_audit_page_filters_by_prompt_and_folder(page: Client, author: User) -> None:
    template_save(text="T.", author=author, prompt=named("support/triage"))
    template_save(text="C.", author=author, prompt=named("coding/reviewer"))

    folder = page.get(reverse("editor:audit"), {"prompt": "support/"}).content.decode()
    everything = page.get(reverse("editor:audit")).content.decode()
    refused = page.get(reverse("editor:audit"), {"prompt": "Bad Name"}).content.decode()

    assert "support/triage</span>" in folder
    assert "coding/reviewer</span>" not in folder
    assert "coding/reviewer</span>" in everything
    assert '<option value="support/">' in everything
    assert 'id="audit-prompt-error"' in refused
