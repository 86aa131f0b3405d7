"""The Webhooks and Audit pages (docs/events.md): subscriptions with their delivery log,
and the audit log with filters. Prompt authors only (the template's change permission).

* ``/webhooks/`` lists the subscriptions (state, pending deliveries, last attempt) and
  creates one; the answer to that POST shows its secret, once (``no-store``).
* ``/webhooks/<id>/`` edits one, sends a test event, resumes a paused one (the page says
  why it was paused), deletes it, and shows its delivery log, newest first, refreshed
  by htmx every few seconds (``Vary: HX-Request``: the partial alone).
* ``/audit/`` is the log, newest first, filtered by actor and action; "Older records"
  pages on.

Every write goes through ``sysprompt.events.services``; its refusals
(``InvalidInput``) show under the field they name.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views import View
from django_htmx.middleware import HtmxDetails

from sysprompt import errors
from sysprompt.events import selectors, services
from sysprompt.events.catalog import EVENT_TYPES
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt_core.prompt_names import (
    PROMPT_NAME_MAX_LENGTH,
    folders_of,
    is_folder,
    is_prompt_name,
)

LOG_PAGE_SIZE = 50
AUDIT_PAGE_SIZE = 100
EVENT_CHOICES = [(event, event) for event in EVENT_TYPES]


class WebhookForm(forms.Form):
    url = forms.CharField(max_length=2000, strip=True)
    events = forms.MultipleChoiceField(choices=EVENT_CHOICES, widget=forms.CheckboxSelectMultiple)
    prompts = forms.CharField(required=False, max_length=20_000, strip=True)
    include_text = forms.BooleanField(required=False)
    active = forms.BooleanField(required=False)

    def prompts_given(self) -> list[str]:
        """The prompts' names and folders, separated by commas, spaces or lines."""
        return [part for part in re.split(r"[\s,]+", self.cleaned_data["prompts"]) if part]


class OlderForm(forms.Form):
    before = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1)


class AuditFilterForm(OlderForm):
    actor = forms.CharField(required=False, max_length=150)
    action = forms.CharField(required=False, max_length=64)
    prompt = forms.CharField(required=False, max_length=PROMPT_NAME_MAX_LENGTH + 1, strip=True)


class EventPagesMixin(LoginRequiredMixin, PermissionRequiredMixin):
    """403 for a user who is no prompt author (anonymous users go to the login page)."""

    permission_required = TEMPLATE_EDIT_PERMISSION


def _refused(form: WebhookForm, error: errors.InvalidInput) -> None:
    form.add_error(error.field if error.field in form.fields else None, error.message)


