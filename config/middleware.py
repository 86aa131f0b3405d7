"""Middleware every answer passes through.

* :class:`ErrorResponseMiddleware`: under ``/api/`` every error is JSON
  (``{"detail": …}``), whatever produced it (Django's 404 and 500 pages, a plain view's
  empty 405); a page whose database is unreachable answers a small 503 page with
  ``Retry-After`` instead of a 500 with a traceback.
* :class:`NoStoreMiddleware`: ``Cache-Control: no-store`` on every answer whose view
  did not choose its own caching: pages, partials and API answers carry prompts and
  templates, which no browser or shared cache may keep. Static files never reach it
  (whitenoise answers them first, with its far-future caching).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from http import HTTPStatus

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.template import loader

logger = logging.getLogger("sysprompt.errors")

API_PREFIX = "/api/"
DATABASE_RETRY_AFTER_SECONDS = 5
DATABASE_UNAVAILABLE = "The database is unavailable; try again shortly."
SERVER_ERROR_DETAIL = "The server failed to answer; the error is in its log."
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")

GetResponse = Callable[[HttpRequest], HttpResponseBase]


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def _is_json(response: HttpResponseBase) -> bool:
    return str(response.get("Content-Type", "")).startswith("application/json")


def _detail(request: HttpRequest, response: HttpResponseBase) -> object:
    """What the JSON answer says: DRF's own data when a renderer made it not JSON (the
    schema view renders its errors as YAML), else a sentence for the status."""
    data = getattr(response, "data", None)
    if isinstance(data, dict) and data:
        return data
    status = response.status_code
    if status == HTTPStatus.NOT_FOUND:
        return {"detail": f"No API endpoint at {request.path}; see /api/docs/."}
    if status == HTTPStatus.METHOD_NOT_ALLOWED:
        return {"detail": f'Method "{request.method}" not allowed.'}
    if status >= HTTPStatus.INTERNAL_SERVER_ERROR and status != HTTPStatus.SERVICE_UNAVAILABLE:
        return {"detail": SERVER_ERROR_DETAIL}
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return {"detail": f"{phrase}."}


def database_unavailable_page() -> HttpResponse:
    """The 503 page, rendered without the request: the user, the session and the
    messages all need the database."""
    html = loader.get_template("503.html").render({"retry_after": DATABASE_RETRY_AFTER_SECONDS})
    response = HttpResponse(html, status=HTTPStatus.SERVICE_UNAVAILABLE)
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    return response


class ErrorResponseMiddleware:
    def __init__(self, get_response: GetResponse) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if response.status_code < 400 or not is_api(request) or _is_json(response):
            return response
        answer = JsonResponse(_detail(request, response), status=response.status_code)
        for name in KEPT_HEADERS:
            if name in response:
                answer[name] = response[name]
        # Django logged the original answer (a 500 with its traceback); not this one again.
        answer._has_been_logged = getattr(response, "_has_been_logged", False)  # type: ignore[attr-defined]
        return answer

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """An unreachable database: 503, the cause logged without a traceback. Anything
        else goes on to Django (logged with its traceback, answered 500)."""
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.error("database unavailable: %s", exception)
        if is_api(request):
            answer = HttpResponse(
                json.dumps({"detail": DATABASE_UNAVAILABLE}),
                status=HTTPStatus.SERVICE_UNAVAILABLE,
                content_type="application/json",
            )
            answer["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
            return answer
        return database_unavailable_page()


class NoStoreMiddleware:
    def __init__(self, get_response: GetResponse) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if "Cache-Control" not in response:
            response["Cache-Control"] = "no-store"
        return response
