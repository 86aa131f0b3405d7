"""Editor pages and the htmx partials they swap in.

Views only read the request, call one selector or service, and render a template:
full pages for plain requests, partials (``editor/_*.html``) for htmx requests. Every
write is a POST through Django's CSRF middleware; htmx sends the token in a header that
``base.html`` sets on ``<body>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import TYPE_CHECKING, Any

from django import forms as django_forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseRedirect,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags, urlencode
from django.views import View
from django_htmx.http import reswap, retarget, trigger_client_event
from django_htmx.middleware import HtmxDetails

from sysprompt import errors
from sysprompt.conf import app_settings
from sysprompt.editor import cwds, forms
from sysprompt.editor.preview import fragment_rows, preview_context
from sysprompt.editor.scoping import (
    SCOPED_PREFIX,
    PromptScopedMixin,
    page_name,
    page_prompt,
    scoped_url,
)
from sysprompt.library.selectors import library_source
from sysprompt.prompts import files, rendering, selectors, services, validation
from sysprompt.prompts.catalog_selectors import prompts_exist_beyond_default
from sysprompt.prompts.catalog_services import editors_check
from sysprompt.prompts.permissions import CONVERSATION_VIEW_PERMISSION, TEMPLATE_EDIT_PERMISSION
from sysprompt.releases.selectors import SaveReach, conversation_build, latest_weight, save_reach
from sysprompt_core.diff import text_diff
from sysprompt_core.library import FragmentUse
from sysprompt_core.paths import real_roots
from sysprompt_core.prompt_names import DEFAULT_PROMPT
from sysprompt_core.releases import SPLIT_TOTAL, Split, Target, describe_pointer, percent
from sysprompt_core.tokens import TokenCount
from sysprompt_core.variables import CatalogEntry, variable_catalog

if TYPE_CHECKING:
    from sysprompt.prompts.builds import Build
    from sysprompt.prompts.models import ConversationPrompt, Prompt, TemplateVersion

PREVIEW_DEBOUNCE_MS = 250
PARTIAL_HEADER = "X-Sysprompt-Partial"
HISTORY_PAGE_SIZE = 25
CONVERSATION_PAGE_SIZE = 50
# The overview counts conversations up to this many ("10000+"): never a full scan.
COUNT_CAP = 10_000


class EditorPageView(LoginRequiredMixin, View):
    """The main page; ``open_editor`` shows it with the editor modal already open.
    Under ``/editor/p/<name>/-/`` it is that prompt's (its working copy, its history)."""

    open_editor = False

    def get(self, request: HttpRequest, prompt: str | None = None) -> HttpResponse:
        found = page_prompt(prompt)
        current = selectors.template_current(found)
        cwd, recent_cwds = user_cwds(request)
        preview = preview_context(text=current.text, cwd=cwd, compress=current.compress)
        config = editor_config(
            request,
            text=current.text,
            etag=current.etag,
            version=current.version,
            can_edit=request.user.has_perm(TEMPLATE_EDIT_PERMISSION),
            settings={"compress": current.compress},
            urls={
                "index": scoped_url("index", found),
                "editor": scoped_url("editor", found),
                "version": scoped_url("version", found, 0).replace("/0.json", "/{n}.json"),
            },
        )
        scoped = found.name != DEFAULT_PROMPT
        context = {
            "named": found,
            "scoped": scoped,
            "current": current,
            "open_editor": self.open_editor,
            "config": config,
            "catalog_groups": catalog_groups(config["catalog"]),
            "modal": {
                "title": "Edit the system prompt template",
                "version_label": "default" if current.is_default else f"v{current.version}",
                "save_url": scoped_url("save", found),
                "history_url": scoped_url("history", found),
                "etag": current.etag,
                "settings": {"compress": current.compress},
            },
            # Only prompt authors see conversations here; others get no count at all.
            "conversation_count": (
                selectors.conversation_count(user=request.user, cap=COUNT_CAP, prompt=found)
                if request.user.has_perm(CONVERSATION_VIEW_PERMISSION)
                else None
            ),
            "conversation_count_cap": COUNT_CAP,
            "conversations_url": prompt_conversations_url(found),
            "cwd": cwd,
            "recent_cwds": recent_cwds,
            # What saving this prompt's working copy does: its own production label.
            "save_banner": save_banner(request, prompt=found),
            **preview,
        }
        return render(request, "editor/index.html", context)


