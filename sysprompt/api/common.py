"""What every group of API views shares: the documented error answers, the ``If-Match``
and ``If-None-Match`` headers, cursor pages and the ``ETag`` of an answer.

views → :func:`error_responses` (the schema's error answers), :func:`if_match_tags`
(the header, checked), :func:`not_modified` (a 304 for a revalidation that names the
current ``ETag``), :func:`page_response` (one page of a queryset or of a list).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet
from django.utils.http import parse_etags
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import serializers as s
from sysprompt.prompts.catalog import prompt_get

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt

ERROR = s.ErrorOutputSerializer
BAD_REQUEST = PolymorphicProxySerializer(
    component_name="BadRequest",
    serializers=[s.FieldErrorsOutputSerializer, ERROR],
    resource_type_field_name=None,
)

ERROR_DESCRIPTIONS: dict[int, str] = {
    401: "No valid credentials.",
    403: "Not allowed (missing permission, or a session write without CSRF).",
    404: "Not found.",
    409: "The library cannot be exported as a file tree (a fragment's name clashes).",
    412: "If-Match names a version that is not current.",
    413: "The template, the archive or the body is too large.",
    415: "The body is not of the media type the operation takes.",
    429: (
        "A limit refuses the run now: the user's runs at once, or the day's budget "
        "(then Retry-After says when the day ends)."
    ),
    503: "The database is unavailable.",
}


CONSTRUCTING_UNAVAILABLE = OpenApiResponse(
    ERROR,
    description=(
        "The database is unavailable, or (constructing a prompt) every git reader of the "
        "server was busy until the deadline: nothing was stored; retry after Retry-After."
    ),
)


def error_responses(*codes: int, **described: OpenApiResponse) -> dict[int | str, Any]:
    """The schema's error answers: 401, 403 and 503 (every operation), then ``codes``.

    ``described`` replaces one by status (``e404=OpenApiResponse(…)``).
    """
    answers: dict[int | str, Any] = {}
    for code in (401, 403, 503, *codes):
        if f"e{code}" in described:
            answers[code] = described[f"e{code}"]
        elif code == 400:
            answers[code] = OpenApiResponse(
                BAD_REQUEST,
                description="Invalid input: field name → list of messages, or {detail}.",
            )
        else:
            answers[code] = OpenApiResponse(ERROR, description=ERROR_DESCRIPTIONS[code])
    return answers


IF_MATCH = OpenApiParameter(
    "If-Match",
    {"type": "string", "minLength": 1},
    OpenApiParameter.HEADER,
    description=(
        'The ETag of the version you edited, or "*"; a stale one answers 412, '
        "a value that is not an entity tag 400."
    ),
)


def etag_parameter(what: str, codes: list[int]) -> OpenApiParameter:
    """The ``ETag`` header of an answer naming ``what``."""
    return OpenApiParameter(
        "ETag",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        response=codes,
        description=f"Names this version of {what}; send it back as If-Match.",
    )


def if_match_tags(request: Request, reload_from: str) -> list[str] | None:
    """The entity tags of ``If-Match``; None without the header, 400 when it names none.

    ``reload_from`` is where the client finds the current ETag (said in the message).
    """
    header = request.headers.get("If-Match")
    if header is None:
        return None
    tags = parse_etags(header)
    if not tags:
        raise ValidationError(
            {
                "If-Match": [
                    f"{header[:100]!r} is not an entity tag: send the ETag of GET "
                    f'{reload_from} (with its double quotes), or "*".'
                ]
            }
        )
    return tags


IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description=(
        "ETags of an answer you keep (or *): when one names the current answer, 304 "
        "with no body. A value that is no entity tag is ignored."
    ),
)


def not_modified_response(description: str) -> OpenApiResponse:
    """The schema's 304: no body, the ``ETag`` header as in the 200."""
    return OpenApiResponse(description=description)


def not_modified(request: Request, etag: str) -> Response | None:
    """A 304 carrying ``etag`` when ``If-None-Match`` names it (weak comparison, as
    RFC 9110 asks for this header: ``W/"x"`` matches ``"x"``) or is ``*``; ``None``
    otherwise, also for a header that is no list of entity tags."""
    header = request.headers.get("If-None-Match")
    if header is None:
        return None
    current = etag.removeprefix("W/")
    for tag in parse_etags(header):
        if tag == "*" or tag.removeprefix("W/") == current:
            return Response(status=304, headers={"ETag": etag})
    return None


PAGE_SIZE = {"type": "integer", "minimum": 1}


def page_parameters(max_size: int) -> list[OpenApiParameter]:
    return [
        OpenApiParameter("cursor", OpenApiTypes.STR, description="From next/previous."),
        OpenApiParameter(
            "page_size", PAGE_SIZE, description=f"From 1; larger than {max_size} gives {max_size}."
        ),
    ]


def page_response(
    view: APIView,
    request: Request,
    rows: QuerySet[Any] | list[Any],
    serializer_class: type[serializers.Serializer[Any]],
) -> Response:
    """One page of ``rows`` with the view's cursor pagination."""
    paginator = view.pagination_class()  # type: ignore[attr-defined]
    page = paginator.paginate_queryset(rows, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)  # type: ignore[no-any-return]


def drf_datetime(value: datetime) -> str:
    """A datetime as DRF's DateTimeField writes it (ISO 8601 in UTC, ``Z`` suffix)."""
    text = value.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text


PROMPT_PATH_PARAMETER = OpenApiParameter(
    "prompt",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description=(
        "The prompt's name, a path such as support/triage (its slashes are part of it: a "
        "generated client encodes them); /-/ ends it."
    ),
)


def route_prompt(view: APIView) -> Prompt:
    """The prompt a route names (``/api/prompts/{prompt}/-/…``), ``default`` on today's
    routes: 400 for a name that breaks the rule, 404 for an unknown one."""
    return prompt_get(view.kwargs.get("prompt"), field="prompt")
