"""The catalog of prompts (docs/api-reference.md, "Prompts"): list, create, read,
change, rename, archive, duplicate and delete a prompt, and restrict a folder. Prompt
authors only (the template's change permission, reads too); a restricted prompt or
folder also needs a membership of its groups to change (403, audited).

request → permission → the prompt of the route (400 for a name that breaks the rule,
404 for an unknown one) → the group restriction (writes) → input serializer (shape) →
``catalog_services`` (rules: 400 naming the field, 409) → output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import prompt_serializers as ps
from sysprompt.api.auth import IsPromptAuthor
from sysprompt.api.common import (
    ERROR,
    PROMPT_PATH_PARAMETER,
    error_responses,
    page_parameters,
    route_prompt,
)
from sysprompt.api.pagination import StrictPageSizePagination
from sysprompt.api.schema import SyspromptAutoSchema
from sysprompt.prompts import catalog_selectors as selectors
from sysprompt.prompts import catalog_services as services
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH, PROMPT_NAME_PATTERN

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt


class CatalogSchema(SyspromptAutoSchema):
    """The catalog's own operations under ``/api/prompts/{prompt}/-/`` (rename, archive,
    unarchive, duplicate) are no other route's view served again: their ids and their
    ``prompt`` parameter stay as declared."""

    def _route_prefix(self) -> str:
        return ""


class ManagesPrompts(IsPromptAuthor):
    message = (
        "The catalog of prompts is for prompt authors: it needs the 'Can change template "
        "version' permission (sysprompt.change_templateversion)."
    )


class PromptPagination(StrictPageSizePagination):
    """Prompts by name: keyset pages (``name >`` the cursor), as fast last as first."""

    ordering = "name"
    page_size = 50
    max_page_size = 100


def prompt_shown(prompt: Prompt) -> dict[str, Any]:
    detail = selectors.prompt_detail(prompt)
    row = detail.row
    return dict(
        ps.PromptOutputSerializer(
            {
                "id": row.id,
                "name": row.name,
                "aliases": detail.aliases,
                "description": row.description,
                "tags": row.tags,
                "archived": row.archived,
                "version": row.version,
                "updated_at": row.updated_at,
                "labels": row.labels,
                "editor_groups": detail.editor_groups,
                "restricted_by": detail.restricted_by,
            }
        ).data
    )


CONFLICT = OpenApiResponse(
    ERROR, description="The name is a prompt's, or a former name of another (an alias)."
)
NAME_SCHEMA = {
    "type": "string",
    "pattern": f"^{PROMPT_NAME_PATTERN}$",
    "maxLength": PROMPT_NAME_MAX_LENGTH,
}
PROMPT = OpenApiParameter(
    PROMPT_PATH_PARAMETER.name,
    NAME_SCHEMA,
    OpenApiParameter.PATH,
    description=PROMPT_PATH_PARAMETER.description,
)
FOLDER = OpenApiParameter(
    "folder",
    NAME_SCHEMA,
    OpenApiParameter.PATH,
    description=(
        "A folder: the first segments of prompt names, such as support or support/team "
        "(its slashes are part of it: a generated client encodes them)."
    ),
)


class PromptListApi(APIView):
    permission_classes = [IsAuthenticated, ManagesPrompts]
    pagination_class = PromptPagination

    @extend_schema(
        operation_id="list_prompts",
        summary="The prompts, by name (archived ones only with archived=true)",
        parameters=[
            OpenApiParameter(
                "folder",
                OpenApiTypes.STR,
                description="Only prompts in this folder, at any depth (whole segments: "
                "support or support/).",
            ),
            OpenApiParameter(
                "search",
                OpenApiTypes.STR,
                description="Only prompts whose name, description or a tag contains it (any case).",
            ),
            OpenApiParameter("tag", OpenApiTypes.STR, description="Only prompts with this tag."),
            OpenApiParameter(
                "label",
                OpenApiTypes.STR,
                description="Only prompts that have a label of this name (set on them).",
            ),
            OpenApiParameter(
                "archived", OpenApiTypes.BOOL, description="true: archived prompts too."
            ),
            *page_parameters(PromptPagination.max_page_size),
        ],
        responses={200: ps.PromptPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        query = ps.PromptListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        given = query.validated_data
        prompts = selectors.prompts_query(
            folder=given.get("folder") or None,
            search=given.get("search") or None,
            tag=given.get("tag") or None,
            label=given.get("label") or None,
            archived=given.get("archived", False),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(prompts, request, view=self)
        rows = selectors.prompt_rows(list(page or []))
        return paginator.get_paginated_response(ps.PromptRowOutputSerializer(rows, many=True).data)


class PromptCreateApi(APIView):
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="create_prompt",
        summary="Create a prompt",
        description="201; 409 when a prompt has the name or had it (an alias).",
        request=ps.PromptCreateInputSerializer,
        responses={
            201: ps.PromptOutputSerializer,
            **error_responses(400, 409, 413, 415, e409=CONFLICT),
        },
    )
    def post(self, request: Request) -> Response:
        body = ps.PromptCreateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        prompt = services.prompt_create(**body.validated_data, author=request.user)
        return Response(prompt_shown(prompt), status=status.HTTP_201_CREATED)


class PromptGetApi(APIView):
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="get_prompt",
        summary="One prompt: its aliases, restriction and labels",
        description="A former name (an alias) answers the prompt under its name now.",
        parameters=[PROMPT],
        responses={200: ps.PromptOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, prompt: str) -> Response:
        return Response(prompt_shown(route_prompt(self)))


class PromptUpdateApi(APIView):
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="update_prompt",
        summary="Change a prompt's description, tags or editor groups; what is left out stays",
        description=(
            "editor_groups needs a superuser or the sysprompt.change_folderrestriction "
            "permission; an unknown group is 400."
        ),
        parameters=[PROMPT],
        request=ps.PromptUpdateInputSerializer,
        responses={200: ps.PromptOutputSerializer, **error_responses(400, 404, 415)},
    )
    def patch(self, request: Request, prompt: str) -> Response:
        found = route_prompt(self)
        services.editors_check(request.user, found, action="change")
        body = ps.PromptUpdateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        changed = services.prompt_update(prompt=found, **body.validated_data, author=request.user)
        return Response(prompt_shown(changed))


class PromptDeleteApi(APIView):
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="delete_prompt",
        summary="Delete a prompt that has no conversations, releases or runs",
        description=(
            "Its versions, labels, test contexts, suites and aliases go with it. 409 saying "
            "what it has otherwise (archive it instead), and for default."
        ),
        parameters=[PROMPT],
        responses={
            204: OpenApiResponse(description="Deleted."),
            **error_responses(
                400,
                404,
                409,
                e409=OpenApiResponse(
                    ERROR, description="It has conversations, releases or runs, or is default."
                ),
            ),
        },
    )
    def delete(self, request: Request, prompt: str) -> Response:
        services.prompt_delete(prompt=route_prompt(self), author=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PromptRenameApi(APIView):
    schema = CatalogSchema()
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="rename_prompt",
        summary="Rename a prompt: its id stays, its old name answers as an alias",
        description=(
            "409 when another prompt has or had the name, and for default. Taking one of "
            "its own former names removes that alias."
        ),
        parameters=[PROMPT],
        request=ps.PromptRenameInputSerializer,
        responses={
            200: ps.PromptOutputSerializer,
            **error_responses(400, 404, 409, 415, e409=CONFLICT),
        },
    )
    def post(self, request: Request, prompt: str) -> Response:
        found = route_prompt(self)
        services.editors_check(request.user, found, action="rename")
        body = ps.PromptRenameInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        renamed = services.prompt_rename(
            prompt=found, name=body.validated_data["name"], author=request.user
        )
        return Response(prompt_shown(renamed))


class _ArchiveApi(APIView):
    schema = CatalogSchema()
    permission_classes = [IsAuthenticated, ManagesPrompts]
    archived: bool

    def post(self, request: Request, prompt: str) -> Response:
        changed = services.prompt_archive(
            prompt=route_prompt(self), archived=self.archived, author=request.user
        )
        return Response(prompt_shown(changed))


NOT_DEFAULT = OpenApiResponse(ERROR, description="default is never archived.")


class PromptArchiveApi(_ArchiveApi):
    archived = True

    @extend_schema(
        operation_id="archive_prompt",
        summary="Archive a prompt: hidden from lists, new conversations refused (410)",
        description="Everything it has stays; unarchive undoes it.",
        parameters=[PROMPT],
        request=None,
        responses={
            200: ps.PromptOutputSerializer,
            **error_responses(400, 404, 409, e409=NOT_DEFAULT),
        },
    )
    def post(self, request: Request, prompt: str) -> Response:
        return super().post(request, prompt)


class PromptUnarchiveApi(_ArchiveApi):
    archived = False

    @extend_schema(
        operation_id="unarchive_prompt",
        summary="Unarchive a prompt: listed again, and it starts conversations",
        parameters=[PROMPT],
        request=None,
        responses={
            200: ps.PromptOutputSerializer,
            **error_responses(400, 404, 409, e409=NOT_DEFAULT),
        },
    )
    def post(self, request: Request, prompt: str) -> Response:
        return super().post(request, prompt)


class PromptDuplicateApi(APIView):
    schema = CatalogSchema()
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="duplicate_prompt",
        summary="Copy a prompt under a new name",
        description=(
            "The new prompt's first version is this one's working copy, with its "
            "description and tags; test_contexts and suites copy those too (suites with "
            "their cases). Its releases, labels and history stay with the original."
        ),
        parameters=[PROMPT],
        request=ps.PromptDuplicateInputSerializer,
        responses={
            201: ps.PromptOutputSerializer,
            **error_responses(400, 404, 409, 415, e409=CONFLICT),
        },
    )
    def post(self, request: Request, prompt: str) -> Response:
        found = route_prompt(self)
        body = ps.PromptDuplicateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        copy = services.prompt_duplicate(prompt=found, **body.validated_data, author=request.user)
        return Response(prompt_shown(copy), status=status.HTTP_201_CREATED)


def _folder_shown(folder: str, groups: list[str]) -> dict[str, Any]:
    return dict(ps.FolderOutputSerializer({"folder": folder, "editor_groups": groups}).data)


class FolderGetApi(APIView):
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="get_folder",
        summary="A folder's restriction: the groups whose members may change its prompts",
        description="Empty: unrestricted (any folder is, until restricted).",
        parameters=[FOLDER],
        responses={200: ps.FolderOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, folder: str) -> Response:
        checked = selectors.folder_valid(folder)
        return Response(_folder_shown(checked, selectors.folder_groups(checked)))


class FolderSetApi(APIView):
    permission_classes = [IsAuthenticated, ManagesPrompts]

    @extend_schema(
        operation_id="set_folder",
        summary="Restrict a folder (and every prompt under it, at any depth) to groups",
        description=(
            "An empty list lifts the restriction. Needs a superuser or the "
            "sysprompt.change_folderrestriction permission; an unknown group is 400."
        ),
        parameters=[FOLDER],
        request=ps.FolderInputSerializer,
        responses={200: ps.FolderOutputSerializer, **error_responses(400, 404, 415)},
    )
    def put(self, request: Request, folder: str) -> Response:
        if not services.may_restrict(request.user):
            raise services.RestrictForbidden
        body = ps.FolderInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        groups = services.folder_restrict(
            folder=folder, editor_groups=body.validated_data["editor_groups"], author=request.user
        )
        return Response(_folder_shown(selectors.folder_valid(folder), groups))
