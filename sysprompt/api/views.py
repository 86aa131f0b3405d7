"""API views: validate the input, call one service or selector, shape the output.

One class per operation. Where the API puts two operations on one path, the route
class in ``urls.py`` combines the two operation classes.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.utils.http import parse_etags
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt import errors
from sysprompt.api import schema as _schema  # noqa: F401 - registers the extensions
from sysprompt.api import serializers as s
from sysprompt.api.auth import CanEditTemplate
from sysprompt.api.pagination import ConversationPagination, VersionPagination
from sysprompt.prompts import rendering, selectors, services
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, CONVERSATION_ID_PATTERN
from sysprompt_core.variables import variable_catalog

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from sysprompt.prompts.models import ConversationPrompt

ERROR = s.ErrorOutputSerializer
BAD_REQUEST = PolymorphicProxySerializer(
    component_name="BadRequest",
    serializers=[s.FieldErrorsOutputSerializer, ERROR],
    resource_type_field_name=None,
)


def _errors(*codes: int) -> dict[int | str, Any]:
    described = {
        400: OpenApiResponse(
            BAD_REQUEST,
            description="Invalid input: field name → list of messages, or {detail}.",
        ),
        401: OpenApiResponse(ERROR, description="No valid credentials."),
        403: OpenApiResponse(
            ERROR, description="Not allowed (missing permission, or a session write without CSRF)."
        ),
        404: OpenApiResponse(ERROR, description="Not found."),
        412: OpenApiResponse(ERROR, description="If-Match names a version that is not current."),
        413: OpenApiResponse(ERROR, description="The template or the body is too large."),
        415: OpenApiResponse(ERROR, description="The body is not application/json."),
        503: OpenApiResponse(ERROR, description="The database is unavailable."),
    }
    return {code: described[code] for code in (401, 403, 503, *codes)}


CONVERSATION_ID = OpenApiParameter(
    "conversation_id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description=f"1–{CONVERSATION_ID_MAX_LENGTH} characters: letters, digits and . _ : -",
    pattern=f"^{CONVERSATION_ID_PATTERN}$",
)
PAGE_SIZE = {"type": "integer", "minimum": 1}
IF_MATCH = OpenApiParameter(
    "If-Match",
    {"type": "string", "minLength": 1},
    OpenApiParameter.HEADER,
    description=(
        'The ETag of the version you edited, or "*"; a stale one answers 412, '
        "a value that is not an entity tag 400."
    ),
)

ETAG = OpenApiParameter(
    "ETag",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200, 412],
    description="Names this version of the template; send it back as If-Match.",
)


def _template_response(current: selectors.CurrentTemplate, code: int = 200) -> Response:
    data = s.TemplateOutputSerializer(
        {
            "text": current.text,
            "version": current.version,
            "updated_at": current.updated_at,
            "is_default": current.is_default,
        }
    ).data
    return Response(data, status=code, headers={"ETag": current.etag})


class SystemPromptGetApi(APIView):
    @extend_schema(
        operation_id="get_template",
        summary="The current template",
        parameters=[ETAG],
        responses={200: s.TemplateOutputSerializer, **_errors()},
    )
    def get(self, request: Request) -> Response:
        return _template_response(selectors.template_current())


def _if_match(request: Request) -> list[str] | None:
    """The entity tags of ``If-Match``; None without the header, 400 when it names none."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    tags = parse_etags(header)
    if not tags:
        raise ValidationError(
            {
                "If-Match": [
                    f"{header[:100]!r} is not an entity tag: send the ETag of GET "
                    '/api/system-prompt (with its double quotes), or "*".'
                ]
            }
        )
    return tags


class SystemPromptPutApi(APIView):
    permission_classes = [IsAuthenticated, CanEditTemplate]

    @extend_schema(
        operation_id="save_template",
        summary="Save a new version of the template",
        parameters=[IF_MATCH, ETAG],
        request=s.TemplateInputSerializer,
        responses={200: s.TemplateOutputSerializer, **_errors(400, 412, 413, 415)},
    )
    def put(self, request: Request) -> Response:
        serializer = s.TemplateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        saved = services.template_save(
            text=serializer.validated_data["template"],
            author=request.user,
            if_match=_if_match(request),
        )
        return _template_response(selectors.template_of(saved))