@dataclass(frozen=True)
class SaveBanner:
    """What ``editor/_save_banner.html`` says on every page that saves the working copy:
    ``mode`` ``ships`` (production follows it), ``partial`` (a split of production
    has a ``latest`` arm of ``share``) or ``draft``; what production serves, in words;
    the other labels each save reaches; the Releases page's URL (``None`` for a user
    who may not open it: no link to a page that answers 403)."""

    mode: str
    serves: str
    share: str
    others: tuple[str, ...]
    releases_url: str | None


def save_banner(request: HttpRequest, *, prompt: Prompt | None = None) -> SaveBanner:
    """The save banner of a page that saves ``prompt``'s working copy (``None``:
    ``default``'s; the library's pages): one query, the prompt's labels."""
    may_open = request.user.has_perm(TEMPLATE_EDIT_PERMISSION)
    return save_banner_of(
        save_reach(prompt=prompt),
        releases_url=scoped_url("releases", prompt) if may_open else None,
    )


def prompt_conversations_url(prompt: Prompt) -> str:
    """The list of ``prompt``'s conversations alone: today's ``/conversations/`` while
    ``default`` is the only prompt (it lists every prompt's conversations), else
    ``/editor/p/<name>/-/conversations/`` (``default``'s too)."""
    if prompt.name == DEFAULT_PROMPT and not prompts_exist_beyond_default():
        return reverse("editor:conversations")
    return reverse(f"editor:{SCOPED_PREFIX}conversations", args=[prompt.name])


def save_banner_of(reach: SaveReach, *, releases_url: str | None) -> SaveBanner:
    weight = reach.production_weight
    mode = "ships" if reach.ships else "partial" if weight else "draft"
    return SaveBanner(
        mode=mode,
        serves=_serves(reach.production.target),
        share=percent(weight),
        others=tuple(
            _reached(state.name, state.target, protected=state.protected) for state in reach.others
        ),
        releases_url=releases_url,
    )


def _serves(target: Target) -> str:
    """What a label serves, in words: "release 3", "a split (release 3 90%, latest 10%)"."""
    if isinstance(target, Split):
        arms = ", ".join(f"{describe_pointer(a.pointer)} {percent(a.weight)}" for a in target.arms)
        return f"a split ({arms})"
    return describe_pointer(target.pointer)


def _reached(name: str, target: Target, *, protected: bool) -> str:
    """A label a save reaches: "staging", "canary (10%)", "eu (protected)"."""
    notes = ["protected"] if protected else []
    weight = latest_weight(target)
    if weight < SPLIT_TOTAL:
        notes.append(percent(weight))
    return f"{name} ({', '.join(notes)})" if notes else name


def editor_config(
    request: HttpRequest,
    *,
    text: str,
    etag: str,
    version: int,
    can_edit: bool,
    settings: dict[str, object],
    urls: dict[str, str],
    fragment: dict[str, object] | None = None,
) -> dict[str, Any]:
    """What ``static/editor/editor.js`` reads from the page (``json_script``): the same
    shape for the root template's editor and a fragment variant's."""
    return {
        "template": text,
        "etag": etag,
        "version": version,
        "canEdit": can_edit,
        # CodeMirror's <style> elements carry it (the page's Content-Security-Policy).
        "cspNonce": str(getattr(request, "csp_nonce", "")),
        "catalog": variable_catalog(),
        # The library's names, for the fragment: button and autocomplete.
        "fragments": sorted(library_source().names()),
        "debounceMs": PREVIEW_DEBOUNCE_MS,
        "settings": settings,
        "fragment": fragment,
        "urls": {"files": reverse("editor:files"), "cwd": reverse("editor:cwd"), **urls},
    }


class PreviewView(LoginRequiredMixin, View):
    """The preview partial for the editor's text (the root template, or a fragment's
    draft with ``fragment``) in a host context; nothing is stored."""

    def post(self, request: HttpRequest) -> HttpResponse:
        form = forms.PreviewForm(request.POST)
        if not form.is_valid():
            return form_errors(request, form)
        data = form.cleaned_data
        context = preview_context(
            text=data["template"],
            cwd=data["cwd"],
            model=data["model"],
            conversation_id=data["conversation_id"],
            provider=data["provider"],
            tools=data["tools"],
            variables=data["variables"],
            compress=data["compress"],
            fragment=data["fragment"],
        )
        return render(request, "editor/_preview.html", context)


