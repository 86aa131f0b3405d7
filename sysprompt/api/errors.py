"""Errors in DRF's shapes, each with a message a person can act on.

Domain exceptions from services and selectors become their HTTP status here, so views
stay thin; an unreachable database becomes 503, never a traceback.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from sysprompt.prompts.selectors import (
    ConversationForbidden,
    ConversationNotFound,
    InvalidInput,
    TemplateTooLarge,
)
from sysprompt.prompts.services import PreconditionFailed
from sysprompt_core.template import PromptTooLarge

logger = logging.getLogger("sysprompt.api")

DATABASE_RETRY_AFTER_SECONDS = 5
SERVER_ERROR_DETAIL = "The server failed to answer; the error is in its log."


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


class PreconditionFailedError(APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "The resource has changed since you loaded it."
    default_code = "precondition_failed"


class DatabaseUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The database is unavailable; try again shortly."
    default_code = "database_unavailable"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    headers: dict[str, str] = {}
    if isinstance(exc, InvalidInput):
        exc = ValidationError({exc.field: [exc.message]})
    elif isinstance(exc, TemplateTooLarge | PromptTooLarge):
        exc = PayloadTooLarge(str(exc))
    elif isinstance(exc, ConversationNotFound | ConversationForbidden):
        # 404 whether absent or someone else's: the same answer, so no existence oracle.
        exc = (
            NotFound(str(exc))
            if isinstance(exc, ConversationNotFound)
            else PermissionDenied(str(exc))
        )
    elif isinstance(exc, PreconditionFailed):
        headers["ETag"] = exc.current.etag
        exc = PreconditionFailedError(str(exc))
    elif isinstance(exc, OperationalError | InterfaceError):
        logger.error("database unavailable: %s", exc)
        set_rollback()
        headers["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
        exc = DatabaseUnavailable()
    elif isinstance(exc, RequestDataTooBig):  # Django's own check, when DRF reads .body
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
        exc = PayloadTooLarge(f"The request body is over the limit of {limit:,} bytes.")
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
