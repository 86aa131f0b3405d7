"""The Library pages: the fragments as a tree, and each variant in the editor.

Pipeline: ``/library/`` shows ``selectors.fragments_list(search=q)`` as a tree by name
segments (``env/`` → ``git-repository``), each fragment with its variants, their
sizes in tokens (for each variant's provider and model: :func:`variant_tokens`) and
their flags (edited, newer default, pinned, deleted); the search box asks htmx for the tree
alone (``Vary: HX-Request``) and pushes ``?q=``. ``/library/<name>?provider=&model=``
shows one variant — its flags, the shipped-vs-yours diff with Adopt default / Keep mine
when a newer default is available, Delete / Restore, the fragment's other variants and
"New variant" — and ``…/-/edit`` the same page with the editor open. The editor is the
root template's (``editor/_editor_modal.html``, ``static/editor/editor.js``); its
requests go to the variant's endpoints below ``/library/<name>/-/`` and through
``sysprompt.library.services`` (If-Match, history, restore, conflicts).

Reading needs a login; writing the author permission the template editor checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import parse_etags
from django.views import View
from django_htmx.middleware import HtmxDetails

from sysprompt import errors
from sysprompt.editor import forms, library_forms
from sysprompt.editor.library_links import variant_label, variant_url
from sysprompt.editor.preview import assignments_parse, assignments_text, preview_context
from sysprompt.editor.views import (
    HISTORY_PAGE_SIZE,
    HistoryRow,
    catalog_groups,
    conflict_answer,
    editor_config,
    form_errors,
    history_context,
    save_banner,
    save_problem,
    saved_answer,
    user_cwds,
)
from sysprompt.library import selectors, services
from sysprompt.library.validation import fragment_name_valid, variant_key_valid
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt.prompts.token_counts import count_tokens
from sysprompt_core.diff import text_diff
from sysprompt_core.library import choose_variant, compress
from sysprompt_core.tokens import TokenCount

LIBRARY_WRITE_PERMISSION = TEMPLATE_EDIT_PERMISSION
"""Writing the library takes what writing the root template takes (spec §8)."""


def may_write(request: HttpRequest) -> bool:
    return bool(request.user.has_perm(LIBRARY_WRITE_PERMISSION))


# --- the tree --------------------------------------------------------------------------


@dataclass(frozen=True)
class VariantRow:
    """One variant in the tree or on a variant page, with its size (``None``: deleted)."""

    state: selectors.VariantState
    label: str
    url: str
    size: TokenCount | None = None


def variant_tokens(state: selectors.VariantState) -> TokenCount | None:
    """A live variant's source text in tokens for its own provider and model (the
    default variant's: an estimate, it serves every provider), compressed first when
    its compress is on — what a template including it gets before its variables are
    resolved; ``None`` for a deleted variant."""
    if state.deleted:
        return None
    text = compress(state.text) if state.compress else state.text
    return count_tokens(text, provider=state.provider, model=state.model)


@dataclass
class TreeNode:
    """A name segment: a fragment (``variants``), a folder of others, or both."""

    segment: str
    path: str
    variants: list[VariantRow] = field(default_factory=list)
    children: list[TreeNode] = field(default_factory=list)
    is_fragment: bool = False


def variant_rows(states: Iterable[selectors.VariantState]) -> list[VariantRow]:
    """Default first, then by provider and model."""
    ordered = sorted(states, key=lambda s: (s.provider or "", s.model or ""))
    return [
        VariantRow(
            state=state,
            label=variant_label(state.provider, state.model),
            url=variant_url("library-variant", state.name, state.provider, state.model),
            size=variant_tokens(state),
        )
        for state in ordered
    ]


def library_tree(summaries: Iterable[selectors.FragmentSummary]) -> list[TreeNode]:
    """The fragments as a tree by name segments, sorted by name."""
    root = TreeNode(segment="", path="")
    for summary in sorted(summaries, key=lambda s: s.name):
        node = root
        parts = summary.name.split("/")
        for depth, segment in enumerate(parts):
            path = "/".join(parts[: depth + 1])
            child = next((c for c in node.children if c.segment == segment), None)
            if child is None:
                child = TreeNode(segment=segment, path=path)
                node.children.append(child)
            node = child
        node.is_fragment = True
        node.variants = variant_rows(summary.variants)
    return root.children


class LibraryListView(LoginRequiredMixin, View):
    """The fragments as a tree; ``?q=`` searches names and texts. htmx requests (the
    search box) get the tree alone."""

    def get(self, request: HttpRequest) -> HttpResponse:
        form = library_forms.LibrarySearchForm(request.GET)
        query = form.cleaned_data["q"] if form.is_valid() else ""
        return _library_page(request, query=query or "", new_form=None)


def _library_page(
    request: HttpRequest,
    *,
    query: str,
    new_form: library_forms.NewVariantForm | None,
    new_error: str | None = None,
    status: int = 200,
) -> HttpResponse:
    summaries = selectors.fragments_list(search=query or None)
    context = {
        "tree": library_tree(summaries),
        "count": len(summaries),
        "query": query,
        "can_edit": may_write(request),
        "new_form": new_form or library_forms.NewVariantForm(),
        "new_error": new_error,
    }
    htmx = HtmxDetails(request)
    partial = bool(htmx) and not htmx.history_restore_request
    template = "editor/_library_tree.html" if partial else "editor/library.html"
    if not partial:
        context["save_banner"] = save_banner(request)
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


class LibraryNewView(LoginRequiredMixin, View):
    """ "New fragment" and "New variant": check the name and key, then open the editor
    on that variant (nothing is written until it is saved)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not may_write(request):
            raise PermissionDenied("Writing the library needs the prompt author permission.")
        form = library_forms.NewVariantForm(request.GET)
        if not form.is_valid():
            return _library_page(request, query="", new_form=form, status=400)
        data = form.cleaned_data
        try:
            name = fragment_name_valid(data["name"], "name")
            key = variant_key_valid(data["provider"] or None, data["model"] or None)
        except errors.InvalidInput as exc:
            message = f"{exc.field}: {exc.message}"
            return _library_page(request, query="", new_form=form, new_error=message, status=400)
        return redirect(variant_url("library-edit", name, key.provider, key.model))