class WebhookListView(EventPagesMixin, View):
    """The subscriptions (GET) and "New webhook" (POST: the answer shows the secret)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return _list_page(request, WebhookForm(initial={"active": True}))

    def post(self, request: HttpRequest) -> HttpResponse:
        form = WebhookForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                created = services.webhook_create(
                    url=data["url"],
                    events=list(data["events"]),
                    prompts=form.prompts_given(),
                    include_text=data["include_text"],
                    author=request.user,
                )
            except errors.InvalidInput as error:
                _refused(form, error)
            else:
                context = {"webhook": created.webhook, "secret": created.secret}
                return render(request, "editor/webhook_created.html", context, status=201)
        return _list_page(request, form, status=400)


def _list_page(request: HttpRequest, form: WebhookForm, status: int = 200) -> HttpResponse:
    context = {"webhooks": selectors.webhooks_list(), "form": form}
    return render(request, "editor/webhooks.html", context, status=status)


def _webhook(webhook_id: int) -> selectors.WebhookState:
    try:
        return selectors.webhook_get(webhook_id)
    except errors.WebhookNotFound as error:
        raise Http404(str(error)) from None


class WebhookDetailView(EventPagesMixin, View):
    """One subscription: edit (POST), its paused notice and its delivery log."""

    def get(self, request: HttpRequest, webhook_id: int) -> HttpResponse:
        webhook = _webhook(webhook_id)
        form = WebhookForm(
            initial={
                "url": webhook.url,
                "events": webhook.events,
                "prompts": ", ".join(webhook.prompts),
                "include_text": webhook.include_text,
                "active": webhook.active,
            }
        )
        return _detail_page(request, webhook, form)

    def post(self, request: HttpRequest, webhook_id: int) -> HttpResponse:
        webhook = _webhook(webhook_id)
        form = WebhookForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                services.webhook_update(
                    webhook_id=webhook_id,
                    url=data["url"],
                    events=list(data["events"]),
                    prompts=form.prompts_given(),
                    include_text=data["include_text"],
                    active=data["active"],
                    author=request.user,
                )
            except errors.InvalidInput as error:
                _refused(form, error)
            else:
                messages.success(request, "Webhook saved.")
                return redirect("editor:webhook", webhook_id=webhook_id)
        return _detail_page(request, webhook, form, status=400)


def _detail_page(
    request: HttpRequest, webhook: selectors.WebhookState, form: WebhookForm, status: int = 200
) -> HttpResponse:
    context = {"webhook": webhook, "form": form, **_log(webhook.id, None)}
    return render(request, "editor/webhook.html", context, status=status)


def _log(webhook_id: int, before: int | None) -> dict[str, Any]:
    attempts = list(selectors.webhook_attempts(webhook_id, before=before)[: LOG_PAGE_SIZE + 1])
    more = len(attempts) > LOG_PAGE_SIZE
    attempts = attempts[:LOG_PAGE_SIZE]
    return {
        "attempts": attempts,
        "next_before": attempts[-1].id if more else None,
        "paged": before is not None,
    }


class WebhookLogView(EventPagesMixin, View):
    """The delivery log's rows (htmx: the partial alone), newest first, or older ones."""

    def get(self, request: HttpRequest, webhook_id: int) -> HttpResponse:
        webhook = _webhook(webhook_id)
        form = OlderForm(request.GET)
        before = form.cleaned_data["before"] if form.is_valid() else None
        context = {"webhook": webhook, **_log(webhook_id, before)}
        template = "editor/_webhook_log.html" if HtmxDetails(request) else "editor/webhook.html"
        if not HtmxDetails(request):
            context["form"] = WebhookForm(
                initial={
                    "url": webhook.url,
                    "events": webhook.events,
                    "include_text": webhook.include_text,
                    "active": webhook.active,
                }
            )
        response = render(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response


class WebhookTestView(EventPagesMixin, View):
    def post(self, request: HttpRequest, webhook_id: int) -> HttpResponse:
        try:
            event_id = services.webhook_test(webhook_id=webhook_id, author=request.user)
        except errors.WebhookNotFound as error:
            raise Http404(str(error)) from None
        messages.success(
            request, f"Test event {event_id} queued: its attempt shows in the log below."
        )
        return redirect("editor:webhook", webhook_id=webhook_id)


class WebhookResumeView(EventPagesMixin, View):
    def post(self, request: HttpRequest, webhook_id: int) -> HttpResponse:
        try:
            services.webhook_update(webhook_id=webhook_id, active=True, author=request.user)
        except errors.WebhookNotFound as error:
            raise Http404(str(error)) from None
        messages.success(request, "Webhook resumed: what waited for it is being sent.")
        return redirect("editor:webhook", webhook_id=webhook_id)


class WebhookDeleteView(EventPagesMixin, View):
    def post(self, request: HttpRequest, webhook_id: int) -> HttpResponse:
        try:
            services.webhook_delete(webhook_id=webhook_id, author=request.user)
        except errors.WebhookNotFound as error:
            raise Http404(str(error)) from None
        messages.success(request, f"Webhook {webhook_id} deleted, with its delivery log.")
        return redirect("editor:webhooks")


class AuditView(EventPagesMixin, View):
    """The audit log, filtered; htmx requests for older records get the rows alone."""

    def get(self, request: HttpRequest) -> HttpResponse:
        form = AuditFilterForm(request.GET)
        data = form.cleaned_data if form.is_valid() else {}
        actor = data.get("actor") or None
        action = data.get("action") or None
        before = data.get("before")
        prompt = data.get("prompt") or None
        refused = prompt is not None and not (
            is_prompt_name(prompt) or (prompt.endswith("/") and is_folder(prompt))
        )
        found = selectors.audit_records(actor=actor, action=action, before=before, prompt=prompt)
        records = [] if refused else list(found[: AUDIT_PAGE_SIZE + 1])
        more = len(records) > AUDIT_PAGE_SIZE
        records = records[:AUDIT_PAGE_SIZE]
        context = {
            "records": records,
            "actor": actor or "",
            "action": action or "",
            "prompt": prompt or "",
            "prompt_refused": refused,
            "prompts": _with_folders(selectors.audit_prompts()),
            "actors": [name for name in selectors.audit_actors() if name],
            "actions": selectors.audit_actions(),
            "next_before": records[-1].id if more else None,
            "paged": before is not None,
        }
        template = "editor/_audit_rows.html" if HtmxDetails(request) else "editor/audit.html"
        response = render(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response


def _with_folders(names: list[str]) -> list[str]:
    """The prompts' names and the folders they sit in, sorted: what the audit's prompt
    filter offers."""
    return sorted({*names, *(folder for name in names for folder in folders_of(name))})
