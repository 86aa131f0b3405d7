"""API views: validate the input, call one service or selector, shape the output.

One class per operation. Where the API puts two operations on one path, the route
class in ``urls.py`` combines the two operation classes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt import errors
from sysprompt.accounts.selectors import is_agent_host
from sysprompt.api import schema as _schema  # noqa: F401 - registers the extensions
from sysprompt.api import serializers as s
from sysprompt.api.auth import CanEditTemplate, caller_permissions
from sysprompt.api.common import (
    CONSTRUCTING_UNAVAILABLE,
    ERROR,
    IF_MATCH,
    IF_NONE_MATCH,
    drf_datetime,
    error_responses,
    etag_parameter,
    if_match_tags,
    not_modified,
    not_modified_response,
    page_parameters,
    page_response,
    route_prompt,
)
from sysprompt.api.pagination import ConversationPagination, VersionPagination
from sysprompt.library.selectors import agent_host_id
from sysprompt.prompts import rendering, selectors, services
from sysprompt.prompts.catalog import prompt_get
from sysprompt.prompts.catalog_services import editors_check
from sysprompt.prompts.hosts import caller_prompt
from sysprompt.prompts.validation import HostContext, host_context_check
from sysprompt.releases.selectors import conversation_build, label_builds
from sysprompt.releases.validation import call_label_valid
from sysprompt_core.limits import CONVERSATION_ID_MAX_LENGTH, CONVERSATION_ID_PATTERN
from sysprompt_core.variables import variable_catalog

if TYPE_CHECKING:
    from sysprompt.prompts.models import ConversationPrompt, Prompt

CONVERSATION_ID = OpenApiParameter(
    "conversation_id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description=f"1–{CONVERSATION_ID_MAX_LENGTH} characters: letters, digits and . _ : -",
    pattern=f"^{CONVERSATION_ID_PATTERN}$",
)
ETAG = etag_parameter("the template", [200, 412])


def _template_response(current: selectors.CurrentTemplate, code: int = 200) -> Response:
    data = s.TemplateOutputSerializer(
        {
            "text": current.text,
            "version": current.version,
            "updated_at": current.updated_at,
            "is_default": current.is_default,
            "compress": current.compress,
        }
    ).data
    return Response(data, status=code, headers={"ETag": current.etag})


class SystemPromptGetApi(APIView):
    @extend_schema(
        operation_id="get_template",
        summary="The current template",
        parameters=[ETAG],
        responses={200: s.TemplateOutputSerializer, **error_responses()},
    )
    def get(self, request: Request, prompt: str | None = None) -> Response:
        return _template_response(selectors.template_current(route_prompt(self)))


class SystemPromptPutApi(APIView):
    permission_classes = [IsAuthenticated, CanEditTemplate]

    @extend_schema(
        operation_id="save_template",
        summary="Save a new version of the template",
        parameters=[IF_MATCH, ETAG],
        request=s.TemplateInputSerializer,
        responses={200: s.TemplateOutputSerializer, **error_responses(400, 412, 413, 415)},
    )
    def put(self, request: Request, prompt: str | None = None) -> Response:
        target = route_prompt(self)
        editors_check(request.user, target, action="edit")  # before the body, audited
        serializer = s.TemplateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        here = "/api/system-prompt" if prompt is None else f"/api/prompts/{prompt}/-/system-prompt"
        saved = services.template_save(
            text=serializer.validated_data["template"],
            compress=serializer.validated_data.get("compress"),
            author=request.user,
            if_match=if_match_tags(request, here),
            prompt=target,
        )
        return _template_response(selectors.template_of(saved))


class VariablesApi(APIView):
    @extend_schema(
        operation_id="list_template_variables",
        summary="The variables a template can use",
        responses={200: s.VariablesOutputSerializer, **error_responses()},
    )
    def get(self, request: Request, prompt: str | None = None) -> Response:
        route_prompt(self)  # 400 or 404 for a prompt that is not there
        return Response(s.VariablesOutputSerializer({"variables": variable_catalog()}).data)


class VersionsApi(APIView):
    pagination_class = VersionPagination  # used by _page; the schema names the page itself

    @extend_schema(
        operation_id="list_template_versions",
        summary="Every saved version, newest first",
        parameters=page_parameters(VersionPagination.max_page_size),
        responses={200: s.TemplateVersionPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, prompt: str | None = None) -> Response:
        versions = selectors.template_versions(prompt=route_prompt(self))
        return page_response(self, request, versions, s.TemplateVersionOutputSerializer)


def host_context(data: dict[str, Any]) -> HostContext:
    """The host context of a validated body, checked (400 naming the field); the fields
    are removed from ``data``. An ``override`` left out is not given (a stored
    conversation keeps its own); an ``override`` of null removes it."""
    given = {key: data.pop(key) for key in (*s.HOST_FIELDS, "call_override") if key in data}
    return host_context_check(**given)


def preview_data(preview: rendering.Preview) -> dict[str, Any]:
    """What PreviewOutputSerializer shows of a preview."""
    rendered = preview.rendered
    shown = rendering.preview_variables(rendered.values)
    end = rendered.prefix_end
    counted = preview.counted
    return {
        "system_prompt": rendered.prompt,
        "diagnostics": [asdict(d) for d in preview.diagnostics],
        "variables": {v.key: v.value for v in shown},
        "truncated": [v.key for v in shown if v.omitted],
        "same_as": {v.key: v.same_as for v in shown if v.same_as is not None},
        "reasons": {v.key: v.reason for v in shown if v.reason is not None},
        "shared_prefix_chars": rendered.shared_prefix_chars,
        "system_prompt_tokens": counted.prompt.tokens,
        "shared_prefix_tokens": counted.shared_prefix.tokens,
        "tokens_exact": counted.exact,
        "tokens_encoding": counted.prompt.encoding,
        "tokens_error": counted.failure,
        "shared_prefix_end": (
            None if end is None else {"key": end.key, "line": end.line, "column": end.column}
        ),
    }


class PreviewApi(APIView):
    @extend_schema(
        operation_id="preview_template",
        summary="Render a template for a working directory; stores nothing",
        description=(
            "With the host context (provider, tools, variables, a thread override) the "
            "template is rendered as construct would for such a conversation."
        ),
        request=s.PreviewInputSerializer,
        responses={200: s.PreviewOutputSerializer, **error_responses(400, 413, 415)},
    )
    def post(self, request: Request, prompt: str | None = None) -> Response:
        target = route_prompt(self)
        serializer = s.PreviewInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        host = host_context(data)
        preview = rendering.template_preview(**data, host=host, prompt=target)
        return Response(s.PreviewOutputSerializer(preview_data(preview)).data)


def prompt_payload(row: ConversationPrompt) -> dict[str, Any]:
    """What ConversationPromptOutputSerializer gives, built directly: every turn answers
    this, and the serializer would cost more than the database query (the schema still
    comes from the serializer; a test checks the two agree)."""
    return {
        "conversation_id": row.conversation_id,
        "prompt": row.prompt.name,
        "system_prompt": row.system_prompt,
        "template_version": row.template_version_number,
        "constructed_at": drf_datetime(row.constructed_at),
        "sha256": row.sha256,
        "cwd": row.cwd,
        "model": row.model,
        "provider": row.provider,
        "tools": list(row.tools),
        "variables": dict(row.variables),
        "override": row.override,
        "fragments_used": [dict(use) for use in row.fragments_used],
        "shared_prefix_chars": row.shared_prefix_chars,
        "label": row.label,
        "release": row.release,
        "arm": row.arm,
    }


EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def conversation_etag(row: ConversationPrompt) -> str:
    """``"<sha256>"``: the SHA-256 of the stored prompt, strong, what a client keeps as
    ``sha256``; for a null prompt that of no bytes (no stored prompt is ``""``)."""
    return f'"{row.sha256 or EMPTY_SHA256}"'


def _conversation_input(
    request: Request,
    serializer_class: type[serializers.Serializer[Any]] = s.ConversationInputSerializer,
) -> dict[str, Any]:
    """The validated body of resolve, construct and compact: ``cwd``, ``model``, the
    checked host context as ``host``, what a build uses (the ``label``, checked
    as a name here and looked up only when a prompt is built) as ``build``, the
    ``prompt``'s name (looked up only for a new conversation, or one frozen from another
    name), and the agent host a route addresses as ``host_id``."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    data = dict(serializer.validated_data)
    if "model" not in request.data:  # not given: no difference, or the frozen one kept
        data["model"] = None
    host = host_context(data)
    label = data.pop("label", None)
    build = conversation_build(None if label is None else call_label_valid(label))
    return {**data, "host": host, "build": build, "host_id": route_host_id(request)}


