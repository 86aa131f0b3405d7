"""The Agent hosts page: create an agent host, rotate its token, list the hosts.

A token is shown once, on the answer to the POST that made it (``Cache-Control:
no-store`` from ``config.middleware.NoStoreMiddleware``); the list never shows one.
Everything here needs :data:`~sysprompt.accounts.services.AGENT_HOSTS_PERMISSION`.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views import View

from sysprompt import errors
from sysprompt.accounts import selectors, services
from sysprompt.editor import forms


class AgentHostPagesMixin(LoginRequiredMixin, PermissionRequiredMixin):
    """403 for a user who may not create tokens (anonymous users go to the login page)."""

    permission_required = services.AGENT_HOSTS_PERMISSION


class AgentHostListView(AgentHostPagesMixin, View):
    """The hosts (GET) and "New agent host" (POST: the answer shows the token once)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return _hosts_page(request, forms.AgentHostForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = forms.AgentHostForm(request.POST)
        if form.is_valid():
            try:
                host = services.agent_host_create(name=form.cleaned_data["name"])
            except errors.AgentHostError as exc:
                form.add_error("name", str(exc))
            else:
                return _token_page(request, host, rotated=False)
        return _hosts_page(request, form, status=400)


class AgentHostRotateView(AgentHostPagesMixin, View):
    """Replace a host's token (POST); the answer shows the new one once."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        try:
            host = services.agent_host_rotate(name=name)
        except errors.AgentHostNotFound as exc:
            raise Http404(str(exc)) from None
        except errors.AgentHostError as exc:
            messages.error(request, f"No new token: {exc}")
            return redirect("editor:agent-hosts")
        return _token_page(request, host, rotated=True)


def _hosts_page(
    request: HttpRequest, form: forms.AgentHostForm, *, status: int = 200
) -> HttpResponse:
    context = {"hosts": selectors.agent_hosts(), "form": form}
    return render(request, "editor/agent_hosts.html", context, status=status)


def _token_page(request: HttpRequest, host: services.AgentHost, *, rotated: bool) -> HttpResponse:
    context = {"host": host, "rotated": rotated}
    return render(request, "editor/agent_host_token.html", context)
