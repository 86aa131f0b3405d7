"""An agent host's instance override (library.md §4, level 1) and its prompts (its
default prompt and the ones it may use): read and set by prompt authors only; applied
to every conversation that host constructs from then on.

request → the username (a user in the "Agent hosts" group, else 404) → the library's
selector; or who may change the host (403 when its label is protected and the author
may not publish, before the body is read), the body, the releases service and the
library's, which checks the override (400 naming the field) → output.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import library_serializers as ls
from sysprompt.api import serializers as s
from sysprompt.api.auth import IsPromptAuthor
from sysprompt.api.common import error_responses
from sysprompt.errors import AgentHostNotFound
from sysprompt.library import selectors as library
from sysprompt.prompts import hosts
from sysprompt.releases import services as release_services

USERNAME = OpenApiParameter(
    "username",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The agent host's user name (a user in the 'Agent hosts' group).",
)


def host_name(username: str) -> str:
    """The path's user name; one no user can have (a NUL) is no agent host: 404."""
    if "\0" in username:
        raise AgentHostNotFound(username)
    return username


def _shown(state: library.HostOverrideState) -> dict[str, object]:
    return dict(
        ls.HostOverrideOutputSerializer(
            {
                "username": state.username,
                "override": state.override,
                "updated_at": state.updated_at,
                "updated_by": state.updated_by,
            }
        ).data
    )


class AgentHostOverrideGetApi(APIView):
    permission_classes = [IsAuthenticated, IsPromptAuthor]

    @extend_schema(
        operation_id="get_agent_host_override",
        summary="The instance override of an agent host",
        parameters=[USERNAME],
        responses={200: ls.HostOverrideOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, username: str) -> Response:
        return Response(_shown(library.host_override_state(host_name(username))))


class AgentHostOverrideSetApi(APIView):
    permission_classes = [IsAuthenticated, IsPromptAuthor]

    @extend_schema(
        operation_id="set_agent_host_override",
        summary="Set (or with null remove) the instance override of an agent host",
        description=(
            "Applies to the conversations the host constructs or compacts from now on; "
            "stored prompts do not change until then. A host whose label is protected "
            "(no label: production) needs releases.publish_release: 403 without it, "
            "whatever the body."
        ),
        parameters=[USERNAME],
        request=ls.HostOverrideInputSerializer,
        responses={200: ls.HostOverrideOutputSerializer, **error_responses(400, 404, 415)},
    )
    def put(self, request: Request, username: str) -> Response:
        name = host_name(username)
        release_services.host_change_check(username=name, author=request.user)  # before the body
        body = ls.HostOverrideInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        state = release_services.host_override_set(
            username=name,
            override=body.validated_data["override"],
            author=request.user,
        )
        return Response(_shown(state))


def _prompts_shown(state: hosts.HostPromptsState) -> dict[str, object]:
    return dict(
        s.HostPromptsOutputSerializer(
            {
                "username": state.username,
                "default": state.default,
                "allowed": state.allowed,
                "updated_at": state.updated_at,
                "updated_by": state.updated_by,
            }
        ).data
    )


class AgentHostPromptsGetApi(APIView):
    permission_classes = [IsAuthenticated, IsPromptAuthor]

    @extend_schema(
        operation_id="get_agent_host_prompts",
        summary="The default prompt of an agent host and the prompts it may use",
        parameters=[USERNAME],
        responses={200: s.HostPromptsOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, username: str) -> Response:
        return Response(_prompts_shown(hosts.host_prompts_state(host_name(username))))


class AgentHostPromptsSetApi(APIView):
    permission_classes = [IsAuthenticated, IsPromptAuthor]

    @extend_schema(
        operation_id="set_agent_host_prompts",
        summary="Set the default prompt of an agent host and the prompts it may use",
        description=(
            "default: the prompt its conversations get when a call names none (null: "
            'default); allowed: names and folders ("support/") it may use (null: every '
            "prompt); another prompt is 404 to it, as an unknown one. An unknown name is "
            "400 naming the field; the default must be allowed. Stored conversations keep "
            "their prompt. A host whose label is protected (no label: production) needs "
            "releases.publish_release: 403 without it, whatever the body."
        ),
        parameters=[USERNAME],
        request=s.HostPromptsInputSerializer,
        responses={200: s.HostPromptsOutputSerializer, **error_responses(400, 404, 415)},
    )
    def put(self, request: Request, username: str) -> Response:
        name = host_name(username)
        release_services.host_change_check(username=name, author=request.user)  # before the body
        body = s.HostPromptsInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        state = hosts.host_prompts_set(
            username=name,
            default=body.validated_data["default"],
            allowed=body.validated_data["allowed"],
            author=request.user,
        )
        return Response(_prompts_shown(state))