def route_host_id(request: Request) -> int | None:
    """The agent host a route names (``/api/agent-hosts/{username}/conversations/…``),
    404 for no such host; None on today's routes (``/api/conversations/…``)."""
    kwargs = request.parser_context.get("kwargs", {}) if request.parser_context else {}
    username = kwargs.get("username")
    if username is None:
        return None
    if "\0" in username:
        raise errors.AgentHostNotFound(username)
    return agent_host_id(username)


def _stored_status(stored: services.Stored) -> int:
    return status.HTTP_201_CREATED if stored.created else status.HTTP_200_OK


CONSTRUCTING_ERRORS = error_responses(
    400,
    404,
    409,
    410,
    413,
    415,
    e503=CONSTRUCTING_UNAVAILABLE,
    e404=OpenApiResponse(
        ERROR,
        description=(
            "Not found: the conversation (not visible to the caller), the agent host, or "
            "the prompt (unknown, or one the agent host may not use)."
        ),
    ),
    e409=OpenApiResponse(
        ERROR,
        description=(
            "The conversation is frozen from another prompt than the body names (both "
            "named), or, without a host in the path, the id names several agent hosts' "
            "conversations (listed in hosts)."
        ),
    ),
    e410=OpenApiResponse(
        ERROR, description="The prompt is archived: it starts no new conversation."
    ),
)
"""The errors of an operation that may construct a prompt (503 also when git is busy)."""