# --- a variant ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """The variant a request names: the fragment's name and the normalised key."""

    name: str
    provider: str | None
    model: str | None

    def url(self, view: str, *args: object) -> str:
        return variant_url(view, self.name, self.provider, self.model, *args)

    @property
    def label(self) -> str:
        return variant_label(self.provider, self.model)


def _variant(request: HttpRequest, name: str) -> Variant:
    """The variant of a URL; 404 for a name or key that cannot be one."""
    form = library_forms.VariantKeyForm(request.GET)
    if not form.is_valid():
        raise Http404("No such variant.")
    try:
        name = fragment_name_valid(name, "name")
        key = variant_key_valid(
            form.cleaned_data["provider"] or None, form.cleaned_data["model"] or None
        )
    except errors.InvalidInput:
        raise Http404("No such variant.") from None
    return Variant(name=name, provider=key.provider, model=key.model)


def _settings_data(state: Any) -> dict[str, Any]:
    return {
        "compress": bool(state.compress),
        "strategy": state.strategy,
        "defaults": dict(state.defaults or {}),
    }


class VariantPageView(LoginRequiredMixin, View):
    """A variant's page; ``open_editor`` shows it with the editor already open. A variant
    that does not exist yet opens (for authors) on the text of the variant it would fall
    back to, and exists once saved."""

    open_editor = False

    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        variant = _variant(request, name)
        view = "library-edit" if self.open_editor else "library-variant"
        canonical = variant.url(view)
        if request.get_full_path() != canonical:
            return redirect(canonical)
        can_edit = may_write(request)
        current = selectors.variant_current(variant.name, variant.provider, variant.model)
        if current is None and not can_edit:
            raise Http404(f"There is no fragment {variant.name!r} with that variant.")
        siblings = _siblings(variant.name)
        if current is not None:
            text, etag, version = current.text, current.etag, current.version
            settings = _settings_data(current)
        else:
            text, settings = _fallback(variant, siblings)
            etag, version = "", 0
        cwd, recent_cwds = user_cwds(request)
        preview = preview_context(
            text=text,
            cwd=cwd,
            provider=variant.provider or "",
            model=variant.model or "",
            compress=bool(settings["compress"]),
            fragment=variant.name,
        )
        fragment: dict[str, object] = {
            "name": variant.name,
            "provider": variant.provider,
            "model": variant.model,
        }
        config = editor_config(
            request,
            text=text,
            etag=etag,
            version=version,
            can_edit=can_edit,
            settings={**settings, "defaults": assignments_text(settings["defaults"])},
            urls={
                "index": variant.url("library-variant"),
                "editor": variant.url("library-edit"),
                "version": _numbered(variant.url("library-version", 0)),
            },
            fragment=fragment,
        )
        context = {
            "variant": variant,
            "current": current,
            "size": None if current is None else variant_tokens(current),
            "siblings": siblings,
            "can_edit": can_edit,
            "open_editor": self.open_editor,
            "config": config,
            "catalog_groups": catalog_groups(config["catalog"]),
            "newer_default_diff": (
                text_diff(current.text, current.shipped_text)
                if current is not None and current.newer_default and current.shipped_text
                else None
            ),
            "restore_number": _restorable(variant) if current and current.deleted else None,
            "action_urls": {
                "delete": variant.url("library-delete"),
                "restore": variant.url("library-restore"),
                "adopt": variant.url("library-adopt"),
                "keep_mine": variant.url("library-keep-mine"),
            },
            "modal": {
                "title": f"Edit fragment {variant.name} ({variant.label})",
                "version_label": f"v{version}" if version else "new",
                "save_url": variant.url("library-save"),
                "history_url": variant.url("library-history"),
                "etag": etag,
                "fragment": fragment,
                "settings": {
                    **settings,
                    "defaults_text": assignments_text(settings["defaults"]),
                },
            },
            "save_banner": save_banner(request),
            "recent_cwds": recent_cwds,
            **preview,
        }
        return render(request, "editor/library_variant.html", context)


