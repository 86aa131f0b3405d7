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

A host's label and its instance override are per prompt: ``/agent-hosts/`` shows and
sets ``default``'s, ``/editor/p/<name>/-/agent-hosts/`` that prompt's (``self.scope``,
sysprompt/editor/scoping.py). Creating a host and rotating its token are
deployment-wide (a host is a user): their routes are today's only. A host's prompts
(its default prompt and the ones it may use: ``sysprompt.prompts.hosts``) are
deployment-wide too; the page shows and sets them once a prompt other than ``default``
exists, through the service ``PUT /api/agent-hosts/{username}/prompts`` uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views import View

from sysprompt import errors
from sysprompt.accounts import selectors, services
from sysprompt.editor import forms, library_forms
from sysprompt.editor.library import may_write
from sysprompt.editor.preview import assignments_parse, assignments_text
from sysprompt.editor.scoping import PromptScopedMixin, scoped_url
from sysprompt.library import selectors as library_selectors
from sysprompt.prompts import hosts as prompt_hosts
from sysprompt.prompts.catalog_selectors import prompt_names, prompts_exist_beyond_default
from sysprompt.releases import selectors as release_selectors
from sysprompt.releases import services as release_services
from sysprompt_core.library import DEFAULT_STRATEGY
from sysprompt_core.prompt_names import DEFAULT_PROMPT

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt


class AgentHostPagesMixin(LoginRequiredMixin, PermissionRequiredMixin):
    """403 for a user who may not create tokens (anonymous users go to the login page)."""

    permission_required = services.AGENT_HOSTS_PERMISSION


class AgentHostScopedMixin(AgentHostPagesMixin, PromptScopedMixin):
    """The pages of one prompt's labels and overrides: ``self.scope`` is the prompt the
    URL names (``default`` for today's URLs; 404 for an unknown one)."""


class AgentHostPageView(AgentHostScopedMixin, View):
    """The hosts, with their label and override for the prompt (GET only: a scoped
    page's "New agent host" posts to today's URL)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return _hosts_page(request, self.scope, forms.AgentHostForm())


class AgentHostListView(AgentHostPageView):
    """Today's ``/agent-hosts/``: the page (GET) and "New agent host" (POST: the answer
    shows the token once)."""

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
        return _hosts_page(request, self.scope, form, status=400)


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


class AgentHostOverrideView(AgentHostScopedMixin, View):
    """Set (or remove) a host's instance override for the prompt (POST, authors);
    errors show inline."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        prompt = self.scope
        if not may_write(request):
            messages.error(
                request, "Changing an instance override needs the prompt author permission."
            )
            return redirect(scoped_url("agent-hosts", prompt))
        form = library_forms.HostOverrideForm(request.POST)
        try:
            release_services.host_change_check(username=name, author=request.user, prompt=prompt)
            override = _override_value(form)
            release_services.host_override_set(
                username=name, override=override, author=request.user, prompt=prompt
            )
        except errors.AgentHostNotFound as exc:
            raise Http404(str(exc)) from None
        except errors.InvalidInput as exc:
            return _override_refused(request, prompt, name, exc.message, form, status=400)
        # the host's label is protected, or the prompt's restriction refuses the author
        except (errors.LabelProtected, errors.PromptForbidden) as exc:
            return _override_refused(request, prompt, name, str(exc), form, status=403)
        what = "removed" if override is None else "saved"
        messages.success(request, f"Instance override of {name} {what}.")
        return redirect(scoped_url("agent-hosts", prompt) + "#overrides")


def _override_refused(
    request: HttpRequest,
    prompt: Prompt,
    name: str,
    message: str,
    form: library_forms.HostOverrideForm,
    *,
    status: int,
) -> HttpResponse:
    """The page again, ``message`` under ``name``'s override form with what was typed."""
    return _hosts_page(
        request,
        prompt,
        forms.AgentHostForm(),
        override_error=(name, message, form),
        status=status,
    )


