"""Errors in DRF's shapes, each with a message a person can act on.

The server's exceptions (``sysprompt.errors``) become their HTTP status here and
nowhere else (:data:`STATUS`), so views stay thin; an unreachable database becomes 503,
and anything unexpected a logged 500 in JSON, never a traceback.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from sysprompt.errors import (
    AgentHostNotFound,
    BodyTooLarge,
    CaseNotFound,
    ConversationAmbiguous,
    ConversationForbidden,
    ConversationNotFound,
    EvaluationNotFound,
    FragmentNotFound,
    GateNotPassed,
    InvalidInput,
    LabelNotFound,
    LabelProtected,
    PreconditionFailed,
    PromptArchived,
    PromptConflict,
    PromptForbidden,
    PromptNotFound,
    ReleaseNotFound,
    ResolutionBusy,
    RunRefused,
    SuiteNotFound,
    TemplateTooLarge,
    TestContextNotFound,
    VariantConflict,
    WebhookNotFound,
)
from sysprompt.evaluations.services import ImportRefused
from sysprompt.transfer.services import ExportImpossible
from sysprompt_core.template import PromptTooLarge

logger = logging.getLogger("sysprompt.api")

DATABASE_RETRY_AFTER_SECONDS = 5
SERVER_ERROR_DETAIL = "The server failed to answer; the error is in its log."


class _DatabaseUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The database is unavailable; try again shortly."
    default_code = "database_unavailable"


# Every exception of the server's hierarchy that reaches the API, and its status; the
# first matching class wins. Anything else is DRF's own, or a bug (500).
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (InvalidInput, status.HTTP_400_BAD_REQUEST),
    (ConversationForbidden, status.HTTP_403_FORBIDDEN),
    (LabelProtected, status.HTTP_403_FORBIDDEN),
    (PromptForbidden, status.HTTP_403_FORBIDDEN),
    (PromptNotFound, status.HTTP_404_NOT_FOUND),
    (PromptArchived, status.HTTP_410_GONE),
    (PromptConflict, status.HTTP_409_CONFLICT),
    # 404 whether absent or someone else's: the same answer, so no existence oracle.
    (ConversationNotFound, status.HTTP_404_NOT_FOUND),
    (ConversationAmbiguous, status.HTTP_409_CONFLICT),
    (FragmentNotFound, status.HTTP_404_NOT_FOUND),
    (AgentHostNotFound, status.HTTP_404_NOT_FOUND),
    (WebhookNotFound, status.HTTP_404_NOT_FOUND),
    (ReleaseNotFound, status.HTTP_404_NOT_FOUND),
    (LabelNotFound, status.HTTP_404_NOT_FOUND),
    (TestContextNotFound, status.HTTP_404_NOT_FOUND),
    (SuiteNotFound, status.HTTP_404_NOT_FOUND),
    (CaseNotFound, status.HTTP_404_NOT_FOUND),
    (EvaluationNotFound, status.HTTP_404_NOT_FOUND),
    (PreconditionFailed, status.HTTP_412_PRECONDITION_FAILED),
    (VariantConflict, status.HTTP_412_PRECONDITION_FAILED),
    (ExportImpossible, status.HTTP_409_CONFLICT),
    (GateNotPassed, status.HTTP_409_CONFLICT),
    (BodyTooLarge, status.HTTP_413_REQUEST_ENTITY_TOO_LARGE),
    (TemplateTooLarge, status.HTTP_413_REQUEST_ENTITY_TOO_LARGE),
    (PromptTooLarge, status.HTTP_413_REQUEST_ENTITY_TOO_LARGE),
    (RequestDataTooBig, status.HTTP_413_REQUEST_ENTITY_TOO_LARGE),
    (RunRefused, status.HTTP_429_TOO_MANY_REQUESTS),
    (ResolutionBusy, status.HTTP_503_SERVICE_UNAVAILABLE),
)


def import_errors(refused: ImportRefused) -> dict[str, list[str]]:
    """A refused JSONL import as field errors: ``{"line 3": ["checks[0].type: …"]}``."""
    answer: dict[str, list[str]] = {}
    for error in refused.errors:
        answer.setdefault(f"line {error.line}", []).append(f"{error.field}: {error.message}")
    return answer


def _domain_response(exc: Exception) -> Response | None:
    """The answer for an exception of :data:`STATUS`, or None for any other."""
    code = next((code for kind, code in STATUS if isinstance(exc, kind)), None)
    if code is None:
        return None
    if isinstance(exc, ImportRefused):  # every bad line, each named by its number
        return Response(import_errors(exc), status=code)
    if isinstance(exc, InvalidInput):
        return Response({exc.field: [exc.message]}, status=code)
    if isinstance(exc, RequestDataTooBig):  # Django's own check, when DRF reads .body
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
        return Response(
            {"detail": f"The request body is over the limit of {limit:,} bytes."}, status=code
        )
    response = Response({"detail": str(exc)}, status=code)
    if isinstance(exc, GateNotPassed):
        response.data["reasons"] = exc.reasons
    if isinstance(exc, ConversationAmbiguous):
        response.data["hosts"] = exc.hosts
    if isinstance(exc, PreconditionFailed):
        response["ETag"] = exc.current.etag
    if isinstance(exc, VariantConflict) and exc.current is not None:
        response["ETag"] = exc.current.etag
    if isinstance(exc, ResolutionBusy):
        response["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, RunRefused) and exc.retry_after is not None:
        response["Retry-After"] = str(exc.retry_after)
    return response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = _domain_response(exc)
    if response is not None:
        set_rollback()
        return response
    headers: dict[str, str] = {}
    if isinstance(exc, OperationalError | InterfaceError):
        logger.error("database unavailable: %s", exc)
        set_rollback()
        headers["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
        exc = _DatabaseUnavailable()
    response = drf_exception_handler(exc, context)
    if response is None:  # a bug: log it with its traceback, answer JSON without it
        request = context.get("request")
        where = f"{request.method} {request.path}" if request is not None else "an API view"
        logger.error("unexpected error in %s", where, exc_info=exc)
        set_rollback()
        response = Response(
            {"detail": SERVER_ERROR_DETAIL}, status=status.HTTP_500_INTERNAL_SERVER_ERROR
        )
    for name, value in headers.items():
        response[name] = value
    return response