AMBIGUOUS = OpenApiResponse(
    ERROR,
    description=(
        "Without a host in the path, the id names several agent hosts' conversations "
        "(listed in hosts): name the host."
    ),
)


class ResolveApi(APIView):
    @extend_schema(
        operation_id="resolve",
        summary="Every turn: the stored prompt, or on the first turn construct and store it",
        description=(
            "201 on the first turn (constructed and stored), 200 on every later turn with "
            "the stored prompt byte for byte, until construct or compact; context_mismatch "
            "names what of the frozen cwd, model and provider this turn's differ from. "
            "A call_override "
            "is layered onto this answer only (never stored); the answer then also carries "
            "the stored prompt as persisted_system_prompt and its persisted_sha256."
        ),
        parameters=[CONVERSATION_ID],
        request=s.ResolveInputSerializer,
        responses={
            200: s.ResolveOutputSerializer,
            201: s.ResolveOutputSerializer,
            **CONSTRUCTING_ERRORS,
        },
    )
    def post(self, request: Request, conversation_id: str, username: str | None = None) -> Response:
        stored = services.conversation_prompt_resolve(
            conversation_id=conversation_id,
            user=request.user,
            **_conversation_input(request, s.ResolveInputSerializer),
        )
        data = prompt_payload(stored.prompt)
        if stored.mismatch:
            data["context_mismatch"] = list(stored.mismatch)
        if stored.call is not None:
            data = {
                **data,
                "system_prompt": stored.call.prompt,
                "sha256": stored.call.sha256,
                "shared_prefix_chars": stored.call.shared_prefix_chars,
                "persisted_system_prompt": data["system_prompt"],
                "persisted_sha256": data["sha256"],
                "persisted_shared_prefix_chars": data["shared_prefix_chars"],
            }
        return Response(data, status=_stored_status(stored))


KEPT_CONTEXT = (
    " Every field of the context the body leaves out (cwd, model, provider, tools, "
    "variables, override) is kept from the stored conversation's frozen context, and "
    "context_kept names them; a field given replaces it. A conversation without a stored "
    "prompt needs cwd."
)


class ConstructApi(APIView):
    @extend_schema(
        operation_id="construct",
        summary="Resolve the current template afresh and store it, replacing the stored one",
        description=(
            "201 when the conversation had no stored prompt, 200 when it replaced one."
            + KEPT_CONTEXT
        ),
        parameters=[CONVERSATION_ID],
        request=s.ConversationInputSerializer,
        responses={
            200: s.ConstructOutputSerializer,
            201: s.ConstructOutputSerializer,
            **CONSTRUCTING_ERRORS,
        },
    )
    def post(self, request: Request, conversation_id: str, username: str | None = None) -> Response:
        stored = services.conversation_prompt_construct(
            conversation_id=conversation_id, user=request.user, **_conversation_input(request)
        )
        data = {**prompt_payload(stored.prompt), "context_kept": list(stored.kept)}
        return Response(data, status=_stored_status(stored))


