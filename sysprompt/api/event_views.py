"""The events' views (docs/events.md): webhook subscriptions, their delivery log and the
test event, and the audit log. Prompt authors only: an agent host gets 403.

request → input serializer (shape) → ``sysprompt.events`` service or selector (which
checks the URL and the event types: 400 naming the field; 404 for no such
subscription) → output.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import event_serializers as es
from sysprompt.api.auth import IsPromptAuthor
from sysprompt.api.common import error_responses, page_parameters, page_response
from sysprompt.api.pagination import StrictPageSizePagination
from sysprompt.errors import InvalidInput
from sysprompt.events import selectors, services
from sysprompt.events.selectors import WebhookState
from sysprompt_core.prompt_names import InvalidPromptName, folder_check, prompt_name_check


class ManagesEvents(IsPromptAuthor):
    message = (
        "Webhooks and the audit log are for prompt authors: they need the 'Can change "
        "template version' permission (sysprompt.change_templateversion)."
    )


class NewestFirstPagination(StrictPageSizePagination):
    ordering = "-id"
    page_size = 50
    max_page_size = 500


ID = OpenApiParameter(
    "id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The subscription's id."
)


def _shown(state: WebhookState, **extra: Any) -> dict[str, Any]:
    fields = {
        "id": state.id,
        "url": state.url,
        "events": state.events,
        "prompts": state.prompts,
        "include_text": state.include_text,
        "active": state.active,
        "paused_reason": state.paused_reason,
        "paused_at": state.paused_at,
        "pending": state.pending,
        "last_attempt_at": state.last_attempt_at,
        "created_at": state.created_at,
        "updated_at": state.updated_at,
        **extra,
    }
    serializer = es.WebhookCreatedOutputSerializer if extra else es.WebhookOutputSerializer
    return dict(serializer(fields).data)


class WebhooksListApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]

    @extend_schema(
        operation_id="list_webhooks",
        summary="Every webhook subscription, oldest first (never a secret)",
        responses={200: es.WebhookOutputSerializer(many=True), **error_responses()},
    )
    def get(self, request: Request) -> Response:
        return Response([_shown(state) for state in selectors.webhooks_list()])


class WebhookCreateApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]

    @extend_schema(
        operation_id="create_webhook",
        summary="Subscribe a receiver; the answer shows its signing secret, once",
        request=es.WebhookInputSerializer,
        responses={201: es.WebhookCreatedOutputSerializer, **error_responses(400, 415)},
    )
    def post(self, request: Request) -> Response:
        body = es.WebhookInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        created = services.webhook_create(**body.validated_data, author=request.user)
        return Response(
            _shown(created.webhook, secret=created.secret), status=status.HTTP_201_CREATED
        )


class WebhookGetApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]

    @extend_schema(
        operation_id="get_webhook",
        summary="One webhook subscription (never its secret)",
        parameters=[ID],
        responses={200: es.WebhookOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, id: int) -> Response:
        return Response(_shown(selectors.webhook_get(id)))


class WebhookUpdateApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]

    @extend_schema(
        operation_id="update_webhook",
        summary="Change a subscription; what is left out stays",
        description='"active": true resumes a paused subscription: what waited is sent.',
        parameters=[ID],
        request=es.WebhookUpdateInputSerializer,
        responses={200: es.WebhookOutputSerializer, **error_responses(400, 404, 415)},
    )
    def put(self, request: Request, id: int) -> Response:
        body = es.WebhookUpdateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.webhook_update(webhook_id=id, **body.validated_data, author=request.user)
        return Response(_shown(selectors.webhook_get(id)))


class WebhookDeleteApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]

    @extend_schema(
        operation_id="delete_webhook",
        summary="Delete a subscription, its pending deliveries and its delivery log",
        parameters=[ID],
        responses={204: OpenApiResponse(description="Deleted."), **error_responses(404)},
    )
    def delete(self, request: Request, id: int) -> Response:
        services.webhook_delete(webhook_id=id, author=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookDeliveriesApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]
    pagination_class = NewestFirstPagination

    @extend_schema(
        operation_id="list_webhook_deliveries",
        summary="A subscription's delivery log: every attempt, newest first",
        parameters=[ID, *page_parameters(NewestFirstPagination.max_page_size)],
        responses={200: es.AttemptPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        attempts = selectors.webhook_attempts(id)
        return page_response(self, request, attempts, es.AttemptOutputSerializer)


class WebhookTestApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]

    @extend_schema(
        operation_id="test_webhook",
        summary="Send a ping to this subscription (one attempt, whatever its state)",
        parameters=[ID],
        request=None,
        responses={202: es.WebhookTestOutputSerializer, **error_responses(404)},
    )
    def post(self, request: Request, id: int) -> Response:
        event_id = services.webhook_test(webhook_id=id, author=request.user)
        return Response({"event_id": event_id}, status=status.HTTP_202_ACCEPTED)


class AuditApi(APIView):
    permission_classes = [IsAuthenticated, ManagesEvents]
    pagination_class = NewestFirstPagination

    @extend_schema(
        operation_id="list_audit",
        summary="The audit log: every change, newest first",
        parameters=[
            OpenApiParameter(
                "actor", OpenApiTypes.STR, description="Only this user's changes (a user name)."
            ),
            OpenApiParameter(
                "action",
                OpenApiTypes.STR,
                description="Only this action (fragment.saved), or a prefix ending in a dot "
                "(fragment.).",
            ),
            OpenApiParameter(
                "prompt",
                OpenApiTypes.STR,
                description="Only the changes of this prompt (support/triage), or of every "
                'prompt in a folder (a prefix ending in "/": support/).',
            ),
            *page_parameters(NewestFirstPagination.max_page_size),
        ],
        responses={200: es.AuditPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        query = es.AuditQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        records = selectors.audit_records(
            actor=query.validated_data.get("actor") or None,
            action=query.validated_data.get("action") or None,
            prompt=_audit_prompt(query.validated_data.get("prompt") or None),
        )
        return page_response(self, request, records, es.AuditRecordOutputSerializer)


def _audit_prompt(value: str | None) -> str | None:
    """The audit filter's prompt: a name or a folder ending in ``/``, checked with the
    rule (400 naming ``prompt``)."""
    if value is None:
        return None
    try:
        return (
            folder_check(value, "prompt")
            if value.endswith("/")
            else prompt_name_check(value, "prompt")
        )
    except InvalidPromptName as error:
        raise InvalidInput("prompt", error.message) from None