class SaveView(LoginRequiredMixin, View):
    """Save the editor's text as a new version, only if the base version is current."""

    def post(self, request: HttpRequest, prompt: str | None = None) -> HttpResponse:
        found = page_prompt(prompt)
        if not request.user.has_perm(TEMPLATE_EDIT_PERMISSION):
            return save_problem(
                request,
                "You may preview but not save: ask an administrator to add you to the "
                "“Prompt authors” group.",
                status=403,
            )
        form = forms.SaveForm(request.POST)
        if not form.is_valid():
            return form_errors(request, form)
        text = form.cleaned_data["template"]
        base = form.cleaned_data["base_etag"]
        try:
            editors_check(request.user, found, action="edit")
            version = services.template_save(
                text=text,
                compress=form.cleaned_data["compress"],
                author=request.user,
                if_match=parse_etags(base) if base else None,
                prompt=found,
            )
        except errors.PromptForbidden as exc:
            return save_problem(request, str(exc), status=403)
        except errors.TemplateTooLarge as exc:
            return save_problem(request, str(exc), status=413)
        except errors.PreconditionFailed as exc:
            theirs = exc.current
            return conflict_answer(
                request,
                theirs=theirs,
                when=theirs.updated_at,
                mine=text,
                data={
                    "template": theirs.text,
                    "etag": theirs.etag,
                    "version": theirs.version,
                    "settings": {"compress": theirs.compress},
                },
            )
        saved = selectors.template_of(version)
        return saved_answer(request, version=saved.version, etag=saved.etag, author=saved.author)


def saved_answer(
    request: HttpRequest, *, version: int, etag: str, author: str | None
) -> HttpResponse:
    """The save status partial, with the event the editor page updates itself on."""
    response = render(request, "editor/_save_status.html", {"saved": {"version": version}})
    return trigger_client_event(
        response, "sysprompt:saved", {"version": version, "etag": etag, "author": author or ""}
    )


class HistoryView(LoginRequiredMixin, View):
    """A page of versions, newest first (``before`` continues after a number)."""

    def get(self, request: HttpRequest, prompt: str | None = None) -> HttpResponse:
        found = page_prompt(prompt)
        form = forms.HistoryForm(request.GET)
        before = form.cleaned_data["before"] if form.is_valid() else None
        versions = selectors.template_versions(before=before or None, prompt=found)
        page = list(versions.defer("text")[: HISTORY_PAGE_SIZE + 1])
        rows = [
            HistoryRow(
                number=version.number,
                author=version.author.get_username() if version.author else None,
                created_at=version.created_at,
                diff_url=scoped_url("version-diff", found, version.number),
                compress=version.compress,
            )
            for version in page
        ]
        context = history_context(
            rows,
            before=before or None,
            history_url=scoped_url("history", found),
            compare_url=scoped_url("versions-compare", found),
        )
        return render(request, "editor/_history.html", context)


@dataclass(frozen=True)
class HistoryRow:
    """One version in a History tab: the root template's or a fragment variant's."""

    number: int
    author: str | None
    created_at: datetime
    diff_url: str
    source: str = ""
    deleted: bool = False
    compress: bool = False


