"""Middleware every answer passes through.

* :class:`ErrorResponseMiddleware`: under ``/api/`` every error is JSON
  (``{"detail": …}``), whatever produced it (Django's 404 and 500 pages, a plain view's
  empty 405); at ``/mcp`` too, as a JSON-RPC error without an id (what MCP clients
  read), e.g. Django's 400 for a Host header that is not one of ``ALLOWED_HOSTS``; a
  page whose database is unreachable answers a small 503 page with ``Retry-After``
  instead of a 500 with a traceback.
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

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.http.request import split_domain_port, validate_host
from django.template import loader

logger = logging.getLogger("sysprompt.errors")

API_PREFIX = "/api/"
MCP_PATH = "/mcp"
JSONRPC_INVALID_REQUEST = -32600
DATABASE_RETRY_AFTER_SECONDS = 5
DATABASE_UNAVAILABLE = "The database is unavailable; try again shortly."
SERVER_ERROR_DETAIL = "The server failed to answer; the error is in its log."
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")

GetResponse = Callable[[HttpRequest], HttpResponseBase]


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def is_mcp(request: HttpRequest) -> bool:
    path = request.path_info
    return path == MCP_PATH or path.startswith(f"{MCP_PATH}/")


def _host_allowed(request: HttpRequest) -> bool:
    domain, _port = split_domain_port(request.META.get("HTTP_HOST", ""))
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS or [])


def mcp_error(status: int, message: str) -> HttpResponse:
    """An error at ``/mcp``: a JSON-RPC error without an id, as the MCP SDK answers."""
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": JSONRPC_INVALID_REQUEST, "message": message},
    }
    return HttpResponse(json.dumps(body), status=status, content_type="application/json")


def _mcp_message(request: HttpRequest, response: HttpResponseBase) -> str:
    if response.status_code == HTTPStatus.BAD_REQUEST and not _host_allowed(request):
        return "Invalid Host header: the server does not serve this host (ALLOWED_HOSTS)."
    detail = _detail(request, response)
    if isinstance(detail, dict) and isinstance(detail.get("detail"), str):
        return str(detail["detail"])
    return json.dumps(detail)


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
        if response.status_code < 400 or _is_json(response):
            return response
        if is_mcp(request):
            answer: HttpResponse = mcp_error(response.status_code, _mcp_message(request, response))
        elif is_api(request):
            answer = JsonResponse(_detail(request, response), status=response.status_code)
        else:
            return response
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
        if is_mcp(request):
            answer = mcp_error(HTTPStatus.SERVICE_UNAVAILABLE, DATABASE_UNAVAILABLE)
            answer["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
            return answer
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
