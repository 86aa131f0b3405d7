"""The Agent hosts page: create an agent host, rotate its token, list the hosts, and
set each host's label and instance override.

A token is shown once, on the answer to the POST that made it (``Cache-Control:
no-store`` from ``config.middleware.NoStoreMiddleware``); the list never shows one.
Everything here needs :data:`~sysprompt.accounts.services.AGENT_HOSTS_PERMISSION`;
changing an instance override also needs the library's author permission (the page
shows the others each override read only). The override form's fields (none, a text
and where it goes, or a preset with ``name=value`` variables and where it goes — by
default its own strategy) become the override's JSON,
which ``sysprompt.releases.services.host_override_set`` checks (and the library's
service after it): its refusals show inline, under that host's form — 403 when the
host's label is protected and the author may not publish, before the form is read
(``host_change_check``, as the API answers). A host's label (what its
conversations use when a call names none; else production) is set or cleared the
same way, through
``sysprompt.releases.services.host_label_set``: a name that is no label is refused
under that host's form, as ``PUT /api/agent-hosts/{username}/label`` refuses it (403
for a move off or onto a protected label by an author who may not publish).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import View

from sysprompt import errors
from sysprompt.accounts import selectors, services
from sysprompt.editor import forms, library_forms
from sysprompt.editor.library import may_write
from sysprompt.editor.preview import assignments_parse, assignments_text
from sysprompt.library import selectors as library_selectors
from sysprompt.releases import selectors as release_selectors
from sysprompt.releases import services as release_services
from sysprompt_core.library import DEFAULT_STRATEGY


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
                host = services.agent_host_create(
                    name=form.cleaned_data["name"], author=request.user
                )
            except errors.AgentHostError as exc:
                form.add_error("name", str(exc))
            else:
                return _token_page(request, host, rotated=False)
        return _hosts_page(request, form, status=400)


class AgentHostRotateView(AgentHostPagesMixin, View):
    """Replace a host's token (POST); the answer shows the new one once."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        try:
            host = services.agent_host_rotate(name=name, author=request.user)
        except errors.AgentHostNotFound as exc:
            raise Http404(str(exc)) from None
        except errors.AgentHostError as exc:
            messages.error(request, f"No new token: {exc}")
            return redirect("editor:agent-hosts")
        return _token_page(request, host, rotated=True)


class AgentHostOverrideView(AgentHostPagesMixin, View):
    """Set (or remove) a host's instance override (POST, authors); errors show inline."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        if not may_write(request):
            messages.error(
                request, "Changing an instance override needs the prompt author permission."
            )
            return redirect("editor:agent-hosts")
        form = library_forms.HostOverrideForm(request.POST)
        try:
            release_services.host_change_check(username=name, author=request.user)
            override = _override_value(form)
            release_services.host_override_set(
                username=name, override=override, author=request.user
            )
        except errors.AgentHostNotFound as exc:
            raise Http404(str(exc)) from None
        except errors.InvalidInput as exc:
            return _override_refused(request, name, exc.message, form, status=400)
        except errors.LabelProtected as exc:  # the host's label is protected
            return _override_refused(request, name, str(exc), form, status=403)
        what = "removed" if override is None else "saved"
        messages.success(request, f"Instance override of {name} {what}.")
        return redirect(reverse("editor:agent-hosts") + "#overrides")


def _override_refused(
    request: HttpRequest,
    name: str,
    message: str,
    form: library_forms.HostOverrideForm,
    *,
    status: int,
) -> HttpResponse:
    """The page again, ``message`` under ``name``'s override form with what was typed."""
    return _hosts_page(
        request, forms.AgentHostForm(), override_error=(name, message, form), status=status
    )


