"""The Prompts page (docs/editor.md, "Prompts"): every prompt by name in a folder tree
with counts, search, each prompt's labels at a glance, and New / Rename / Duplicate /
Archive. Prompt authors only (the template's change permission).

* ``/prompts/`` lists 100 prompts at a time by name (``after`` pages on: keyset, as fast
  at the end as at the start), filtered by ``folder`` and ``search``; ``archived=1``
  shows archived ones too. An htmx request (the search box, "More prompts") gets the
  rows alone (``Vary: HX-Request``).
* ``/prompts/-/new``, ``-/rename``, ``-/duplicate``, ``-/archive``: POST forms (CSRF),
  each through ``sysprompt.prompts.catalog_services``; a refusal is a message on the
  page, and nothing is written.
* ``/prompts/-/switch?prompt=<name>``: the header's switcher without JavaScript — to
  that prompt's page (``/editor/p/<name>/-/``; ``/`` for ``default``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import urlencode
from django.views import View
from django_htmx.middleware import HtmxDetails

from sysprompt import errors
from sysprompt.editor.scoping import scoped_url, section_url
from sysprompt.editor.templatetags.relative_time import ago
from sysprompt.prompts import catalog_selectors as selectors
from sysprompt.prompts import catalog_services as services
from sysprompt.prompts.catalog import prompt_get
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt_core.prompt_names import DEFAULT_PROMPT, PROMPT_NAME_MAX_LENGTH

PAGE_SIZE = 100


def prompt_page_url(name: str) -> str:
    """A prompt's page: today's ``/`` for ``default``, ``/editor/p/<name>/-/`` otherwise."""
    return scoped_url("index", name)


def label_words(target: Any) -> str:
    """A label's target in a few words: ``latest``, ``release 4``, ``split``."""
    if target == "latest":
        return "latest"
    if isinstance(target, dict) and "release" in target:
        return f"release {target['release']}"
    if isinstance(target, dict) and "split" in target:
        return "split"
    return str(target)