class VariablesApi(APIView):
    @extend_schema(
        operation_id="list_template_variables",
        summary="The variables a template can use",
        responses={200: s.VariablesOutputSerializer, **_errors()},
    )
    def get(self, request: Request) -> Response:
        return Response(s.VariablesOutputSerializer({"variables": variable_catalog()}).data)


def _page_parameters(max_size: int) -> list[OpenApiParameter]:
    return [
        OpenApiParameter("cursor", OpenApiTypes.STR, description="From next/previous."),
        OpenApiParameter(
            "page_size", PAGE_SIZE, description=f"From 1; larger than {max_size} gives {max_size}."
        ),
    ]


def _page(
    view: APIView,
    request: Request,
    queryset: QuerySet[Any],
    serializer_class: type[serializers.Serializer[Any]],
) -> Response:
    """One page of ``queryset`` with the view's cursor pagination."""
    paginator = view.pagination_class()  # type: ignore[attr-defined]
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)  # type: ignore[no-any-return]


class VersionsApi(APIView):
    pagination_class = VersionPagination  # used by _page; the schema names the page itself

    @extend_schema(
        operation_id="list_template_versions",
        summary="Every saved version, newest first",
        parameters=_page_parameters(VersionPagination.max_page_size),
        responses={200: s.TemplateVersionPageOutputSerializer, **_errors(400, 404)},
    )
    def get(self, request: Request) -> Response:
        return _page(
            self, request, selectors.template_versions(), s.TemplateVersionOutputSerializer
        )


class PreviewApi(APIView):
    @extend_schema(
        operation_id="preview_template",
        summary="Render a template for a working directory; stores nothing",
        request=s.PreviewInputSerializer,
        responses={200: s.PreviewOutputSerializer, **_errors(400, 413, 415)},
    )
    def post(self, request: Request) -> Response:
        serializer = s.PreviewInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        preview = rendering.template_preview(**serializer.validated_data)
        shown = rendering.preview_variables(preview.rendered.values)
        data = {
            "system_prompt": preview.rendered.prompt,
            "diagnostics": [asdict(d) for d in preview.diagnostics],
            "variables": {v.key: v.value for v in shown},
            "truncated": [v.key for v in shown if v.omitted],
            "same_as": {v.key: v.same_as for v in shown if v.same_as is not None},
            "reasons": {v.key: v.reason for v in shown if v.reason is not None},
        }
        return Response(s.PreviewOutputSerializer(data).data)


def drf_datetime(value: datetime) -> str:
    """A datetime as DRF's DateTimeField writes it (ISO 8601 in UTC, ``Z`` suffix)."""
    text = value.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text


def prompt_payload(row: ConversationPrompt) -> dict[str, Any]:
    """What ConversationPromptOutputSerializer gives, built directly: every turn answers
    this, and the serializer would cost more than the database query (the schema still
    comes from the serializer; a test checks the two agree)."""
    return {
        "conversation_id": row.conversation_id,
        "system_prompt": row.system_prompt,
        "template_version": row.template_version_number,
        "constructed_at": drf_datetime(row.constructed_at),
        "sha256": row.sha256,
    }


def _conversation_input(request: Request) -> dict[str, Any]:
    """The validated body of resolve, construct and compact: ``cwd`` and ``model``."""
    serializer = s.ConversationInputSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _stored_status(stored: services.Stored) -> int:
    return status.HTTP_201_CREATED if stored.created else status.HTTP_200_OK


def _prompt_response(stored: services.Stored) -> Response:
    return Response(prompt_payload(stored.prompt), status=_stored_status(stored))


CONVERSATION_RESPONSES: dict[int | str, Any] = {
    200: s.ConversationPromptOutputSerializer,
    201: s.ConversationPromptOutputSerializer,
    **_errors(400, 404, 413, 415),
}


