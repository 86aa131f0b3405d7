"""Export and Import of the library (with the root template) as a zip, in the web UI.

Pipeline: ``/library/-/transfer`` offers prompt authors **Download the library**
(``…/-/export``, the zip of ``sysprompt.transfer.services.export_stream``, streamed as it
is written) and an upload form; other users are told both need the author permission.
Uploading (``…/-/import``) runs ``library_import(dry_run=True)`` and shows its report —
created / changed / unchanged / refused / ignored with reasons — and keeps the zip in the
session (one per session, at most ``IMPORT_MAX_BYTES``) under its SHA-256. **Apply**
(``…/-/import/apply``) posts that digest: the same bytes are imported for real (the
import is all-or-nothing, so a report with refusals offers no Apply), and the session
forgets them. Nothing of the upload is ever written to disk by the app.
"""

from __future__ import annotations

import base64
import hashlib

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views import View

from sysprompt import errors
from sysprompt.editor import library_forms
from sysprompt.editor.library import may_write
from sysprompt.editor.views import save_banner
from sysprompt.transfer import services

IMPORT_MAX_BYTES = 4 * 1024 * 1024
"""The largest zip the page takes (it is kept in the session between the dry run and
Apply); ``manage.py library_import`` has no such limit."""
SESSION_KEY = "sysprompt.library_import"


class TransferPageView(LoginRequiredMixin, View):
    """Export and Import (authors; others see what they would need)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return _page(request, form=library_forms.ImportForm())


class ExportView(LoginRequiredMixin, View):
    """The library and the root template as a zip (``Content-Disposition: attachment``),
    streamed as it is written; for authors (403 otherwise)."""

    def get(self, request: HttpRequest) -> HttpResponseBase:
        _authors_only(request, "Exporting")
        try:
            plan = services.export_plan()
        except services.ExportImpossible as exc:
            messages.error(request, str(exc))
            return redirect("editor:library-transfer")
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response = StreamingHttpResponse(
            services.export_stream(plan), content_type="application/zip"
        )
        response["Content-Disposition"] = f'attachment; filename="sysprompt-library-{stamp}.zip"'
        return response


class ImportView(LoginRequiredMixin, View):
    """Upload a zip: the dry-run report, and Apply when the import would succeed."""

    def post(self, request: HttpRequest) -> HttpResponse:
        _authors_only(request)
        form = library_forms.ImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return _page(request, form=form, status=400)
        upload = form.cleaned_data["archive"]
        if upload.size is None or upload.size > IMPORT_MAX_BYTES:
            form.add_error(
                "archive",
                f"The file is {upload.size or 0:,} bytes; the page takes zips of at most "
                f"{IMPORT_MAX_BYTES:,} bytes (manage.py library_import has no limit).",
            )
            return _page(request, form=form, status=400)
        data = upload.read()
        try:
            report = _import(request, data, dry_run=True)
        except errors.SyspromptError as exc:
            request.session.pop(SESSION_KEY, None)
            form.add_error("archive", _message(exc))
            return _page(request, form=form, status=400)
        digest = hashlib.sha256(data).hexdigest()
        request.session[SESSION_KEY] = {
            "digest": digest,
            "name": str(upload.name or "upload.zip")[:200],
            "data": base64.b64encode(data).decode("ascii"),
        }
        return _page(
            request,
            form=library_forms.ImportForm(),
            report=report,
            upload_name=str(upload.name or ""),
            digest=digest,
        )


class ImportApplyView(LoginRequiredMixin, View):
    """Import the zip the dry run reported on (named by its SHA-256)."""

    def post(self, request: HttpRequest) -> HttpResponse:
        _authors_only(request)
        form = library_forms.ImportApplyForm(request.POST)
        stash = request.session.get(SESSION_KEY)
        if not form.is_valid() or not stash or stash.get("digest") != form.cleaned_data["digest"]:
            messages.error(
                request,
                "Nothing imported: that upload is no longer here (another upload replaced "
                "it, or it was applied already). Upload the zip again.",
            )
            return redirect("editor:library-transfer")
        data = base64.b64decode(stash["data"])
        try:
            report = _import(request, data, dry_run=False)
        except errors.SyspromptError as exc:
            messages.error(request, f"Nothing imported: {_message(exc)}")
            return redirect("editor:library-transfer")
        request.session.pop(SESSION_KEY, None)
        if report.applied:
            messages.success(request, f"Imported {stash['name']}.")
        else:
            messages.error(request, "Nothing imported: some files were refused.")
        return _page(
            request, form=library_forms.ImportForm(), report=report, upload_name=stash["name"]
        )


def _authors_only(request: HttpRequest, what: str = "Importing") -> None:
    if not may_write(request):
        raise PermissionDenied(f"{what} the library needs the prompt author permission.")


def _import(request: HttpRequest, data: bytes, *, dry_run: bool) -> services.ImportReport:
    archive = services.read_zip(data)
    return services.library_import(archive=archive, dry_run=dry_run, author=request.user)


def _message(exc: errors.SyspromptError) -> str:
    return exc.message if isinstance(exc, errors.InvalidInput) else str(exc)


def _page(
    request: HttpRequest,
    *,
    form: library_forms.ImportForm,
    report: services.ImportReport | None = None,
    upload_name: str = "",
    digest: str = "",
    status: int = 200,
) -> HttpResponse:
    counts = report.counts() if report is not None else None
    context = {
        "form": form,
        "can_import": may_write(request),
        "report": report,
        "counts": counts,
        "upload_name": upload_name,
        "digest": digest,
        "max_bytes": IMPORT_MAX_BYTES,
        "save_banner": save_banner(request),
        "applicable": (
            report is not None
            and not report.applied
            and counts is not None
            and counts["refused"] == 0
            and counts["created"] + counts["changed"] > 0
        ),
    }
    return render(request, "editor/library_transfer.html", context, status=status)
