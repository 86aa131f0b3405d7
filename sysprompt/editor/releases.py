"""The Releases page (docs/editor.md, "Releases page"; docs/releases.md): labels with
their targets, what the working copy changes since the release production serves,
releases and comparisons, Publish with the impact report first, label history and
Rollback, test contexts. Prompt authors only (the template's change permission, as
the API's ``IsReleaseAuthor``); agent hosts get 403.

* ``/releases/`` — the labels (a split drawn as a bar of its arms), the working copy
  against what production serves, Publish (label + candidate), "Set a label", Create
  release, the releases newest first (20 a page; htmx asks for the rows alone, with
  ``Vary: HX-Request``), the comparison form and the test contexts.
* ``/releases/publish?label=&candidate=`` — the impact report, a gated label's gate
  (``release_gate``: the newest run for the candidate, what the move misses, a button
  that starts a run at ``/releases/publish/evaluate``), and only below them the confirm
  form (message; a publisher may force a move the gate refuses) that POSTs to the same
  URL; htmx asks for the report alone.
* ``/releases/compare?release=&with=`` — a release against the working copy or another.
* ``/releases/labels/<name>/`` — the label's history, its gate (set, changed or removed
  at ``…/gate``: the target kept) and Rollback (asks first; when the label's gate would
  refuse it, the dialog says so and offers a publisher the forced rollback).
* ``/releases/test-contexts/`` — a new test context; ``…/<name>/`` edits one.

Every page is also one prompt's, under ``/editor/p/<name>/-/releases/…``
(``sysprompt.editor.scoping``; today's URLs are ``default``'s): its releases (numbered
per prompt), its labels (a label name's protection is deployment-wide), its test
contexts; every read and write passes that prompt (``self.scope``) and every link,
form and redirect stays under it.

Every read is a selector and every write a service of ``sysprompt.releases`` (the same
the API calls): they check names, targets and who may move a protected label, so a
refusal here is the API's. Who may comes first, before a form's fields are read: a
write to a prompt restricted to groups the user is in none of is refused (403, the
words on the page, audited as the API's ``prompt.refused``), and so is a change of a
protected label. An ``InvalidInput`` shows under the field it names (400);
``LabelProtected`` and ``PromptForbidden`` say what it takes (403); ``GateNotPassed``
says what the gate misses and names the "Force past the gate" checkbox (409); nothing
is changed by any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views import View
from django_htmx.middleware import HtmxDetails

from sysprompt import errors
from sysprompt.editor import release_forms as rf
from sysprompt.editor.preview import assignments_parse, assignments_text
from sysprompt.editor.release_gate import (
    FORBIDDEN,
    gate_form_context,
    gate_panel,
    gate_run_start,
    gate_save,
    refusal_text,
)
from sysprompt.editor.scoping import PromptScopedMixin, scoped_url
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt.releases import selectors, services
from sysprompt.releases.gates import move_reasons
from sysprompt.releases.impact import impact_report
from sysprompt.releases.permissions import PUBLISH_PERMISSION
from sysprompt.releases.validation import label_name_valid, pointer_valid
from sysprompt_core.prompt_names import DEFAULT_PROMPT
from sysprompt_core.releases import (
    LATEST,
    PRODUCTION,
    Pointer,
    Split,
    Target,
    describe_pointer,
    percent,
)

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt

RELEASES_PAGE_SIZE = 20
HISTORY_PAGE_SIZE = 100
CANDIDATE_RELEASES = 50
"""How many of the newest releases the Publish form offers beside the working copy."""


class ReleasePagesMixin(LoginRequiredMixin, PermissionRequiredMixin, PromptScopedMixin):
    """403 for a user who is no prompt author (anonymous users go to the login page);
    ``self.scope`` is the prompt the URL names (404 for an unknown one)."""

    permission_required = TEMPLATE_EDIT_PERMISSION

    def write_refusal(self, request: HttpRequest, action: str) -> str | None:
        """What refuses ``request``'s user ``action`` on the page's prompt (it, or a
        folder above it, is restricted to groups they are in none of; audited as
        ``prompt.refused``), in the words the page shows; ``None`` when they may. The
        same check as the write's service and the API's, made before the body is read."""
        try:
            services.prompt_write_check(user=request.user, prompt=self.scope, action=action)
        except errors.PromptForbidden as error:
            return str(error)
        return None


def scope_context(prompt: Prompt) -> dict[str, Any]:
    """What every Releases template gets: ``scope_name``, the prompt's name for the
    headings (``None`` for ``default``: its pages read as they always did)."""
    return {"scope_name": None if prompt.name == DEFAULT_PROMPT else prompt.name}


# --- what the templates show -------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """One arm of a split as the bar draws it: from ``start`` for ``weight`` basis
    points (an SVG ``<rect>``'s x and width: attributes, which the CSP allows)."""

    index: int
    pointer: Pointer
    weight: int
    start: int

    @property
    def name(self) -> str:
        return describe_pointer(self.pointer)

    @property
    def percent(self) -> str:
        return percent(self.weight)


def segments(target: Target) -> list[Segment]:
    """The bar of a split (none for a single target)."""
    if not isinstance(target, Split):
        return []
    drawn: list[Segment] = []
    start = 0
    for index, arm in enumerate(target.arms):
        drawn.append(Segment(index, arm.pointer, arm.weight, start))
        start += arm.weight
    return drawn


@dataclass(frozen=True)
class LabelRow:
    state: selectors.LabelState
    segments: list[Segment]
    may_change: bool

    @property
    def single(self) -> str | None:
        target = self.state.target
        return None if isinstance(target, Split) else describe_pointer(target.pointer)


def _may_change(request: HttpRequest, state: selectors.LabelState) -> bool:
    return not state.protected or request.user.has_perm(PUBLISH_PERMISSION)


def _label_rows(request: HttpRequest, prompt: Prompt) -> list[LabelRow]:
    return [
        LabelRow(state, segments(state.target), _may_change(request, state))
        for state in selectors.labels_list(prompt)
    ]


def _releases(before: int | None, prompt: Prompt) -> dict[str, Any]:
    rows = list(selectors.releases_list(before=before, prompt=prompt)[: RELEASES_PAGE_SIZE + 1])
    more = len(rows) > RELEASES_PAGE_SIZE
    rows = rows[:RELEASES_PAGE_SIZE]
    return {
        "releases": rows,
        "next_before": rows[-1].number if more and rows else None,
        "paged": before is not None,
    }


def _page(request: HttpRequest, prompt: Prompt, status: int = 200, **forms: Any) -> HttpResponse:
    labels = _label_rows(request, prompt)
    production = next(row for row in labels if row.state.name == PRODUCTION)
    releases = _releases(None, prompt)
    context = {
        **scope_context(prompt),
        "labels": labels,
        "production": production,
        "changes": selectors.working_copy_changes(PRODUCTION, prompt=prompt),
        "may_publish": request.user.has_perm(PUBLISH_PERMISSION),
        "candidates": releases["releases"][:CANDIDATE_RELEASES],
        "test_contexts": selectors.test_contexts_list(prompt),
        "create_form": forms.get("create_form") or rf.ReleaseCreateForm(),
        "label_form": forms.get("label_form") or rf.LabelSetForm(initial={"kind": "release"}),
        **releases,
    }
    return render(request, "editor/releases.html", context, status=status)


# --- the page, releases, comparisons ------------------------------------------------------


class ReleasesPageView(ReleasePagesMixin, View):
    """The page; with ``?before=N`` from htmx, the releases' rows alone."""

    def get(self, request: HttpRequest) -> HttpResponse:
        before_text = request.GET.get("before", "")
        before = (
            int(before_text)
            if before_text.isascii() and before_text.isdigit() and len(before_text) <= 10
            else None
        )
        if HtmxDetails(request):
            response = render(request, "editor/_release_rows.html", _releases(before, self.scope))
        elif before is None:
            response = _page(request, self.scope)
        else:
            response = _older_page(request, self.scope, before)
        patch_vary_headers(response, ("HX-Request",))
        return response


def _older_page(request: HttpRequest, prompt: Prompt, before: int) -> HttpResponse:
    context = {**scope_context(prompt), **_releases(before, prompt)}
    return render(request, "editor/releases_older.html", context)


class ReleaseCreateView(ReleasePagesMixin, View):
    def post(self, request: HttpRequest) -> HttpResponse:
        form = rf.ReleaseCreateForm(request.POST)
        refused = self.write_refusal(request, "release")
        if refused is not None:
            form.is_valid()  # cleans once, so that the refusal can be added
            form.add_error(None, refused)
            return _page(request, self.scope, status=403, create_form=form)
        if form.is_valid():
            try:
                made = services.release_create(
                    message=form.cleaned_data["message"], author=request.user, prompt=self.scope
                )
            except errors.InvalidInput as error:
                rf.refusal_add(form, error)
            except errors.PromptForbidden as error:
                form.add_error(None, str(error))
                return _page(request, self.scope, status=403, create_form=form)
            else:
                number = made.release.number
                if made.created:
                    messages.success(request, f"Release {number} created.")
                else:
                    messages.success(
                        request,
                        f"Nothing changed since release {number}: no new release was made.",
                    )
                return redirect(scoped_url("releases", self.scope))
        return _page(request, self.scope, status=400, create_form=form)


class ReleaseCompareView(ReleasePagesMixin, View):
    """Release ``release`` against ``with`` (``latest``, the default, or a release)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        form = rf.CompareForm(request.GET)
        context: dict[str, Any] = {**scope_context(self.scope), "form": form, "comparison": None}
        status = 200
        if form.is_valid():
            other_text = form.cleaned_data["with"] or LATEST
            try:
                number = pointer_valid(rf.pointer_of_text(form.cleaned_data["release"]), "release")
                if number == LATEST:
                    raise errors.InvalidInput(
                        "release", "Pick a release here; the working copy goes on the right."
                    )
                other = pointer_valid(rf.pointer_of_text(other_text), "with")
                context["comparison"] = selectors.release_compare(number, other, prompt=self.scope)
            except errors.InvalidInput as error:
                rf.refusal_add(form, error)
                status = 400
            except errors.ReleaseNotFound as error:
                form.add_error(None, str(error))
                status = 404
        else:
            status = 400
        return render(request, "editor/releases_compare.html", context, status=status)


# --- publish --------------------------------------------------------------------------


class PublishView(ReleasePagesMixin, View):
    """GET: the impact report of moving ``label`` to ``candidate``, then the confirm
    form; POST (from that form): publish."""

    def get(self, request: HttpRequest) -> HttpResponse:
        asked = "label" in request.GET or "candidate" in request.GET
        form = rf.PublishForm(request.GET if asked else None, initial=_publish_initial())
        context = _impact_context(request, self.scope, form)
        status = 200
        if asked and context["report"] is None:
            status = 404 if context["errors"] else 400
        htmx = HtmxDetails(request)
        partial = bool(htmx) and not htmx.history_restore_request  # back: the whole page
        template = "editor/_impact.html" if partial else "editor/releases_publish.html"
        response = render(request, template, context, status=status)
        patch_vary_headers(response, ("HX-Request",))
        if partial and status != 200:
            response["X-Sysprompt-Partial"] = "1"
        return response

    def post(self, request: HttpRequest) -> HttpResponse:
        form = rf.PublishConfirmForm(request.POST)
        try:
            refused = self.write_refusal(request, "publish")
            if refused is None:
                _may_change_named(request, request.POST.get("label"))
        except errors.LabelProtected as error:
            refused = str(error)
        if refused is not None:
            form.is_valid()  # cleans once, so that the refusal can be added
            form.add_error(None, refused)
            context = _impact_context(request, self.scope, form)
            return render(request, "editor/releases_publish.html", context, status=403)
        if form.is_valid():
            data = form.cleaned_data
            try:
                share = rf.share_of_text(data["share"])
                done = services.release_publish(
                    label=data["label"],
                    candidate=rf.pointer_of_text(data["candidate"]),
                    message=data["message"],
                    weight=share if isinstance(share, int) else None,
                    force=data["force"],
                    author=request.user,
                    prompt=self.scope,
                )
            except errors.InvalidInput as error:
                rf.refusal_add(form, error)
            except errors.GateNotPassed as error:
                form.add_error(None, refusal_text(error))
                context = _impact_context(request, self.scope, form)
                return render(request, "editor/releases_publish.html", context, status=409)
            except (errors.LabelProtected, errors.PromptForbidden) as error:
                form.add_error(None, str(error))
                context = _impact_context(request, self.scope, form)
                return render(request, "editor/releases_publish.html", context, status=403)
            except (errors.ReleaseNotFound, errors.LabelNotFound) as error:
                form.add_error(None, str(error))
            else:
                number = done.release.release.number
                made = "created and " if done.release.created else ""
                moved = "now serves" if done.label.moved else "already served"
                to = f"{data['label']} {moved} it"
                if isinstance(share, int):
                    to = f"{data['label']} is now {done.label.label.target.describe()}"
                messages.success(request, f"Release {number} {made}published: {to}.")
                return redirect(scoped_url("releases-label", self.scope, data["label"]))
        context = _impact_context(request, self.scope, form)
        return render(request, "editor/releases_publish.html", context, status=400)


def _may_change_named(request: HttpRequest, name: object) -> None:
    """:class:`LabelProtected` when the label a form names (if it names one) is one
    the user may not change: who may, before the form's other fields are read."""
    if isinstance(name, str):
        try:
            checked = label_name_valid(name, "label")
        except errors.InvalidInput:
            return  # the form says what is wrong with the name
        services.label_change_check(name=checked, author=request.user)


def _publish_initial() -> dict[str, str]:
    return {"label": PRODUCTION, "candidate": LATEST}


def _impact_context(request: HttpRequest, prompt: Prompt, form: rf.PublishForm) -> dict[str, Any]:
    """The report of moving ``prompt``'s label (``None`` when the input is refused: the
    errors say why)."""
    context: dict[str, Any] = {
        **scope_context(prompt),
        "form": form,
        "report": None,
        "errors": [],
        "labels": selectors.labels_list(prompt),
        "candidates": list(selectors.releases_list(prompt=prompt)[:CANDIDATE_RELEASES]),
    }
    form.is_valid()  # cleans once; a refusal added later keeps the fields that were valid
    data = getattr(form, "cleaned_data", {})
    if not form.is_bound or "label" not in data or "candidate" not in data:
        return context
    try:
        label = selectors.label_get(label_name_valid(data["label"], "label"), prompt=prompt)
        report = impact_report(
            label=label.name, candidate=rf.pointer_of_text(data["candidate"]), prompt=prompt
        )
    except errors.InvalidInput as error:
        rf.refusal_add(form, error)
        return context
    except errors.ReleaseNotFound as error:
        context["errors"] = [str(error)]
        return context
    except errors.LabelNotFound as error:
        form.add_error("label", str(error))
        return context
    context.update(
        report=report,
        label=label,
        label_segments=segments(label.target),
        may_change=_may_change(request, label),
        candidate_name=describe_pointer(report.candidate),
        share=f"{report.summary.share_changed * 100:.1f}%",
        gate=gate_panel(request, label, report.candidate, prompt),
    )
    return context


class GateRunView(ReleasePagesMixin, View):
    """The Publish dialog's "Start a run" for a gated label (``release_gate``)."""

    def post(self, request: HttpRequest) -> HttpResponse:
        return gate_run_start(request, self.scope)


# --- labels ---------------------------------------------------------------------------


class LabelSetView(ReleasePagesMixin, View):
    """ "Set a label": create it or move it to latest, a release or a split."""

    def post(self, request: HttpRequest) -> HttpResponse:
        form = rf.LabelSetForm(request.POST)
        try:
            refused = self.write_refusal(request, "move label")
            if refused is None:
                _may_change_named(request, request.POST.get("name"))
        except errors.LabelProtected as error:
            refused = str(error)
        if refused is not None:
            form.is_valid()  # cleans once, so that the refusal can be added
            form.add_error(None, refused)
            return _page(request, self.scope, status=403, label_form=form)
        if form.is_valid():
            data = form.cleaned_data
            try:
                done = services.label_set(
                    name=data["name"],
                    target=rf.target_of_form(data),
                    message=data["message"],
                    protected=True if data["protected"] else None,
                    force=data["force"],
                    author=request.user,
                    prompt=self.scope,
                )
            except errors.InvalidInput as error:
                rf.refusal_add(form, error)
            except errors.ReleaseNotFound as error:
                form.add_error("release" if data["kind"] == "release" else "arms", str(error))
            except errors.GateNotPassed as error:
                form.add_error(None, refusal_text(error))
                return _page(request, self.scope, status=409, label_form=form)
            except (errors.LabelProtected, errors.PromptForbidden) as error:
                form.add_error(None, str(error))
                return _page(request, self.scope, status=403, label_form=form)
            else:
                state = done.label
                verb = "created" if done.created else "moved" if done.moved else "unchanged"
                messages.success(request, f"Label {state.name} {verb}: {state.target.describe()}.")
                return redirect(scoped_url("releases-label", self.scope, state.name))
        return _page(request, self.scope, status=400, label_form=form)


def _label(name: str, prompt: Prompt) -> selectors.LabelState:
    try:
        return selectors.label_get(label_name_valid(name), prompt=prompt)
    except (errors.InvalidInput, errors.LabelNotFound) as error:
        raise Http404(str(error)) from None


def _label_page(
    request: HttpRequest,
    prompt: Prompt,
    label: selectors.LabelState,
    *,
    form: rf.RollbackForm | None = None,
    gate_form: rf.GateForm | None = None,
    status: int = 200,
    gate_refused: bool = False,
) -> HttpResponse:
    moves = list(selectors.label_history(label.name, prompt=prompt)[: HISTORY_PAGE_SIZE + 1])
    back_to = selectors.rollback_target(label.name, prompt=prompt)
    refused = _rollback_refusal(label, back_to, prompt)
    may_publish = request.user.has_perm(PUBLISH_PERMISSION)
    context = {
        **scope_context(prompt),
        "label": label,
        "label_segments": segments(label.target),
        "may_change": _may_change(request, label),
        "moves": moves[:HISTORY_PAGE_SIZE],
        "more_moves": len(moves) > HISTORY_PAGE_SIZE,
        "can_roll_back": back_to is not None,
        "rollback_to": None if back_to is None else back_to.describe(),
        "form": form or rf.RollbackForm(),
        "rollback_refused": refused,
        "may_force": bool(refused)
        and may_publish
        and back_to is not None
        and LATEST not in back_to.pointers,
        "open_rollback": gate_refused,
        "may_publish": may_publish,
        **gate_form_context(label, gate_form, prompt),
    }
    return render(request, "editor/releases_label.html", context, status=status)


def _rollback_refusal(
    label: selectors.LabelState, back_to: Target | None, prompt: Prompt
) -> list[str]:
    """What the label's gate would answer to a rollback now (empty: it lets it)."""
    if label.gate is None or back_to is None:
        return []
    return move_reasons(
        gate=label.gate, label=label.name, current=label.target, new=back_to, prompt=prompt
    )


def _label_refused(
    request: HttpRequest, prompt: Prompt, label: selectors.LabelState, refusal: str
) -> HttpResponse:
    form = rf.RollbackForm({})  # bound and empty: nothing the user sent is read
    form.is_valid()
    form.add_error(None, refusal)
    return _label_page(request, prompt, label, form=form, status=403)


def _label_write_refusal(
    view: ReleasePagesMixin, request: HttpRequest, label: selectors.LabelState, action: str
) -> str | None:
    """Who may change ``label`` on the view's prompt, before what they ask: the prompt's
    restriction, then the label's protection; ``None`` when they may."""
    refused = view.write_refusal(request, action)
    if refused is None:
        try:
            services.label_change_check(name=label.name, author=request.user)
        except errors.LabelProtected as error:
            refused = str(error)
    return refused


class LabelView(ReleasePagesMixin, View):
    """One label: its target, its gate, its history (newest first) and Rollback."""

    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        return _label_page(request, self.scope, _label(name, self.scope))


class LabelRollbackView(ReleasePagesMixin, View):
    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        label = _label(name, self.scope)
        refused = _label_write_refusal(self, request, label, "roll back label")
        if refused is not None:  # who may, before what they ask
            return _label_refused(request, self.scope, label, refused)
        form = rf.RollbackForm(request.POST)
        if form.is_valid():
            try:
                done = services.label_rollback(
                    name=label.name,
                    message=form.cleaned_data["message"],
                    force=form.cleaned_data["force"],
                    author=request.user,
                    prompt=self.scope,
                )
            except errors.InvalidInput as error:
                form.add_error(None, error.message)
            except errors.GateNotPassed as error:
                form.add_error(None, refusal_text(error))
                return _label_page(
                    request, self.scope, label, form=form, status=409, gate_refused=True
                )
            except (errors.LabelProtected, errors.PromptForbidden) as error:
                form.add_error(None, str(error))
                return _label_page(request, self.scope, label, form=form, status=403)
            else:
                messages.success(
                    request, f"Rolled back: {done.label.name} → {done.label.target.describe()}."
                )
                return redirect(scoped_url("releases-label", self.scope, label.name))
        return _label_page(request, self.scope, label, form=form, status=400)


class LabelGateView(ReleasePagesMixin, View):
    """Set, change or remove the label's gate (its target kept)."""

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        label = _label(name, self.scope)
        refusal = _label_write_refusal(self, request, label, "move label")
        if refusal is not None:  # who may, before what they ask
            return _label_refused(request, self.scope, label, refusal)
        refused = gate_save(request, label, self.scope)
        if refused is None:
            return redirect(scoped_url("releases-label", self.scope, label.name) + "#gate")
        status = 403 if refused.has_error(NON_FIELD_ERRORS, FORBIDDEN) else 400
        return _label_page(request, self.scope, label, gate_form=refused, status=status)


# --- test contexts --------------------------------------------------------------------


def _test_context_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The service's fields of a :class:`TestContextForm`'s cleaned data."""
    return {
        "cwd": data["cwd"] or None,  # blank: none, the values alone
        "values": assignments_parse(data["values"], "values") or None,
        "provider": data["provider"],
        "model": data["model"],
        "tools": rf.tools_parse(data["tools"]) or None,
        "variables": assignments_parse(data["variables"], "variables") or None,
        "override": rf.override_parse(data["override"]),
    }


def _test_context_page(
    request: HttpRequest,
    prompt: Prompt,
    form: rf.TestContextForm,
    *,
    name: str | None,
    status: int = 200,
) -> HttpResponse:
    context = {**scope_context(prompt), "form": form, "name": name}
    return render(request, "editor/releases_test_context.html", context, status=status)


def _test_contexts_url(prompt: Prompt) -> str:
    return scoped_url("releases", prompt) + "#test-contexts"


def _test_context_save(
    view: ReleasePagesMixin,
    request: HttpRequest,
    form: rf.TestContextForm,
    *,
    existing: str | None,
) -> HttpResponse:
    prompt = view.scope
    refused = view.write_refusal(request, "save a test context")
    if refused is not None:  # who may, before what they ask
        form.is_valid()  # cleans once, so that the refusal can be added
        form.add_error(None, refused)
        return _test_context_page(request, prompt, form, name=existing, status=403)
    if form.is_valid():
        data = form.cleaned_data
        try:
            name = existing or label_name_valid(data["name"])
            if existing is None and selectors.test_contexts_list(prompt).filter(name=name).exists():
                raise errors.InvalidInput(
                    "name", f"A test context named {name!r} exists; open it to change it."
                )
            saved = services.test_context_save(
                name=name, fields=_test_context_fields(data), author=request.user, prompt=prompt
            )
        except errors.InvalidInput as error:
            rf.refusal_add(form, error)
        except errors.PromptForbidden as error:
            form.add_error(None, str(error))
            return _test_context_page(request, prompt, form, name=existing, status=403)
        else:
            verb = "created" if saved.created else "saved"
            messages.success(request, f"Test context {name} {verb}.")
            return redirect(_test_contexts_url(prompt))
    return _test_context_page(request, prompt, form, name=existing, status=400)


class TestContextNewView(ReleasePagesMixin, View):
    __test__ = False

    def get(self, request: HttpRequest) -> HttpResponse:
        return _test_context_page(request, self.scope, rf.TestContextForm(), name=None)

    def post(self, request: HttpRequest) -> HttpResponse:
        return _test_context_save(self, request, rf.TestContextForm(request.POST), existing=None)


def _test_context(name: str, prompt: Prompt) -> Any:
    try:
        return selectors.test_context_get(label_name_valid(name), prompt=prompt)
    except (errors.InvalidInput, errors.TestContextNotFound) as error:
        raise Http404(str(error)) from None


class TestContextEditView(ReleasePagesMixin, View):
    __test__ = False

    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        row = _test_context(name, self.scope)
        form = rf.TestContextForm(
            initial={
                "name": row.name,
                "cwd": row.cwd,
                "values": assignments_text(row.values or {}),
                "provider": row.provider,
                "model": row.model,
                "tools": ", ".join(row.tools or []),
                "variables": assignments_text(row.variables or {}),
                "override": rf.override_text(row.override),
            }
        )
        return _test_context_page(request, self.scope, form, name=row.name)

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        row = _test_context(name, self.scope)
        data = request.POST.copy()
        data["name"] = row.name  # the name is the URL's: a test context is not renamed
        return _test_context_save(self, request, rf.TestContextForm(data), existing=row.name)


class TestContextDeleteView(ReleasePagesMixin, View):
    __test__ = False

    def post(self, request: HttpRequest, name: str) -> HttpResponse:
        row = _test_context(name, self.scope)
        try:
            services.test_context_delete(name=row.name, author=request.user, prompt=self.scope)
        except errors.PromptForbidden as error:  # nothing else to read: the service's check
            messages.error(request, str(error))
        else:
            messages.success(request, f"Test context {row.name} deleted.")
        return redirect(_test_contexts_url(self.scope))
