"""The library's views (library.md §8): the list, one variant (read, save, delete), its
versions and the preview. One class per operation; ``urls.py`` combines the classes
that share a path.

request → the name (path) and the variant (``?provider=&model=``) checked by the
library's validation → a selector or a service of ``sysprompt.library`` → output.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import library_serializers as ls
from sysprompt.api import release_serializers as rs
from sysprompt.api.auth import CanEditLibrary, IsReleaseAuthor
from sysprompt.api.common import (
    IF_MATCH,
    error_responses,
    etag_parameter,
    if_match_tags,
    page_parameters,
    page_response,
)
from sysprompt.api.pagination import NamePagination, VersionPagination
from sysprompt.api.release_views import row_data, summary_data
from sysprompt.api.views import host_context, preview_data
from sysprompt.errors import FragmentNotFound
from sysprompt.library import selectors as library
from sysprompt.library import services as library_services
from sysprompt.library.validation import fragment_name_valid, variant_key_valid
from sysprompt.prompts import rendering
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt.releases.fragments import FragmentImpact, fragment_impact, fragment_users
from sysprompt_core.library import FRAGMENT_NAME_MAX_LENGTH, VariantKey

NAME = OpenApiParameter(
    "name",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description=(
        "The fragment's name, its slashes as they are (env/git-repository): segments of "
        f"[a-z0-9][a-z0-9._-]*, at most {FRAGMENT_NAME_MAX_LENGTH} characters. A path "
        "ending in /versions is the version list (see the API reference)."
    ),
)
VARIANT = [
    OpenApiParameter(
        "provider",
        OpenApiTypes.STR,
        description="The provider's variant (normalised: 'Open AI' is 'open-ai'); none: default.",
    ),
    OpenApiParameter(
        "model",
        OpenApiTypes.STR,
        description="The model's variant of that provider (normalised); needs provider.",
    ),
]
ETAG = etag_parameter("the variant", [200, 201, 412])


def fragment_name(name: str) -> str:
    """The path's fragment name, checked: 400 (field ``name``) shows a valid one."""
    return fragment_name_valid(name, "name")


def variant_key(request: Request) -> VariantKey:
    """The variant ``?provider=&model=`` picks, normalised; empty is "any"."""
    query = ls.VariantQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    provider = query.validated_data.get("provider") or None
    model = query.validated_data.get("model") or None
    return variant_key_valid(provider, model)


def variant_response(state: library.VariantState, code: int = status.HTTP_200_OK) -> Response:
    data = ls.VariantOutputSerializer(state).data
    return Response(data, status=code, headers={"ETag": state.etag})


def _reload_from(name: str, key: VariantKey) -> str:
    query = "&".join(
        f"{part}={value}"
        for part, value in (("provider", key.provider), ("model", key.model))
        if value
    )
    return f"/api/library/fragments/{name}" + (f"?{query}" if query else "")


