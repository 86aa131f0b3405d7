"""Export and import of the library (library.md §7): a zip archive in, a zip out.

export (prompt authors): ``export_plan`` (checked before anything is sent) →
``export_stream`` → the zip as an attachment, streamed as it is written
(``application/zip``; ``application/octet-stream`` when ``Accept`` asks for that and
not for a zip).
import: the body (``application/zip`` or ``application/octet-stream``, bounded by
``parsers.max_archive_bytes``) → ``read_zip`` → ``library_import`` (all or nothing) →
the report; 400 with the report when the archive holds anything refused.

The schema declares both as ``format: binary``: the import's body as
``application/octet-stream`` only (a generator that knows no ``application/zip``
would drop the operation), the export's answer as either.
"""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import status
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import library_serializers as ls
from sysprompt.api import serializers as s
from sysprompt.api.auth import CanEditLibrary, CanExportLibrary
from sysprompt.api.common import ERROR, error_responses
from sysprompt.api.parsers import (
    ARCHIVE_MEDIA_TYPES,
    ARCHIVE_TEMPLATES,
    OCTET_STREAM,
    ZIP,
    LimitedOctetStreamParser,
    LimitedZipParser,
)
from sysprompt.transfer import services as transfer

EXPORT_FILENAME = "sysprompt-library.zip"
BINARY = OpenApiResponse(OpenApiTypes.BINARY, description="The archive.")


class JsonFirstNegotiation(BaseContentNegotiation):
    """Errors are JSON whatever ``Accept`` says; the export's zip is answered as it is
    (an ``HttpResponse``, which no renderer touches)."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return next((p for p in parsers if p.media_type == request.content_type), None)

    def select_renderer(
        self, request: Request, renderers: Any, format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = renderers[0]
        return renderer, renderer.media_type


class LibraryExportApi(APIView):
    permission_classes = [IsAuthenticated, CanExportLibrary]
    content_negotiation_class = JsonFirstNegotiation

    @extend_schema(
        operation_id="export_library",
        summary="The library and the root template as a zip (llxprt-style file tree)",
        description=(
            "system-prompt.md, <name>.md (default variants), providers/<p>/<name>.md, "
            "providers/<p>/models/<m>/<name>.md and sysprompt.json (per-file settings); "
            "every prompt but default as prompts/<name>.md (its working copy) with "
            "prompts.json (its description, tags, compress, archived). Deleted variants are "
            "left out. For prompt authors (the permission that "
            "imports); the archive is streamed as it is written (no Content-Length)."
        ),
        responses={(200, ZIP): BINARY, (200, OCTET_STREAM): BINARY, **error_responses(403, 409)},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        plan = transfer.export_plan()  # refused (409) before the first byte is sent
        return StreamingHttpResponse(
            transfer.export_stream(plan),
            content_type=export_media_type(request.headers.get("Accept", "")),
            headers={"Content-Disposition": f'attachment; filename="{EXPORT_FILENAME}"'},
        )


def export_media_type(accept: str) -> str:
    """``application/octet-stream`` when ``accept`` names it and not
    ``application/zip``; else ``application/zip`` (whatever else it says: the archive is
    the only answer there is)."""
    named = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return OCTET_STREAM if OCTET_STREAM in named and ZIP not in named else ZIP


IMPORT_REFUSED = PolymorphicProxySerializer(
    component_name="ImportRefused",
    serializers=[ls.ImportReportOutputSerializer, s.FieldErrorsOutputSerializer, ERROR],
    resource_type_field_name=None,
)


class LibraryImportApi(APIView):
    permission_classes = [IsAuthenticated, CanEditLibrary]
    parser_classes = [LimitedZipParser, LimitedOctetStreamParser]

    @extend_schema(
        operation_id="import_library",
        summary="Import a zip of the library (as export gives, or an llxprt prompt directory)",
        description=(
            "Creates a version only where the text or the settings differ; never deletes. "
            "With prompts.json, prompts/<name>.md are named prompts: created, or given a "
            "new version of their working copy (a name that breaks the rule, '..', an "
            "absolute or backslash path is refused). "
            "All or nothing: when any file is refused (a bad name, over the size limit, not "
            "UTF-8, a symlink, an absolute path or '..'), nothing is applied and the answer "
            "is 400 with the report. ?dry_run=1 reports what would happen and changes "
            "nothing. The body is the archive itself, sent as application/octet-stream "
            "(application/zip is accepted too), at most "
            f"{ARCHIVE_TEMPLATES} × MAX_TEMPLATE_BYTES (16 MiB by default)."
        ),
        parameters=[
            OpenApiParameter(
                "dry_run",
                {"type": "string", "enum": ["0", "1", "true", "false"]},
                description="1 or true: only report.",
            )
        ],
        request={OCTET_STREAM: OpenApiTypes.BINARY},
        responses={
            200: ls.ImportReportOutputSerializer,
            **error_responses(
                400,
                413,
                415,
                e400=OpenApiResponse(
                    IMPORT_REFUSED,
                    description=(
                        "The report, when anything was refused (nothing applied); or an "
                        "invalid dry_run."
                    ),
                ),
            ),
        },
    )
    def post(self, request: Request) -> Response:
        query = ls.ImportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        dry_run = query.validated_data["dry_run"] in ("1", "true")
        if request.content_type.split(";")[0].strip().lower() not in ARCHIVE_MEDIA_TYPES:
            raise UnsupportedMediaType(request.content_type or "none")
        data = request.data
        if not isinstance(data, bytes) or not data:
            raise ParseError("The body is empty: send the zip archive itself.")
        report = transfer.library_import(
            archive=transfer.read_zip(data), dry_run=dry_run, author=request.user
        )
        shown = {
            "applied": report.applied,
            "items": [
                {
                    "path": item.path,
                    "action": item.action,
                    "reason": item.reason,
                    "prompt": None if item.target is None else item.target.prompt,
                    "variant": None
                    if item.target is None or item.target.prompt is not None
                    else {
                        "fragment": item.target.fragment,
                        "provider": item.target.provider,
                        "model": item.target.model,
                    },
                }
                for item in report.items
            ],
        }
        return Response(
            ls.ImportReportOutputSerializer(shown).data,
            status=status.HTTP_400_BAD_REQUEST if report.refused else status.HTTP_200_OK,
        )