class AgentHostLabelView(AgentHostPagesMixin, View):
    """Set (or with an empty name or ``clear``, remove) a host's label (POST, authors,
    like its override); a refusal shows under that host's label form, nothing changed."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        return _label_post(request, name)


def _label_post(request: HttpRequest, name: str) -> HttpResponse:
    if not may_write(request):
        messages.error(request, "Changing a host's label needs the prompt author permission.")
        return redirect("editor:agent-hosts")
    form = library_forms.HostLabelForm(request.POST)
    typed = str(request.POST.get("label", ""))
    try:
        release_services.host_change_check(username=name, author=request.user)  # who may, first
        if not form.is_valid():
            field, problems = next(iter(form.errors.items()))
            raise errors.InvalidInput(field, " ".join(str(p) for p in problems))
        label = None if form.cleaned_data["clear"] else form.cleaned_data["label"] or None
        state = release_services.host_label_set(username=name, label=label, author=request.user)
    except errors.AgentHostNotFound as exc:
        raise Http404(str(exc)) from None
    except errors.InvalidInput as exc:
        return _hosts_page(
            request, forms.AgentHostForm(), label_error=(name, exc.message, typed), status=400
        )
    except errors.LabelProtected as exc:
        return _hosts_page(
            request, forms.AgentHostForm(), label_error=(name, str(exc), typed), status=403
        )
    if state.label is None:
        messages.success(request, f"Label of {name} cleared: its conversations use production.")
    else:
        messages.success(
            request,
            f"Label of {name} set to {state.label}: its conversations use it from their "
            "next construct on.",
        )
    return redirect(reverse("editor:agent-hosts") + "#agent-hosts")


@dataclass(frozen=True)
class LabelRow:
    """A host's label as the page shows and edits it (``label`` ``None``: production by
    default); ``typed`` and ``error``: a refused name and why."""

    label: str | None
    updated_at: Any = None
    updated_by: str | None = None
    typed: str = ""
    error: str | None = None


def _labels(
    hosts: list[selectors.AgentHostSummary], error: tuple[str, str, str] | None
) -> list[LabelRow]:
    states = release_selectors.host_labels(host.username for host in hosts)
    rows = []
    for host in hosts:
        state = states.get(host.username)
        row = LabelRow(
            label=state.label if state else None,
            updated_at=state.updated_at if state else None,
            updated_by=state.updated_by if state else None,
            typed=(state.label or "") if state else "",
        )
        if error is not None and error[0] == host.username:
            row = LabelRow(
                row.label, row.updated_at, row.updated_by, typed=error[2], error=error[1]
            )
        rows.append(row)
    return rows


def _override_value(form: library_forms.HostOverrideForm) -> object:
    """The override's JSON from the form's fields (checked later by the service)."""
    if not form.is_valid():
        field, problems = next(iter(form.errors.items()))
        raise errors.InvalidInput(field, f"{field}: {' '.join(str(p) for p in problems)}")
    data = form.cleaned_data
    value: dict[str, object]
    if data["kind"] == "none":
        return None
    if data["kind"] == "text":
        if not data["content"].strip():
            raise errors.InvalidInput("content", "Write the text to add, or choose No override.")
        value = {"content": data["content"]}
        # Append is what a text without a strategy does: only prepend is written.
        strategy = "" if data["text_strategy"] == DEFAULT_STRATEGY else data["text_strategy"]
    else:
        if not data["preset"].strip():
            raise errors.InvalidInput("preset", "Name the fragment to apply as a preset.")
        value = {"preset": data["preset"].strip()}
        variables = assignments_parse(data["variables"], "variables")
        if variables:
            value["variables"] = variables
        strategy = data["preset_strategy"]
    if strategy:
        value["strategy"] = strategy
    return value


@dataclass(frozen=True)
class OverrideRow:
    """A host's instance override as the page shows and edits it."""

    username: str
    kind: str
    content: str
    preset: str
    variables: str
    strategy: str
    summary: str
    updated_at: Any
    updated_by: Any
    error: str | None = None

    @property
    def text_strategy(self) -> str:
        """The text's strategy as its field shows it (none stored: append)."""
        return self.strategy or DEFAULT_STRATEGY


def _override_row(username: str, raw: object, state: Any) -> OverrideRow:
    kind, content, preset, variables, strategy = "none", "", "", "", ""
    if isinstance(raw, str):
        kind, content = "text", raw
    elif isinstance(raw, dict):
        strategy = str(raw.get("strategy") or "")
        if raw.get("preset") is not None:
            kind, preset = "preset", str(raw["preset"])
            given = raw.get("variables") or {}
            variables = assignments_text(
                {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}
            )
        else:
            kind, content = "text", str(raw.get("content") or "")
    if kind == "none":
        summary = "none"
    elif kind == "text":
        summary = f"text, {strategy or 'append'}: {content[:80]}{'…' if len(content) > 80 else ''}"
    else:
        summary = f"preset {preset}, {strategy or 'its own strategy'}"
    return OverrideRow(
        username=username,
        kind=kind,
        content=content,
        preset=preset,
        variables=variables,
        strategy=strategy,
        summary=summary,
        updated_at=getattr(state, "updated_at", None),
        updated_by=getattr(state, "updated_by", None),
    )


def _overrides(
    hosts: list[selectors.AgentHostSummary],
    error: tuple[str, str, library_forms.HostOverrideForm] | None,
) -> list[OverrideRow]:
    rows = []
    for host in hosts:
        state = library_selectors.host_override_state(host.username)
        row = _override_row(host.username, state.override, state)
        if error is not None and error[0] == host.username:
            # What the author typed, with the refusal under it.
            form = error[2]
            typed = {key: form.data.get(key, "") for key in ("content", "preset", "variables")}
            kind = str(form.data.get("kind", row.kind))
            strategy = "text_strategy" if kind == "text" else "preset_strategy"
            row = OverrideRow(
                username=host.username,
                kind=kind,
                content=str(typed["content"]),
                preset=str(typed["preset"]),
                variables=str(typed["variables"]),
                strategy=str(form.data.get(strategy, "")),
                summary=row.summary,
                updated_at=row.updated_at,
                updated_by=row.updated_by,
                error=error[1],
            )
        rows.append(row)
    return rows


def _hosts_page(
    request: HttpRequest,
    form: forms.AgentHostForm,
    *,
    override_error: tuple[str, str, library_forms.HostOverrideForm] | None = None,
    label_error: tuple[str, str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    hosts = selectors.agent_hosts()
    labels = _labels(hosts, label_error)
    context = {
        "hosts": hosts,
        "host_rows": list(zip(hosts, labels, strict=True)),
        "label_names": [state.name for state in release_selectors.labels_list()],
        "form": form,
        "overrides": _overrides(hosts, override_error),
        "can_set_overrides": may_write(request),
        "override_kinds": library_forms.OVERRIDE_KINDS,
        "text_strategies": library_forms.TEXT_STRATEGIES,
        "preset_strategies": library_forms.PRESET_STRATEGIES,
        "fragment_names": sorted(library_selectors.library_source().names()),
    }
    return render(request, "editor/agent_hosts.html", context, status=status)


def _token_page(request: HttpRequest, host: services.AgentHost, *, rotated: bool) -> HttpResponse:
    context = {"host": host, "rotated": rotated}
    return render(request, "editor/agent_host_token.html", context)