def _numbered(url: str) -> str:
    """A version's URL with ``{n}`` for its number (the last ``/0.json``: a fragment's
    name may hold ``0.json`` too)."""
    head, _, tail = url.rpartition("/0.json")
    return f"{head}/{{n}}.json{tail}"


def _siblings(name: str) -> list[VariantRow]:
    """Every variant of fragment ``name`` (deleted ones too)."""
    for summary in selectors.fragments_list(search=name):
        if summary.name == name:
            return variant_rows(summary.variants)
    return []


def _fallback(variant: Variant, siblings: Sequence[VariantRow]) -> tuple[str, dict[str, Any]]:
    """A new variant starts from the live variant its provider and model fall back to."""
    live = {row.state.key: row.state for row in siblings if not row.state.deleted}
    key = choose_variant(live.keys(), variant.provider, variant.model)
    if key is None:
        return "", {"compress": False, "strategy": "append", "defaults": {}}
    return live[key].text, _settings_data(live[key])


def _restorable(variant: Variant) -> int | None:
    """The newest version of a deleted variant that is not a deletion."""
    versions = selectors.variant_versions(variant.name, variant.provider, variant.model)
    for number, deleted in versions.values_list("number", "deleted")[: HISTORY_PAGE_SIZE * 4]:
        if not deleted:
            return int(number)
    return None


class VariantSaveView(LoginRequiredMixin, View):
    """Save the editor's text and settings as the variant's new version, only if the
    base version is current (If-Match); a conflict answers the conflict dialog."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        variant = _variant(request, name)
        if not may_write(request):
            return save_problem(
                request,
                "You may preview but not save: ask an administrator to add you to the "
                "“Prompt authors” group.",
                status=403,
            )
        form = library_forms.VariantSaveForm(request.POST)
        if not form.is_valid():
            return form_errors(request, form)
        data = form.cleaned_data
        text = data["template"]
        base = data["base_etag"]
        try:
            defaults = assignments_parse(data["defaults"], "defaults")
            if not base:
                # A new variant: someone may have created it meanwhile.
                theirs = selectors.variant_current(variant.name, variant.provider, variant.model)
                if theirs is not None:
                    return _variant_conflict(request, theirs, text)
            saved = services.variant_save(
                name=variant.name,
                provider=variant.provider,
                model=variant.model,
                text=text,
                compress=data["compress"],
                defaults=defaults,
                strategy=data["strategy"] or "append",
                author=request.user,
                if_match=parse_etags(base) if base else None,
            )
        except errors.TemplateTooLarge as exc:
            return save_problem(request, str(exc), status=413)
        except errors.VariantConflict as exc:
            if exc.current is None:
                return save_problem(request, str(exc), status=412)
            return _variant_conflict(request, exc.current, text)
        except errors.InvalidInput as exc:
            return save_problem(request, f"{exc.field}: {exc.message}", status=400)
        return saved_answer(request, version=saved.version, etag=saved.etag, author=saved.author)


def _variant_conflict(
    request: HttpRequest, theirs: selectors.VariantState, mine: str
) -> HttpResponse:
    return conflict_answer(
        request,
        theirs=theirs,
        when=theirs.created_at,
        mine=mine,
        data={
            "template": theirs.text,
            "etag": theirs.etag,
            "version": theirs.version,
            "settings": _settings_data(theirs),
        },
    )


class VariantHistoryView(LoginRequiredMixin, View):
    """A page of the variant's versions, newest first (``before`` continues)."""

    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        variant = _variant(request, name)
        form = forms.HistoryForm(request.GET)
        before = form.cleaned_data["before"] if form.is_valid() else None
        versions = selectors.variant_versions(
            variant.name, variant.provider, variant.model, before=before or None
        )
        page = list(versions.select_related("author").defer("text")[: HISTORY_PAGE_SIZE + 1])
        rows = [
            HistoryRow(
                number=version.number,
                author=version.author.get_username() if version.author else None,
                created_at=version.created_at,
                diff_url=variant.url("library-version-diff", version.number),
                source=version.source,
                deleted=version.deleted,
                compress=version.compress,
            )
            for version in page
        ]
        context = history_context(
            rows,
            before=before or None,
            history_url=variant.url("library-history"),
            compare_url=reverse("editor:library-versions-compare", args=[variant.name]),
            hidden=[
                (k, v) for k, v in (("provider", variant.provider), ("model", variant.model)) if v
            ],
        )
        context["fragment"] = variant
        return render(request, "editor/_history.html", context)