class CompactApi(APIView):
    @extend_schema(
        operation_id="compact",
        summary="Construct afresh for a compaction turn",
        description=(
            "Stores the fresh prompt and answers it with the compaction instructions "
            'appended after "\\n\\n" (the instructions alone when the fresh prompt is null).'
            + KEPT_CONTEXT
        ),
        parameters=[CONVERSATION_ID],
        request=s.ConversationInputSerializer,
        responses={
            200: s.CompactOutputSerializer,
            201: s.CompactOutputSerializer,
            **CONSTRUCTING_ERRORS,
        },
    )
    def post(self, request: Request, conversation_id: str, username: str | None = None) -> Response:
        compacted = services.conversation_prompt_compact(
            conversation_id=conversation_id, user=request.user, **_conversation_input(request)
        )
        row = compacted.stored.prompt
        data = {
            **prompt_payload(row),
            "system_prompt": compacted.compaction_prompt,
            "persisted_system_prompt": row.system_prompt,
            "context_kept": list(compacted.stored.kept),
        }
        return Response(data, status=_stored_status(compacted.stored))


class ConversationPromptGetApi(APIView):
    @extend_schema(
        operation_id="get_conversation_prompt",
        summary="The stored prompt",
        description=(
            'The ETag is "<sha256>" of the stored prompt (of no bytes for a null one): '
            "send it back as If-None-Match to revalidate a kept prompt for a 304."
        ),
        parameters=[
            CONVERSATION_ID,
            IF_NONE_MATCH,
            OpenApiParameter(
                "ETag",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=[200, 304],
                description='"<sha256>" of the stored prompt; send it back as If-None-Match.',
            ),
        ],
        responses={
            200: s.ConversationPromptOutputSerializer,
            304: not_modified_response("If-None-Match names the stored prompt: no body."),
            **error_responses(400, 404, 409, e409=AMBIGUOUS),
        },
    )
    def get(self, request: Request, conversation_id: str, username: str | None = None) -> Response:
        row = selectors.conversation_prompt_visible(
            conversation_id, user=request.user, host_id=route_host_id(request)
        )
        etag = conversation_etag(row)
        unchanged = not_modified(request, etag)
        if unchanged is not None:
            return unchanged
        return Response(prompt_payload(row), headers={"ETag": etag})


REFERENCES_PROMPTS_MAX = 100
"""How many prompts one references request may name."""

REFERENCES_ANSWER = PolymorphicProxySerializer(
    component_name="ReferencesAnswer",
    serializers=[s.TemplateReferencesOutputSerializer, s.PromptsReferencesOutputSerializer],
    resource_type_field_name=None,
)


