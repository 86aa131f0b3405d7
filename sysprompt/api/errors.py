"""Errors in DRF's shapes, each with a message a person can act on.

Domain exceptions from services and selectors become their HTTP status here, so views
stay thin; an unreachable database becomes 503, never a traceback.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import InterfaceError, OperationalError
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from sysprompt.selectors import InvalidInput, TemplateTooLarge
from sysprompt.services import PreconditionFailed

logger = logging.getLogger("sysprompt.api")

DATABASE_RETRY_AFTER_SECONDS = 5


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
    elif isinstance(exc, TemplateTooLarge):
        exc = PayloadTooLarge(str(exc))
    elif isinstance(exc, PreconditionFailed):
        headers["ETag"] = exc.current.etag
        exc = PreconditionFailedError(str(exc))
    elif isinstance(exc, OperationalError | InterfaceError):
        logger.error("database unavailable: %s", exc)
        set_rollback()
        headers["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
        exc = DatabaseUnavailable()
    response = drf_exception_handler(exc, context)
    if response is not None:
        for name, value in headers.items():
            response[name] = value
    return response