class ResolveApi(APIView):
    @extend_schema(
        operation_id="resolve",
        summary="Every turn: the stored prompt, or on the first turn construct and store it",
        description=(
            "201 on the first turn (constructed and stored), 200 on every later turn with "
            "the stored prompt byte for byte, until construct or compact."
        ),
        parameters=[CONVERSATION_ID],
        request=s.ConversationInputSerializer,
        responses=CONVERSATION_RESPONSES,
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        return _prompt_response(
            services.conversation_prompt_resolve(
                conversation_id=conversation_id, user=request.user, **_conversation_input(request)
            )
        )


class ConstructApi(APIView):
    @extend_schema(
        operation_id="construct",
        summary="Resolve the current template afresh and store it, replacing the stored one",
        description="201 when the conversation had no stored prompt, 200 when it replaced one.",
        parameters=[CONVERSATION_ID],
        request=s.ConversationInputSerializer,
        responses=CONVERSATION_RESPONSES,
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        return _prompt_response(
            services.conversation_prompt_construct(
                conversation_id=conversation_id, user=request.user, **_conversation_input(request)
            )
        )


class CompactApi(APIView):
    @extend_schema(
        operation_id="compact",
        summary="Construct afresh for a compaction turn",
        description=(
            "Stores the fresh prompt and answers it with the compaction instructions "
            'appended after "\\n\\n" (the instructions alone when the fresh prompt is null).'
        ),
        parameters=[CONVERSATION_ID],
        request=s.ConversationInputSerializer,
        responses={
            200: s.CompactOutputSerializer,
            201: s.CompactOutputSerializer,
            **_errors(400, 404, 413, 415),
        },
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        compacted = services.conversation_prompt_compact(
            conversation_id=conversation_id, user=request.user, **_conversation_input(request)
        )
        row = compacted.stored.prompt
        data = {
            **prompt_payload(row),
            "system_prompt": compacted.compaction_prompt,
            "persisted_system_prompt": row.system_prompt,
        }
        return Response(data, status=_stored_status(compacted.stored))


class ConversationPromptGetApi(APIView):
    @extend_schema(
        operation_id="get_conversation_prompt",
        summary="The stored prompt",
        parameters=[CONVERSATION_ID],
        responses={200: s.ConversationPromptOutputSerializer, **_errors(400, 404)},
    )
    def get(self, request: Request, conversation_id: str) -> Response:
        row = selectors.conversation_prompt_visible(conversation_id, user=request.user)
        return Response(prompt_payload(row))


class ConversationPromptDeleteApi(APIView):
    @extend_schema(
        operation_id="delete_conversation_prompt",
        summary="Forget the stored prompt",
        parameters=[CONVERSATION_ID],
        responses={204: None, **_errors(400, 404)},
    )
    def delete(self, request: Request, conversation_id: str) -> Response:
        if not services.conversation_prompt_delete(
            conversation_id=conversation_id, user=request.user
        ):
            raise errors.ConversationNotFound(conversation_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConversationsApi(APIView):
    pagination_class = ConversationPagination  # used by _page; the schema names the page itself

    @extend_schema(
        operation_id="list_conversations",
        summary="Conversations with their stored prompt's metadata, newest first",
        description=(
            "The caller's own conversations; every conversation for a user with "
            "sysprompt.view_conversationprompt (prompt authors)."
        ),
        parameters=_page_parameters(ConversationPagination.max_page_size),
        responses={200: s.ConversationPageOutputSerializer, **_errors(400, 404)},
    )
    def get(self, request: Request) -> Response:
        return _page(
            self,
            request,
            selectors.conversation_prompts(user=request.user),
            s.ConversationListItemOutputSerializer,
        )


class HealthApi(APIView):
    @extend_schema(
        operation_id="health",
        summary="Whether the app can reach its database",
        responses={200: s.HealthOutputSerializer, **_errors()},
    )
    def get(self, request: Request) -> Response:
        selectors.database_check()
        return Response({"status": "ok", "database": "ok"})