def _shortened(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ListForm(forms.Form):
    folder = forms.CharField(required=False, max_length=PROMPT_NAME_MAX_LENGTH)
    search = forms.CharField(required=False, max_length=200)
    archived = forms.BooleanField(required=False)
    after = forms.CharField(required=False, max_length=PROMPT_NAME_MAX_LENGTH)


class NewForm(forms.Form):
    name = forms.CharField(max_length=PROMPT_NAME_MAX_LENGTH, strip=True)
    description = forms.CharField(required=False, max_length=services.DESCRIPTION_MAX_LENGTH)
    tags = forms.CharField(required=False, max_length=2000, help_text="Separated by commas.")


class RenameForm(forms.Form):
    prompt = forms.CharField(max_length=PROMPT_NAME_MAX_LENGTH)
    name = forms.CharField(max_length=PROMPT_NAME_MAX_LENGTH, strip=True)


class DuplicateForm(RenameForm):
    test_contexts = forms.BooleanField(required=False)
    suites = forms.BooleanField(required=False)


class RestrictForm(forms.Form):
    folder = forms.CharField(max_length=PROMPT_NAME_MAX_LENGTH)


class ArchiveForm(forms.Form):
    prompt = forms.CharField(max_length=PROMPT_NAME_MAX_LENGTH)
    archived = forms.BooleanField(required=False)


class PromptPagesMixin(LoginRequiredMixin, PermissionRequiredMixin):
    """403 for a user who is no prompt author (anonymous users go to the login page)."""

    permission_required = TEMPLATE_EDIT_PERMISSION


class PromptsPageView(PromptPagesMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        form = ListForm(request.GET)
        data = form.cleaned_data if form.is_valid() else {}
        folder = data.get("folder") or ""
        search = data.get("search") or ""
        archived = bool(data.get("archived"))
        after = data.get("after") or ""
        try:
            prompts = selectors.prompts_query(
                folder=folder or None, search=search or None, archived=archived
            )
        except errors.InvalidInput as exc:
            messages.error(request, exc.message)
            folder = ""
            prompts = selectors.prompts_query(search=search or None, archived=archived)
        if after:
            prompts = prompts.filter(name__gt=after)
        page = list(prompts[: PAGE_SIZE + 1])
        more = len(page) > PAGE_SIZE
        actions_url = reverse("editor:prompts-actions")
        rows = [
            {
                "name": row.name,
                "url": prompt_page_url(row.name),
                "actions_url": f"{actions_url}?{urlencode({'prompt': row.name})}",
                "archived": row.archived,
                "description": _shortened(row.description),
                "tags": row.tags,
                "labels": " ".join(
                    f"{name} → {label_words(target)}" for name, target in row.labels.items()
                ),
                "version": f"v{row.version}" if row.version else "",
                "updated_iso": row.updated_at.isoformat(),
                "updated_ago": ago(row.updated_at),
            }
            for row in selectors.prompt_rows(page[:PAGE_SIZE])
        ]
        query = {"folder": folder, "search": search, **({"archived": "1"} if archived else {})}
        prompts_url = reverse("editor:prompts")
        context: dict[str, Any] = {
            "rows": rows,
            "folder": selectors.folder_valid(folder) if folder else "",
            "search": search,
            "archived": archived,
            "more_url": (
                f"{prompts_url}?{urlencode({**query, 'after': page[PAGE_SIZE - 1].name})}"
                if more
                else None
            ),
            "paged": bool(after),
            "new_form": NewForm(initial={"name": selectors.folder_valid(folder) if folder else ""}),
        }
        if HtmxDetails(request):
            response = render(request, "editor/_prompt_rows.html", context)
        else:
            tree, total = selectors.folder_tree(archived=archived)
            tree_query = urlencode({"search": search, **({"archived": "1"} if archived else {})})
            context.update(
                tree=[
                    (node, f"{prompts_url}?{urlencode({'folder': node.folder})}&{tree_query}")
                    for node in tree
                ],
                total=total,
                may_restrict=services.may_restrict(request.user),
                tree_query=tree_query,
            )
            if context["folder"]:
                context.update(restricted_to=selectors.folder_groups(context["folder"]))
                if context["may_restrict"]:
                    context.update(group_choices=selectors.group_names())
            response = render(request, "editor/prompts.html", context)
        patch_vary_headers(response, ("HX-Request",))
        return response


def _back(request: HttpRequest) -> HttpResponseRedirect:
    """Back to the Prompts page the form was on (its own query kept), else its top."""
    back = request.POST.get("back", "")
    if back.startswith(reverse("editor:prompts")) and "//" not in back:
        return HttpResponseRedirect(back)
    return redirect("editor:prompts")


def _refused(request: HttpRequest, exc: Exception) -> HttpResponseRedirect:
    messages.error(request, getattr(exc, "message", None) or str(exc))
    return _back(request)


def _form_refused(request: HttpRequest, form: forms.Form) -> HttpResponseRedirect:
    for field, problems in form.errors.items():
        messages.error(request, f"{field}: {' '.join(str(p) for p in problems)}")
    return _back(request)


CATALOG_ERRORS = (
    errors.InvalidInput,
    errors.PromptConflict,
    errors.PromptForbidden,
    errors.PromptNotFound,
    errors.TemplateTooLarge,
)


class PromptNewView(PromptPagesMixin, View):
    def post(self, request: HttpRequest) -> HttpResponse:
        form = NewForm(request.POST)
        if not form.is_valid():
            return _form_refused(request, form)
        data = form.cleaned_data
        tags = [tag.strip() for tag in data["tags"].split(",") if tag.strip()]
        try:
            prompt = services.prompt_create(
                name=data["name"],
                description=data["description"],
                tags=tags,
                author=request.user,
            )
        except CATALOG_ERRORS as exc:
            return _refused(request, exc)
        messages.success(request, f"Prompt {prompt.name} created.")
        return redirect(prompt_page_url(prompt.name))


class PromptRenameView(PromptPagesMixin, View):
    def post(self, request: HttpRequest) -> HttpResponse:
        form = RenameForm(request.POST)
        if not form.is_valid():
            return _form_refused(request, form)
        try:
            prompt = prompt_get(form.cleaned_data["prompt"], field="prompt")
            was = prompt.name
            renamed = services.prompt_rename(
                prompt=prompt, name=form.cleaned_data["name"], author=request.user
            )
        except CATALOG_ERRORS as exc:
            return _refused(request, exc)
        messages.success(
            request, f"Prompt {was} renamed to {renamed.name}; {was} keeps answering as an alias."
        )
        return _back(request)


class PromptDuplicateView(PromptPagesMixin, View):
    def post(self, request: HttpRequest) -> HttpResponse:
        form = DuplicateForm(request.POST)
        if not form.is_valid():
            return _form_refused(request, form)
        data = form.cleaned_data
        try:
            prompt = prompt_get(data["prompt"], field="prompt")
            copy = services.prompt_duplicate(
                prompt=prompt,
                name=data["name"],
                test_contexts=data["test_contexts"],
                suites=data["suites"],
                author=request.user,
            )
        except CATALOG_ERRORS as exc:
            return _refused(request, exc)
        messages.success(request, f"Prompt {prompt.name} duplicated as {copy.name}.")
        return _back(request)


class PromptArchiveView(PromptPagesMixin, View):
    def post(self, request: HttpRequest) -> HttpResponse:
        form = ArchiveForm(request.POST)
        if not form.is_valid():
            return _form_refused(request, form)
        archived = form.cleaned_data["archived"]
        try:
            prompt = prompt_get(form.cleaned_data["prompt"], field="prompt")
            services.prompt_archive(prompt=prompt, archived=archived, author=request.user)
        except (*CATALOG_ERRORS, errors.PromptArchived) as exc:
            return _refused(request, exc)
        verb = "archived: it starts no new conversation" if archived else "unarchived"
        messages.success(request, f"Prompt {prompt.name} {verb}.")
        return _back(request)


class PromptRestrictView(PromptPagesMixin, View):
    """A folder's editor groups (the checked ones; none lifts the restriction): for a
    superuser or a holder of the folder restriction permission, audited."""

    def post(self, request: HttpRequest) -> HttpResponse:
        form = RestrictForm(request.POST)
        if not form.is_valid():
            return _form_refused(request, form)
        try:
            groups = services.folder_restrict(
                folder=form.cleaned_data["folder"],
                editor_groups=request.POST.getlist("groups"),
                author=request.user,
            )
        except CATALOG_ERRORS as exc:
            return _refused(request, exc)
        folder = selectors.folder_valid(form.cleaned_data["folder"])
        if groups:
            messages.success(
                request,
                f"Only members of {', '.join(groups)} (and superusers) may now edit, release "
                f"and label the prompts under {folder}.",
            )
        else:
            messages.success(request, f"{folder} is no longer restricted to groups.")
        return _back(request)


class PromptActionsView(PromptPagesMixin, View):
    """A row's Rename / Duplicate / Archive forms (htmx, when its menu first opens: the
    page itself stays light with thousands of prompts)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        try:
            prompt = prompt_get(request.GET.get("prompt", ""), field="prompt")
        except (errors.InvalidInput, errors.PromptNotFound) as exc:
            raise Http404(str(exc)) from None
        current = urlsplit(request.headers.get("HX-Current-URL", ""))
        back = current.path + (f"?{current.query}" if current.query else "")
        context = {
            "row": prompt,
            "is_default": prompt.name == DEFAULT_PROMPT,
            "back": back or reverse("editor:prompts"),
        }
        return render(request, "editor/_prompt_actions.html", context)


class PromptSwitchView(LoginRequiredMixin, View):
    """The header's switcher: to the page of the prompt picked."""

    def get(self, request: HttpRequest) -> HttpResponse:
        name = request.GET.get("prompt", "")
        try:
            prompt = prompt_get(name or None)
        except (errors.InvalidInput, errors.PromptNotFound) as exc:
            messages.error(request, getattr(exc, "message", None) or str(exc))
            return redirect("editor:index")
        return redirect(section_url(request.GET.get("page", ""), prompt.name))