class LibraryListApi(APIView):
    pagination_class = NamePagination  # used by page_response; the schema names the page

    @extend_schema(
        operation_id="list_library",
        summary="The library's fragments with their variants, by name",
        parameters=[
            OpenApiParameter(
                "search",
                OpenApiTypes.STR,
                description="Only fragments whose name or a variant's text holds this "
                "(ignoring case).",
            ),
            *page_parameters(NamePagination.max_page_size),
        ],
        responses={200: ls.LibraryPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        query = ls.LibraryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        fragments = library.fragments_list(search=query.validated_data.get("search") or None)
        ordered = sorted(fragments, key=lambda fragment: fragment.name)
        return page_response(self, request, ordered, ls.FragmentOutputSerializer)


class FragmentGetApi(APIView):
    @extend_schema(
        operation_id="get_fragment_variant",
        summary="One variant of a fragment: its newest version and flags",
        description=(
            "The variant is exactly the one ?provider=&model= names (no fallback). A "
            'deleted variant answers 200 with "deleted": true; PUT restores it.'
        ),
        parameters=[NAME, *VARIANT, ETAG],
        responses={200: ls.VariantDetailOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str) -> Response:
        checked, key = fragment_name(name), variant_key(request)
        state = library.variant_current(checked, key.provider, key.model)
        if state is None:
            raise FragmentNotFound(checked, key.provider, key.model)
        users = fragment_users(checked) if request.user.has_perm(TEMPLATE_EDIT_PERMISSION) else None
        data = {
            **ls.VariantOutputSerializer(state).data,
            "used_by": None if users is None else users.names,
            "used_by_truncated": False if users is None else users.truncated,
        }
        shown = ls.VariantDetailOutputSerializer(data).data
        return Response(shown, headers={"ETag": state.etag})


class FragmentSaveApi(APIView):
    permission_classes = [IsAuthenticated, CanEditLibrary]

    @extend_schema(
        operation_id="save_fragment_variant",
        summary="Save a new version of a variant (creating it, or restoring a deleted one)",
        description=(
            "201 when the variant had no version yet, 200 otherwise. A setting left out "
            "keeps the current version's (the default for a new variant)."
        ),
        parameters=[NAME, *VARIANT, IF_MATCH, ETAG],
        request=ls.VariantInputSerializer,
        responses={
            200: ls.VariantOutputSerializer,
            201: ls.VariantOutputSerializer,
            **error_responses(400, 412, 413, 415),
        },
    )
    def put(self, request: Request, name: str) -> Response:
        checked, key = fragment_name(name), variant_key(request)
        body = ls.VariantInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        if_match = if_match_tags(request, _reload_from(checked, key))
        settings = variant_settings(body.validated_data, checked, key)
        state = library_services.variant_save(
            name=checked,
            provider=key.provider,
            model=key.model,
            text=body.validated_data["text"],
            author=request.user,
            if_match=if_match,
            **settings,
        )
        return variant_response(
            state, status.HTTP_201_CREATED if state.version == 1 else status.HTTP_200_OK
        )


def variant_settings(given: dict[str, Any], name: str, key: VariantKey) -> dict[str, Any]:
    """compress, defaults and strategy: as given, else the current version's."""
    wanted = ("compress", "defaults", "strategy")
    if all(setting in given for setting in wanted):
        return {setting: given[setting] for setting in wanted}
    current = library.variant_current(name, key.provider, key.model)
    kept: dict[str, Any] = (
        {"compress": False, "defaults": {}, "strategy": "append"}
        if current is None
        else {
            "compress": current.compress,
            "defaults": dict(current.defaults),
            "strategy": current.strategy,
        }
    )
    return {setting: given.get(setting, kept[setting]) for setting in wanted}


class FragmentDeleteApi(APIView):
    permission_classes = [IsAuthenticated, CanEditLibrary]

    @extend_schema(
        operation_id="delete_fragment_variant",
        summary="Delete a variant: a new version marked deleted (PUT restores it)",
        description="Answers the variant's state, now deleted; its text is kept.",
        parameters=[NAME, *VARIANT, IF_MATCH, ETAG],
        responses={200: ls.VariantOutputSerializer, **error_responses(400, 404, 412)},
    )
    def delete(self, request: Request, name: str) -> Response:
        checked, key = fragment_name(name), variant_key(request)
        state = library_services.variant_delete(
            name=checked,
            provider=key.provider,
            model=key.model,
            author=request.user,
            if_match=if_match_tags(request, _reload_from(checked, key)),
        )
        return variant_response(state)


class FragmentVersionsApi(APIView):
    pagination_class = VersionPagination  # used by page_response; the schema names the page

    @extend_schema(
        operation_id="list_fragment_versions",
        summary="Every version of a variant, newest first (deleting ones included)",
        parameters=[NAME, *VARIANT, *page_parameters(VersionPagination.max_page_size)],
        responses={200: ls.FragmentVersionPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str) -> Response:
        checked, key = fragment_name(name), variant_key(request)
        versions = library.variant_versions(checked, key.provider, key.model)
        if not versions.exists():
            raise FragmentNotFound(checked, key.provider, key.model)
        return page_response(
            self, request, versions.select_related("author"), ls.FragmentVersionOutputSerializer
        )


class LibraryPreviewApi(APIView):
    @extend_schema(
        operation_id="preview_library",
        summary="Render a fragment (or a template) for a context; stores nothing",
        description=(
            "Like the template preview, plus which variant and version of each fragment "
            "was used and, when compress is on, the characters and tokens "
            "before and after compression."
        ),
        request=ls.LibraryPreviewInputSerializer,
        responses={200: ls.LibraryPreviewOutputSerializer, **error_responses(400, 413, 415)},
    )
    def post(self, request: Request) -> Response:
        body = ls.LibraryPreviewInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        host = host_context(data)
        if "fragment" in data:
            fragment_name_valid(data["fragment"], "fragment")
        preview = rendering.template_preview(
            cwd=data["cwd"],
            model=data["model"],
            conversation_id=data.get("conversation_id"),
            template=data.get("template"),
            compress_template=data["compress"],
            fragment=data.get("fragment"),
            host=host,
        )
        compression = preview.compression
        shown = {
            **preview_data(preview),
            "fragments_used": [use.as_dict() for use in preview.rendered.fragments_used],
            "compression": None
            if compression is None
            else {
                "chars_before": compression.chars_before,
                "chars_after": compression.chars_after,
                "tokens_before": compression.tokens_before,
                "tokens_after": compression.tokens_after,
                "tokens_exact": compression.tokens_exact,
                "tokens_error": compression.tokens_error,
            },
        }
        return Response(ls.LibraryPreviewOutputSerializer(shown).data)


class FragmentImpactApi(APIView):
    permission_classes = [IsAuthenticated, IsReleaseAuthor]

    @extend_schema(
        operation_id="fragment_impact",
        summary="What a change of a fragment's text would do, in every prompt that uses it",
        description=(
            "For every prompt whose working copy or served releases include the fragment "
            "(directly or through other fragments), for each of its labels that serves "
            "something including it: the label's recent conversations' contexts (the 200 "
            "most frequent in the window) and the prompt's test contexts, rendered as the "
            "label serves them now and with the variant holding the text — the rows of "
            "the release impact report. Says which prompts and labels it covered. Stores "
            "nothing. A path ending in /impact is always this report (the fragment "
            "x/impact is /fragments/x/impact/-)."
        ),
        parameters=[NAME],
        request=rs.FragmentImpactInputSerializer,
        responses={200: rs.FragmentImpactOutputSerializer, **error_responses(400, 404, 415)},
    )
    def post(self, request: Request, name: str) -> Response:
        checked = fragment_name(name)
        body = rs.FragmentImpactInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        report = fragment_impact(
            name=checked,
            text=data["text"],
            provider=data.get("provider") or None,
            model=data.get("model") or None,
            window_days=data.get("window_days"),
        )
        return Response(rs.FragmentImpactOutputSerializer(_fragment_impact_data(report)).data)


def _fragment_impact_data(report: FragmentImpact) -> dict[str, Any]:
    return {
        "fragment": report.fragment,
        "provider": report.key.provider,
        "model": report.key.model,
        "window_days": report.window_days,
        "since": report.since,
        "note": report.note,
        "truncated": report.truncated,
        "summary": summary_data(report.summary),
        "prompts": [
            {
                "prompt": part.prompt,
                "working_copy": part.working_copy,
                "releases": list(part.releases),
                "labels": [
                    {
                        "label": label.label,
                        "current": label.current.as_json(),
                        "follows_latest": label.follows_latest,
                        "summary": summary_data(label.summary),
                        "contexts": [row_data(row) for row in label.rows],
                    }
                    for label in part.labels
                ],
            }
            for part in report.prompts
        ],
    }