def _version(variant: Variant, number: int) -> Any:
    version = selectors.variant_version(variant.name, variant.provider, variant.model, number)
    if version is None:
        raise Http404(f"There is no version {number} of this variant.")
    return version


class VariantVersionTextView(LoginRequiredMixin, View):
    """A version's text and settings as JSON, for restoring it into the editor."""

    def get(self, request: HttpRequest, name: str, number: int) -> JsonResponse:
        version = _version(_variant(request, name), number)
        return JsonResponse(
            {
                "version": version.number,
                "template": version.text,
                "settings": _settings_data(version),
            }
        )


class VariantVersionDiffView(LoginRequiredMixin, View):
    """A version against the editor's text."""

    def post(self, request: HttpRequest, name: str, number: int) -> HttpResponse:
        version = _version(_variant(request, name), number)
        form = forms.DiffForm(request.POST)
        if not form.is_valid():
            return form_errors(request, form)
        diff = text_diff(version.text, form.cleaned_data["template"])
        context = {"diff": diff, "version": version, "old_label": f"version {version.number}"}
        return render(request, "editor/_version_diff.html", context)


class VariantVersionsDiffView(LoginRequiredMixin, View):
    """One saved version against another (either order)."""

    def get(self, request: HttpRequest, name: str, old: int, new: int) -> HttpResponse:
        variant = _variant(request, name)
        return _versions_diff(request, _version(variant, old), _version(variant, new))


class VariantVersionsCompareView(LoginRequiredMixin, View):
    """The History tab's compare form for a variant."""

    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        variant = _variant(request, name)
        form = forms.VersionsCompareForm(request.GET)
        if not form.is_valid():
            return form_errors(request, form)
        data = form.cleaned_data
        return _versions_diff(
            request, _version(variant, data["old"]), _version(variant, data["new"])
        )


def _versions_diff(request: HttpRequest, old: Any, new: Any) -> HttpResponse:
    context = {
        "diff": text_diff(old.text, new.text),
        "old_version": old,
        "new_version": new,
        "old_label": f"version {old.number}",
        "new_label": f"version {new.number}",
    }
    return render(request, "editor/_versions_diff.html", context)


# --- actions on a variant (plain forms: POST, then back to the variant's page) -----------


class VariantActionView(LoginRequiredMixin, View):
    """A write on a variant by an author; the page says what happened."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        variant = _variant(request, name)
        if not may_write(request):
            raise PermissionDenied("Writing the library needs the prompt author permission.")
        try:
            message = self.act(request, variant)
        except errors.FragmentNotFound as exc:
            raise Http404(str(exc)) from None
        except errors.VariantConflict as exc:
            messages.error(request, f"Nothing changed: {exc}")
        except errors.InvalidInput as exc:
            messages.error(request, f"Nothing changed: {exc.message}")
        else:
            messages.success(request, message)
        return redirect(variant.url("library-variant"))

    def act(self, request: HttpRequest, variant: Variant) -> str:
        raise NotImplementedError


class VariantDeleteView(VariantActionView):
    def act(self, request: HttpRequest, variant: Variant) -> str:
        state = services.variant_delete(
            name=variant.name, provider=variant.provider, model=variant.model, author=request.user
        )
        return (
            f"Deleted the {variant.label} variant of {variant.name} (version {state.version}); "
            "Restore brings it back."
        )


class VariantRestoreView(VariantActionView):
    def act(self, request: HttpRequest, variant: Variant) -> str:
        form = library_forms.RestoreForm(request.POST)
        if not form.is_valid():
            raise errors.InvalidInput("number", "Give the number of the version to restore.")
        state = services.variant_restore(
            name=variant.name,
            provider=variant.provider,
            model=variant.model,
            number=form.cleaned_data["number"],
            author=request.user,
        )
        return f"Restored version {form.cleaned_data['number']} as version {state.version}."


class VariantAdoptView(VariantActionView):
    def act(self, request: HttpRequest, variant: Variant) -> str:
        state = services.default_adopt(
            name=variant.name, provider=variant.provider, model=variant.model, author=request.user
        )
        return f"Adopted the shipped default as version {state.version}."


class VariantKeepMineView(VariantActionView):
    def act(self, request: HttpRequest, variant: Variant) -> str:
        services.default_keep_mine(
            name=variant.name, provider=variant.provider, model=variant.model, author=request.user
        )
        return "Kept your text: this variant is pinned, later installs leave it alone."
