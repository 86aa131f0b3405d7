"""Authentication and permissions the API adds to DRF's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.authentication import TokenAuthentication
from rest_framework.permissions import SAFE_METHODS, BasePermission

from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt.releases.permissions import PUBLISH_PERMISSION

if TYPE_CHECKING:  # DRF imports the authentication classes while rest_framework.views loads
    from django.contrib.auth.models import AnonymousUser, PermissionsMixin
    from rest_framework.request import Request
    from rest_framework.views import APIView


class BearerTokenAuthentication(TokenAuthentication):
    """The same API tokens, sent as ``Authorization: Bearer <key>``."""

    keyword = "Bearer"


class CanEditTemplate(BasePermission):
    """Reads for every user; writes only for prompt authors (the change permission)."""

    message = (
        "Changing the template needs the 'Can change template version' permission "
        f"({TEMPLATE_EDIT_PERMISSION}); this user may read the template and resolve prompts."
    )

    def has_permission(self, request: Request, view: APIView) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return bool(request.user and request.user.has_perm(TEMPLATE_EDIT_PERMISSION))


class CanEditLibrary(CanEditTemplate):
    """Reads for every user; changing the library (fragments, import) needs the
    template's change permission, as a fragment is part of every prompt it reaches."""

    message = (
        "Changing the prompt library needs the 'Can change template version' permission "
        f"({TEMPLATE_EDIT_PERMISSION}); this user may read the library and preview."
    )


class IsPromptAuthor(BasePermission):
    """Only prompt authors (the template's change permission), for reads too."""

    message = (
        "An agent host's override is for prompt authors: it needs the 'Can change "
        f"template version' permission ({TEMPLATE_EDIT_PERMISSION})."
    )

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.has_perm(TEMPLATE_EDIT_PERMISSION))


class CanExportLibrary(BasePermission):
    """Exporting the library (every variant, in one archive) is for prompt authors: the
    permission that writes the library, although it is a read."""

    message = (
        "Exporting the prompt library needs the 'Can change template version' permission "
        f"({TEMPLATE_EDIT_PERMISSION}), as importing it does; this user may read the "
        "library's fragments one at a time."
    )

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.has_perm(TEMPLATE_EDIT_PERMISSION))


class IsReleaseAuthor(IsPromptAuthor):
    """Releases, labels, test contexts and impact: prompt authors only, reads too (agent
    hosts get their label's prompt, never the machinery). Moving a protected label
    needs more (``releases.publish_release``), which the service checks."""

    message = (
        "Releases and labels are for prompt authors: they need the 'Can change template "
        f"version' permission ({TEMPLATE_EDIT_PERMISSION})."
    )


class IsEvaluationAuthor(IsPromptAuthor):
    """Evaluations (models, suites, cases, runs): prompt authors only, reads too; agent
    hosts get 403 on all of it."""

    message = (
        "Evaluations are for prompt authors: they need the 'Can change template "
        f"version' permission ({TEMPLATE_EDIT_PERMISSION})."
    )


CALLER_PERMISSIONS = ("template", "library", "releases", "publish", "evaluations")
"""What ``GET /api/me`` says a caller may do, beyond reading prompts and the library."""


def caller_permissions(user: PermissionsMixin | AnonymousUser) -> dict[str, bool]:
    """Which of :data:`CALLER_PERMISSIONS` ``user`` has, by the rules of the classes
    above: ``template`` (:class:`CanEditTemplate`'s writes), ``library``
    (:class:`CanEditLibrary`'s writes, export and import), ``releases``
    (:class:`IsReleaseAuthor`: releases, labels, test contexts, impact, reads too),
    ``publish`` (moving a protected label too), ``evaluations``
    (:class:`IsEvaluationAuthor`)."""
    author = bool(user.has_perm(TEMPLATE_EDIT_PERMISSION))
    return {
        "template": author,
        "library": author,
        "releases": author,
        "publish": author and bool(user.has_perm(PUBLISH_PERMISSION)),
        "evaluations": author,
    }