def history_context(
    rows: Sequence[HistoryRow],
    *,
    before: int | None,
    history_url: str,
    compare_url: str,
    hidden: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """What ``_history.html`` shows of a page of up to ``HISTORY_PAGE_SIZE + 1`` rows
    (one more than shown tells whether older ones follow). ``hidden`` are the compare
    form's fixed fields (a variant's provider and model)."""
    more = len(rows) > HISTORY_PAGE_SIZE
    page = list(rows[:HISTORY_PAGE_SIZE])
    separator = "&" if "?" in history_url else "?"
    return {
        "versions": page,
        "next_before": page[-1].number if more else None,
        "older_url": f"{history_url}{separator}before={page[-1].number}" if more else None,
        "continuation": bool(before),
        # The current version is the newest, so only a first page can hold it.
        "current_version": page[0].number if page and not before else None,
        # The compare form comes with a first page of two versions or more; it starts on
        # the newest two.
        "compare": (
            {"old": page[1].number, "new": page[0].number} if len(page) > 1 and not before else None
        ),
        "compare_url": compare_url,
        "compare_hidden": hidden,
    }


class VersionDiffView(LoginRequiredMixin, View):
    """A version against the editor's text."""

    def post(self, request: HttpRequest, number: int, prompt: str | None = None) -> HttpResponse:
        version = _version(number, prompt)
        form = forms.DiffForm(request.POST)
        if not form.is_valid():
            return form_errors(request, form)
        diff = text_diff(version.text, form.cleaned_data["template"])
        context = {"diff": diff, "version": version, "old_label": f"version {version.number}"}
        return render(request, "editor/_version_diff.html", context)


class VersionsDiffView(LoginRequiredMixin, View):
    """One saved version against another (``old`` → ``new``, either order)."""

    def get(
        self, request: HttpRequest, old: int, new: int, prompt: str | None = None
    ) -> HttpResponse:
        return _versions_diff(request, old=_version(old, prompt), new=_version(new, prompt))


class VersionsCompareView(LoginRequiredMixin, View):
    """The History tab's compare form: the versions chosen as "from" and "to"."""

    def get(self, request: HttpRequest, prompt: str | None = None) -> HttpResponse:
        form = forms.VersionsCompareForm(request.GET)
        if not form.is_valid():
            return form_errors(request, form)
        data = form.cleaned_data
        return _versions_diff(
            request, old=_version(data["old"], prompt), new=_version(data["new"], prompt)
        )


class VersionTextView(LoginRequiredMixin, View):
    """A version's text as JSON, for restoring it into the editor."""

    def get(self, request: HttpRequest, number: int, prompt: str | None = None) -> JsonResponse:
        version = _version(number, prompt)
        return JsonResponse(
            {
                "version": version.number,
                "template": version.text,
                "settings": {"compress": version.compress},
            }
        )


class FileSuggestView(LoginRequiredMixin, View):
    """File names under a cwd for ``[file:…]``: JSON, confined to the allowed roots."""

    def get(self, request: HttpRequest) -> JsonResponse:
        form = forms.FileSuggestForm(request.GET)
        if not form.is_valid():
            return JsonResponse({"files": [], "error": "Give a cwd."}, status=400)
        try:
            found = files.files_suggest(cwd=form.cleaned_data["cwd"], query=form.cleaned_data["q"])
        except errors.InvalidInput as exc:
            return JsonResponse({"files": [], "error": exc.message}, status=400)
        return JsonResponse({"files": found})


class CwdRememberView(LoginRequiredMixin, View):
    """Remember the working directory a preview ran in (POST ``cwd``): the user's editor
    opens on it next time. JSON: the list as stored, or 400 with why the cwd is refused."""

    def post(self, request: HttpRequest) -> JsonResponse:
        form = forms.CwdForm(request.POST)
        if not form.is_valid():
            return JsonResponse({"error": " ".join(map(str, form.errors["cwd"]))}, status=400)
        try:
            recent = cwds.cwd_remember(user=request.user, cwd=form.cleaned_data["cwd"])
        except errors.InvalidInput as exc:
            return JsonResponse({"error": exc.message}, status=400)
        return JsonResponse({"recent": recent})


class ConversationElsewhere(Exception):
    """A conversation reached under a prompt that is not its own (``stored.prompt``)."""

    def __init__(self, stored: ConversationPrompt) -> None:
        super().__init__(stored.conversation_id)
        self.stored = stored


class ConversationPagesMixin(LoginRequiredMixin, PermissionRequiredMixin, PromptScopedMixin):
    """The Conversations pages are for prompt authors: a user without the view
    permission is answered 403 (anonymous users go to the login page). What each
    author may do with a conversation is decided by the selectors and services.

    Under ``/editor/p/<name>/-/`` they are that prompt's; today's URLs list every
    prompt's conversations and open ``default``'s. A conversation reached under a
    prompt that is not its own is answered by the same page of its own prompt
    (:func:`conversation_moved`)."""

    permission_required = CONVERSATION_VIEW_PERMISSION
    request: HttpRequest

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            return super().dispatch(request, *args, **kwargs)
        except errors.ConversationAmbiguous as exc:
            # Several agent hosts use the id (ids are scoped to the host): pick one.
            messages.info(
                request,
                f"Several agent hosts use the conversation id {exc.conversation_id!r}: "
                "open the one you mean.",
            )
            query = urlencode({"q": exc.conversation_id})
            return redirect(f"{self.list_url()}?{query}")
        except ConversationElsewhere as elsewhere:
            return conversation_moved(request, elsewhere.stored)

    def names_prompt(self) -> bool:
        """Whether the URL names a prompt (``/editor/p/<name>/-/conversations/…``,
        ``default``'s too); today's URLs name none."""
        match = getattr(self.request, "resolver_match", None)
        return bool(match and match.kwargs.get("prompt"))

    def list_url(self) -> str:
        """The list of the page's scope: today's ``/conversations/`` (every prompt's),
        else the prompt's own."""
        if self.names_prompt():
            return reverse(f"editor:{SCOPED_PREFIX}conversations", args=[self.scope.name])
        return reverse("editor:conversations")

    def conversation(self, conversation_id: str) -> ConversationPrompt:
        """The conversation the URL names, when it is the page's prompt's;
        :class:`ConversationElsewhere` when it is another prompt's."""
        stored = _conversation(conversation_id, self.request)
        if stored.prompt_id != self.scope.pk:
            raise ConversationElsewhere(stored)
        return stored


def conversation_moved(request: HttpRequest, stored: ConversationPrompt) -> HttpResponse:
    """The same page (detail, compaction, construct, forget) under ``stored``'s own
    prompt, naming its agent host: a redirect, 307 for a POST (made again there, on the
    same conversation: a form of an older page, or today's URL of a named prompt's
    conversation, keeps working)."""
    url = _conversation_url(stored, page_name(request))
    if request.method in ("GET", "HEAD"):
        return redirect(url)
    return HttpResponseRedirect(url, status=307)


@dataclass(frozen=True)
class ConversationRow:
    """One row of the Conversations list: the stored prompt, its size in tokens for its
    frozen provider and model, its page (under its own prompt) and the list of its
    prompt's conversations."""

    stored: ConversationPrompt
    tokens: TokenCount
    url: str
    prompt_url: str


class ConversationListView(ConversationPagesMixin, View):
    """Stored prompts, searchable by id; htmx requests get the rows alone. Today's URL
    lists every prompt's (with a Prompt column once a prompt other than ``default``
    exists), ``/editor/p/<name>/-/conversations/`` that prompt's alone."""

    def get(self, request: HttpRequest) -> HttpResponse:
        form = forms.ConversationSearchForm(request.GET)
        query = ""
        before = None
        if form.is_valid():
            query = form.cleaned_data["q"] or ""
            before = form.cleaned_data["before"]
        scoped = self.names_prompt()
        prompts = selectors.conversation_prompts_search(
            user=request.user,
            query=query,
            before=before or None,
            prompt=self.scope if scoped else None,
        )
        page = list(prompts[: CONVERSATION_PAGE_SIZE + 1])
        more = len(page) > CONVERSATION_PAGE_SIZE
        page = page[:CONVERSATION_PAGE_SIZE]
        prompt_column = not scoped and prompts_exist_beyond_default()
        context = {
            "prompts": page,
            "rows": [
                ConversationRow(
                    stored=stored,
                    tokens=rendering.conversation_tokens(stored),
                    url=_conversation_url(stored),
                    prompt_url=(
                        reverse(f"editor:{SCOPED_PREFIX}conversations", args=[stored.prompt.name])
                        if prompt_column
                        else ""
                    ),
                )
                for stored in page
            ],
            "query": query,
            "next_before": page[-1].id if more else None,
            "paged": before is not None,
            "list_url": self.list_url(),
            "scope": self.scope if scoped else None,
            "prompt_column": prompt_column,
            "columns": 11 if prompt_column else 10,
        }
        template = (
            "editor/_conversation_rows.html"
            if HtmxDetails(request)
            else "editor/conversations.html"
        )
        response = render(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response


class ConversationDetailView(ConversationPagesMixin, View):
    """One stored prompt. Reading it resolves nothing: what compaction would change is
    rendered only when asked for (:class:`ConversationCompactionView`)."""

    def get(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        return _conversation_page(request, self.conversation(conversation_id), preview=None)


class ConversationCompactionView(ConversationPagesMixin, View):
    """What compaction would change (POST: it reads files and runs git in the stored
    cwd); htmx requests get the partial, others the page with it."""

    def post(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        stored = self.conversation(conversation_id)
        with _conversation_rules():
            preview = rendering.conversation_compaction_preview(
                stored.conversation_id,
                user=request.user,
                build=conversation_build(prompt=self.scope),
                host_id=stored.owner_id,
            )
        if HtmxDetails(request):
            context = {"preview": preview, "fresh_from": _fresh_from(preview.build)}
            return render(request, "editor/_conversation_compaction.html", context)
        return _conversation_page(request, preview.stored, preview=preview)


class ConversationConstructView(ConversationPagesMixin, View):
    """Re-construct a conversation's prompt (POST) from what its agent host's label (else
    production) serves now."""

    def post(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        stored = self.conversation(conversation_id)
        try:
            with _conversation_rules():
                built = services.conversation_prompt_construct(
                    conversation_id=stored.conversation_id,
                    cwd=stored.cwd,
                    model=stored.model,
                    user=request.user,
                    host_id=stored.owner_id,
                    build=conversation_build(prompt=self.scope),
                ).prompt
        except errors.InvalidInput as exc:
            messages.error(request, f"Not re-constructed: {exc.message}")
        except errors.ResolutionBusy as exc:
            messages.error(request, f"Not re-constructed: {exc}")
        else:
            served = served_words(built.label, built.release, built.arm)
            messages.success(request, f"Re-constructed from {served}.")
        return redirect(_conversation_url(stored))


class ConversationForgetView(ConversationPagesMixin, View):
    """Forget a conversation's prompt (POST); its next turn constructs a new one."""

    def post(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        stored = self.conversation(conversation_id)
        with _conversation_rules():
            services.conversation_prompt_delete(
                conversation_id=stored.conversation_id,
                user=request.user,
                host_id=stored.owner_id,
            )
        messages.success(request, f"Forgot the prompt of {stored.conversation_id}.")
        return redirect(self.list_url())


@dataclass(frozen=True)
class CatalogGroup:
    type: str
    entries: list[CatalogEntry]


def catalog_groups(catalog: list[CatalogEntry]) -> list[CatalogGroup]:
    return [
        CatalogGroup(type=kind, entries=list(entries))
        for kind, entries in groupby(catalog, key=lambda entry: entry["type"])
    ]


def default_cwd() -> str:
    roots = real_roots(app_settings().allowed_roots)
    return roots[0] if roots else ""


def user_cwds(request: HttpRequest) -> tuple[str, list[str]]:
    """The cwd an editor page previews in (the user's newest still valid, else the first
    allowed root) and the user's working directories, newest first (``editor.cwds``)."""
    recent = cwds.recent_cwds(request.user)
    return cwds.preview_cwd(recent, default_cwd()), recent


def form_errors(request: HttpRequest, form: django_forms.Form) -> HttpResponse:
    message = "; ".join(
        f"{field}: {' '.join(str(error) for error in errors)}"
        for field, errors in form.errors.items()
    )
    return save_problem(request, message, status=400)


def save_problem(request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    response = render(request, "editor/_save_status.html", {"problem": message}, status=status)
    return partial(response)


def partial(response: HttpResponse) -> HttpResponse:
    """Mark an error answer as a partial for htmx to swap (``static/js/app.js``)."""
    response[PARTIAL_HEADER] = "1"
    return response


def conflict_answer(
    request: HttpRequest,
    *,
    theirs: Any,
    when: datetime | None,
    mine: str,
    data: dict[str, Any],
) -> HttpResponse:
    """412 with the conflict partial: their version (``text``, ``version``, ``author``)
    against the editor's text, retargeted to the conflict dialog; ``data`` is what
    Take theirs / Keep mine need (text, ETag, version, settings)."""
    context = {
        "theirs": theirs,
        "when": when,
        "diff": text_diff(theirs.text, mine),
        "old_label": f"their version {theirs.version}",
        "new_label": "your text",
        "theirs_data": data,
    }
    response = partial(render(request, "editor/_conflict.html", context, status=412))
    response = retarget(response, "#conflict-body")
    response = reswap(response, "innerHTML")
    return trigger_client_event(
        response, "sysprompt:conflict", {"version": data["version"], "etag": data["etag"]}
    )


def _version(number: int, prompt: str | None = None) -> TemplateVersion:
    version = selectors.template_version(number, prompt=page_prompt(prompt))
    if version is None:
        raise Http404(f"There is no version {number}.")
    return version


def _versions_diff(
    request: HttpRequest, *, old: TemplateVersion, new: TemplateVersion
) -> HttpResponse:
    context = {
        "diff": text_diff(old.text, new.text),
        "old_version": old,
        "new_version": new,
        "old_label": f"version {old.number}",
        "new_label": f"version {new.number}",
    }
    return render(request, "editor/_versions_diff.html", context)


@contextmanager
def _conversation_rules() -> Iterator[None]:
    """The selectors' and services' refusals as the editor's 404 and 403 pages."""
    try:
        yield
    except errors.ConversationNotFound:
        raise Http404("No such conversation.") from None
    except errors.ConversationForbidden as exc:
        raise PermissionDenied(str(exc)) from None


def _conversation_url(stored: ConversationPrompt, page: str = "conversation") -> str:
    """The conversation's ``page`` (its page, ``conversation-forget``…) under its own
    prompt, naming its agent host (ids are scoped to the host)."""
    url = scoped_url(page, stored.prompt, stored.conversation_id)
    if stored.owner is None:
        return url
    return f"{url}?{urlencode({'host': stored.owner.get_username()})}"


def _conversation(conversation_id: str, request: HttpRequest) -> ConversationPrompt:
    try:
        validation.conversation_id_check(conversation_id)
    except errors.InvalidInput:
        raise Http404("No such conversation.") from None
    host = request.GET.get("host")
    host_id = None
    if host is not None:  # the agent host whose conversation it is (ids are per host)
        users = get_user_model()._default_manager
        host_id = (
            users.filter(**{get_user_model().USERNAME_FIELD: host})
            .values_list("pk", flat=True)
            .first()
        )
        if host_id is None:
            raise Http404("No such conversation.")
    with _conversation_rules():
        return selectors.conversation_prompt_visible(
            conversation_id, user=request.user, host_id=host_id
        )


def _conversation_page(
    request: HttpRequest,
    stored: ConversationPrompt,
    *,
    preview: rendering.CompactionPreview | None,
) -> HttpResponse:
    context = {
        "stored": stored,
        # A named prompt's conversation says whose it is; default's page looks as before.
        "prompt_name": None if stored.prompt.name == DEFAULT_PROMPT else stored.prompt.name,
        "tokens": rendering.conversation_tokens(stored),
        "built_from": built_from(stored.release, stored.arm),
        # What a fresh render (compaction, Re-construct) would be built from now.
        "fresh_from": _fresh_from(preview.build if preview else _build_now(stored)),
        "owner": stored.owner.get_username() if stored.owner else None,
        "access": selectors.conversation_access(stored, user=request.user),
        "preview": preview,
        "instructions": app_settings().compaction_instructions,
        "host_variables": sorted((stored.variables or {}).items()),
        "thread_override": (
            None if stored.override is None else json.dumps(stored.override, indent=2)
        ),
        "fragments_used": fragment_rows(_stored_uses(stored.fragments_used)),
    }
    return render(request, "editor/conversation.html", context)


def built_from(release: int | None, arm: int | None) -> str:
    """What a label served, in words: "release 3", "the working copy (latest)", and
    the split's arm when there was one ("release 3, arm 1 of a split": from 0, as the
    API's ``arm``)."""
    what = "the working copy (latest)" if release is None else f"release {release}"
    return what if arm is None else f"{what}, arm {arm} of a split"


def served_words(label: str, release: int | None, arm: int | None) -> str:
    """ "what production serves now: release 3" (see :func:`built_from`)."""
    return f"what {label} serves now: {built_from(release, arm)}"


def _fresh_from(build: Build | None) -> str | None:
    return None if build is None else served_words(build.label, build.release, build.arm)


def _build_now(stored: ConversationPrompt) -> Build | None:
    """What a construct or compaction of ``stored`` would build from now (its agent
    host's label, else production; the label and a release's template read, nothing
    rendered); ``None`` if that cannot be told (a label pointing at a missing release)."""
    try:
        return conversation_build()(
            conversation_id=stored.conversation_id, owner_id=stored.owner_id, prompt=stored.prompt
        )
    except errors.SyspromptError:
        return None


def _stored_uses(stored: object) -> list[FragmentUse]:
    """The fragments a conversation used, as stored (``FragmentUse.as_dict`` each);
    anything else is skipped."""
    uses = []
    for item in stored if isinstance(stored, list) else []:
        try:
            uses.append(
                FragmentUse(
                    name=str(item["name"]),
                    provider=item.get("provider"),
                    model=item.get("model"),
                    version=int(item["version"]),
                )
            )
        except (TypeError, KeyError, ValueError, AttributeError):
            continue
    return uses