class AgentHostLabelView(AgentHostScopedMixin, View):
    """Set (or with an empty name or ``clear``, remove) a host's label for the prompt
    (POST, authors, like its override); a refusal shows under that host's label form,
    nothing changed."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        return _label_post(request, self.scope, name)


def _label_post(request: HttpRequest, prompt: Prompt, name: str) -> HttpResponse:
    if not may_write(request):
        messages.error(request, "Changing a host's label needs the prompt author permission.")
        return redirect(scoped_url("agent-hosts", prompt))
    form = library_forms.HostLabelForm(request.POST)
    typed = str(request.POST.get("label", ""))
    try:
        # who may, first
        release_services.host_change_check(username=name, author=request.user, prompt=prompt)
        if not form.is_valid():
            field, problems = next(iter(form.errors.items()))
            raise errors.InvalidInput(field, " ".join(str(p) for p in problems))
        label = None if form.cleaned_data["clear"] else form.cleaned_data["label"] or None
        state = release_services.host_label_set(
            username=name, label=label, author=request.user, prompt=prompt
        )
    except errors.AgentHostNotFound as exc:
        raise Http404(str(exc)) from None
    except errors.InvalidInput as exc:
        return _hosts_page(
            request,
            prompt,
            forms.AgentHostForm(),
            label_error=(name, exc.message, typed),
            status=400,
        )
    except (errors.LabelProtected, errors.PromptForbidden) as exc:
        return _hosts_page(
            request, prompt, forms.AgentHostForm(), label_error=(name, str(exc), typed), status=403
        )
    if state.label is None:
        messages.success(request, f"Label of {name} cleared: its conversations use production.")
    else:
        messages.success(
            request,
            f"Label of {name} set to {state.label}: its conversations use it from their "
            "next construct on.",
        )
    return redirect(scoped_url("agent-hosts", prompt) + "#agent-hosts")


class AgentHostPromptsView(AgentHostScopedMixin, View):
    """Set a host's default prompt and the prompts it may use (POST, authors, as ``PUT
    /api/agent-hosts/{username}/prompts``: a host whose ``default`` label is protected
    needs the permission to publish). Deployment-wide whatever the page's prompt; a
    refusal shows under that host's form, nothing written."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        prompt = self.scope
        if not may_write(request):
            messages.error(request, "Changing a host's prompts needs the prompt author permission.")
            return redirect(scoped_url("agent-hosts", prompt))
        form = library_forms.HostPromptsForm(request.POST)
        typed = (str(request.POST.get("default", "")), str(request.POST.get("allowed", "")))
        try:
            release_services.host_change_check(username=name, author=request.user)  # as the API
            if not form.is_valid():
                field, problems = next(iter(form.errors.items()))
                raise errors.InvalidInput(field, f"{field}: {' '.join(str(p) for p in problems)}")
            default, allowed = form.values()
            state = prompt_hosts.host_prompts_set(
                username=name, default=default, allowed=allowed, author=request.user
            )
        except errors.AgentHostNotFound as exc:
            raise Http404(str(exc)) from None
        except errors.InvalidInput as exc:
            return _prompts_refused(request, prompt, name, exc.message, typed, status=400)
        except errors.LabelProtected as exc:
            return _prompts_refused(request, prompt, name, str(exc), typed, status=403)
        allowed_words = "every prompt" if state.allowed is None else ", ".join(state.allowed)
        messages.success(
            request,
            f"Prompts of {name} saved: default {state.default or DEFAULT_PROMPT}, "
            f"allowed {allowed_words}.",
        )
        return redirect(scoped_url("agent-hosts", prompt) + "#host-prompts")


def _prompts_refused(
    request: HttpRequest,
    prompt: Prompt,
    name: str,
    message: str,
    typed: tuple[str, str],
    *,
    status: int,
) -> HttpResponse:
    return _hosts_page(
        request,
        prompt,
        forms.AgentHostForm(),
        prompts_error=(name, message, typed),
        status=status,
    )


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
    hosts: list[selectors.AgentHostSummary],
    prompt: Prompt,
    error: tuple[str, str, str] | None,
) -> list[LabelRow]:
    states = release_selectors.host_labels((host.username for host in hosts), prompt=prompt)
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
    prompt: Prompt,
    error: tuple[str, str, library_forms.HostOverrideForm] | None,
) -> list[OverrideRow]:
    rows = []
    for host in hosts:
        state = library_selectors.host_override_state(host.username, prompt.pk)
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


@dataclass(frozen=True)
class PromptsRow:
    """A host's prompts as the page shows and edits them (``default`` ``None``:
    ``default``; ``allowed`` ``None``: every prompt); ``error``: a refusal, with what was
    typed in ``typed_default`` and ``typed_allowed``."""

    username: str
    default: str | None
    allowed: list[str] | None
    typed_default: str
    typed_allowed: str
    updated_at: Any = None
    updated_by: str | None = None
    error: str | None = None


def _host_prompts(
    hosts: list[selectors.AgentHostSummary], error: tuple[str, str, tuple[str, str]] | None
) -> list[PromptsRow]:
    rows = []
    for host in hosts:
        state = prompt_hosts.host_prompts_state(host.username)
        typed = (state.default or "", ", ".join(state.allowed or []))
        message = None
        if error is not None and error[0] == host.username:
            message, typed = error[1], error[2]
        rows.append(
            PromptsRow(
                username=host.username,
                default=state.default,
                allowed=state.allowed,
                typed_default=typed[0],
                typed_allowed=typed[1],
                updated_at=state.updated_at,
                updated_by=state.updated_by,
                error=message,
            )
        )
    return rows


def _hosts_page(
    request: HttpRequest,
    prompt: Prompt,
    form: forms.AgentHostForm,
    *,
    override_error: tuple[str, str, library_forms.HostOverrideForm] | None = None,
    label_error: tuple[str, str, str] | None = None,
    prompts_error: tuple[str, str, tuple[str, str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    hosts = selectors.agent_hosts()
    labels = _labels(hosts, prompt, label_error)
    named = prompts_exist_beyond_default()
    context = {
        "scope_name": None if prompt.name == DEFAULT_PROMPT else prompt.name,
        "hosts": hosts,
        "host_rows": list(zip(hosts, labels, strict=True)),
        "label_names": [state.name for state in release_selectors.labels_list(prompt)],
        "form": form,
        "overrides": _overrides(hosts, prompt, override_error),
        "host_prompts": _host_prompts(hosts, prompts_error) if named else [],
        "prompt_names": prompt_names() if named else [],
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
