"""``/mcp``: the MCP server over Streamable HTTP (stateless, JSON answers).

request → POST only (405 otherwise: a stateless server opens no stream) → the API's
token (``Authorization: Token <key>`` or ``Bearer <key>``; 401 without) → the body,
read up to the API's limit (413 over it) → the MCP server for this user
(:func:`sysprompt.mcp.server.mcp_server`) → the SDK's transport
(:func:`sysprompt.mcp.transport.exchange`: the Host and Origin checks, the JSON-RPC).

Every refusal here is JSON, a JSON-RPC error without an id, as the SDK's own are, with
the API's message: an MCP client shows it. Session cookies are not accepted: an MCP
client sends a token, and a cookie-authenticated POST would need CSRF protection.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated

from sysprompt.api.auth import BearerTokenAuthentication
from sysprompt.api.parsers import max_body_bytes
from sysprompt.conf import app_settings
from sysprompt.errors import BodyTooLarge

ALLOWED_METHODS = "POST"
INVALID_REQUEST = -32600
"""JSON-RPC's "Invalid Request" (``mcp_types.INVALID_REQUEST``, written out: this module
is imported with the URLconf, and the MCP SDK only at ``/mcp``'s first request)."""
AUTHENTICATE = 'Bearer realm="sysprompt"'
_AUTHENTICATORS = (TokenAuthentication(), BearerTokenAuthentication())


def error_response(status: int, message: str, **headers: str) -> HttpResponse:
    """A refusal as a JSON-RPC error with no id (what the SDK answers too)."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def token_user(request: HttpRequest) -> AbstractUser:
    """The user of the API token the request sends; AuthenticationFailed (a bad token)
    or NotAuthenticated (none) otherwise. The API's own classes, so its rules hold:
    an unknown token or an inactive user is refused."""
    for authenticator in _AUTHENTICATORS:
        found = authenticator.authenticate(request)  # type: ignore[arg-type]
        if found is not None:
            user: AbstractUser = found[0]
            return user
    raise NotAuthenticated()


def body_max_bytes() -> int:
    """The largest body accepted: the API's (room for a template at the limit, JSON
    escaped), and never more than Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE``."""
    limits = [max_body_bytes()]
    if settings.DATA_UPLOAD_MAX_MEMORY_SIZE is not None:
        limits.append(int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE))
    return min(limits)


def _body(request: HttpRequest, limit: int) -> bytes:
    """The request's body, refused before it is read when ``Content-Length`` is over
    ``limit``, and as soon as one byte too many arrives otherwise."""
    length = request.META.get("CONTENT_LENGTH") or ""
    if length.isdigit() and int(length) > limit:
        raise BodyTooLarge(int(length), limit)
    data = request.read(limit + 1)
    if len(data) > limit:
        raise BodyTooLarge(len(data), limit)
    return data


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return error_response(
            HTTPStatus.METHOD_NOT_ALLOWED,
            f'Method "{request.method}" not allowed: this MCP server is stateless and '
            "answers POST only (JSON), with no stream to open or session to end.",
            Allow=ALLOWED_METHODS,
        )
    try:
        user = token_user(request)
    except (AuthenticationFailed, NotAuthenticated) as refused:
        return error_response(
            HTTPStatus.UNAUTHORIZED, str(refused.detail), WWW_Authenticate=AUTHENTICATE
        )
    limit = body_max_bytes()
    try:
        body = _body(request, limit)
    except BodyTooLarge as refused:
        return error_response(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, str(refused))
    # The MCP SDK (a second of CPU to import) loads here, at the first request, not with
    # the URLconf that every `manage.py check` and server start imports.
    from sysprompt.mcp.server import mcp_server
    from sysprompt.mcp.transport import exchange

    server = mcp_server(user=user, write=app_settings().mcp_write)
    answer = exchange(server, request, body, max_body_bytes=limit)
    content_type = answer.header("content-type") or ""
    if answer.status >= 400 and not content_type.startswith("application/json"):
        # The SDK's Host and Origin refusals are plain text: JSON here, as every answer.
        said = answer.body.decode("utf-8", "replace").strip()[:500]
        return error_response(answer.status, said or HTTPStatus(answer.status).phrase)
    response = HttpResponse(answer.body, status=answer.status)
    if content_type:
        response["Content-Type"] = content_type
    else:  # 202 to a notification: no body, so no type (not Django's default, HTML)
        del response["Content-Type"]
    for name, value in answer.headers:
        if name not in {"content-type", "content-length"}:
            response[name] = value
    return response