class ReferencesApi(APIView):
    @extend_schema(
        operation_id="list_template_references",
        summary="Every reference the current template can reach: what a host resolves",
        description=(
            "For an agent host that resolves host-local values itself (prompt:cwd, git:, "
            "file:, system:) and sends them as `values`: every reference of the current "
            "template for the provider and model, in every branch, through the fragments "
            "it can include and the caller's instance override, and `host_resolves`, the "
            "host-local types this server leaves to the host. Nothing is resolved. "
            "Without a prompt: the caller's default prompt (else default). With "
            "?prompt=a&prompt=b (at most 100): each prompt's answer, by the name asked "
            'for, in one request ({"prompts": {"a": {...}, "b": {...}}}); a prompt the '
            "agent host may not use is 404, as an unknown one. "
            "The strong ETag names the answer; If-None-Match with it answers 304."
        ),
        parameters=[
            OpenApiParameter(
                "provider",
                OpenApiTypes.STR,
                description="The provider, as the host sends it with resolve; picks variants.",
            ),
            OpenApiParameter(
                "model",
                OpenApiTypes.STR,
                description="The model, as the host sends it with resolve; picks variants.",
            ),
            OpenApiParameter(
                "label",
                OpenApiTypes.STR,
                description=(
                    "The label, as the host sends it with resolve (left out: the caller's "
                    'label, else production; "latest": the working copy); a split\'s arms '
                    "are joined."
                ),
            ),
            OpenApiParameter(
                "prompt",
                {"type": "array", "items": {"type": "string"}, "maxItems": REFERENCES_PROMPTS_MAX},
                explode=True,
                description=(
                    "Prompts' names, repeated (?prompt=a&prompt=b): the answer is then "
                    "{prompts: {name: references}}."
                ),
            ),
            IF_NONE_MATCH,
            OpenApiParameter(
                "ETag",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=[200, 304],
                description="Names this list; send it back as If-None-Match.",
            ),
        ],
        responses={
            200: REFERENCES_ANSWER,
            304: not_modified_response("If-None-Match names the current list: no body."),
            **error_responses(400, 404),
        },
    )
    def get(self, request: Request, prompt: str | None = None) -> Response:
        query = s.ReferencesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        names = request.query_params.getlist("prompt")
        if prompt is not None and names:
            raise errors.InvalidInput(
                "prompt", "The path names the prompt: leave ?prompt= out (or use today's route)."
            )
        if len(names) > REFERENCES_PROMPTS_MAX:
            raise errors.InvalidInput(
                "prompt", f"At most {REFERENCES_PROMPTS_MAX} prompts in one request."
            )
        label = query.validated_data.get("label") or None
        label = None if label is None else call_label_valid(label)
        user_id = request.user.pk
        if not names:
            found = self._references(query, label, caller_prompt(prompt, user_id=user_id))
            answer: dict[str, Any] = _references_answer(found)
            etag = found.etag
        else:
            wanted = {name: caller_prompt(name, user_id=user_id) for name in names}
            answer = {
                "prompts": {
                    name: _references_answer(self._references(query, label, target))
                    for name, target in wanted.items()
                }
            }
            digest = hashlib.sha256(json.dumps(answer, sort_keys=True).encode("utf-8"))
            etag = f'"{digest.hexdigest()}"'
        unchanged = not_modified(request, etag)
        if unchanged is not None:
            return unchanged
        return Response(answer, headers={"ETag": etag})

    def _references(
        self,
        query: s.ReferencesQuerySerializer,
        label: str | None,
        prompt: Prompt,
    ) -> rendering.TemplateReferences:
        builds = label_builds(label, self.request.user.pk, prompt=prompt)
        return rendering.template_references(
            provider=query.validated_data.get("provider") or None,
            model=query.validated_data.get("model") or None,
            host_id=self.request.user.pk,
            builds=builds,
            prompt=prompt,
        )


def _references_answer(found: rendering.TemplateReferences) -> dict[str, Any]:
    return {"references": list(found.keys), "host_resolves": list(found.host_resolves)}


class ConversationPromptDeleteApi(APIView):
    @extend_schema(
        operation_id="delete_conversation_prompt",
        summary="Forget the stored prompt",
        parameters=[CONVERSATION_ID],
        responses={204: None, **error_responses(400, 404, 409, e409=AMBIGUOUS)},
    )
    def delete(
        self, request: Request, conversation_id: str, username: str | None = None
    ) -> Response:
        if not services.conversation_prompt_delete(
            conversation_id=conversation_id, user=request.user, host_id=route_host_id(request)
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
        parameters=[
            *page_parameters(ConversationPagination.max_page_size),
            OpenApiParameter(
                "prompt",
                OpenApiTypes.STR,
                description="Only the conversations frozen from this prompt (a name).",
            ),
        ],
        responses={200: s.ConversationPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        name = request.query_params.get("prompt")
        prompt = None if name is None else prompt_get(name, field="prompt")
        rows = selectors.conversation_prompts(user=request.user, prompt=prompt)
        return page_response(
            self, request, rows.select_related("owner"), s.ConversationListItemOutputSerializer
        )


class CallerApi(APIView):
    @extend_schema(
        operation_id="get_caller",
        summary="Who the token is and what it may do",
        description=(
            "The permissions each operation checks, as they apply to this token: an MCP "
            "server or another client lists only what its token may use."
        ),
        responses={200: s.CallerOutputSerializer, **error_responses()},
    )
    def get(self, request: Request) -> Response:
        user = request.user
        data = {
            "username": user.get_username(),
            "agent_host": is_agent_host(user),
            "permissions": caller_permissions(user),
        }
        return Response(s.CallerOutputSerializer(data).data)


class HealthApi(APIView):
    @extend_schema(
        operation_id="health",
        summary="Whether the app can reach its database",
        responses={200: s.HealthOutputSerializer, **error_responses()},
    )
    def get(self, request: Request) -> Response:
        selectors.database_check()
        return Response({"status": "ok", "database": "ok"})
