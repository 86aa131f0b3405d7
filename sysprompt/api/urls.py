"""API routes, exactly the paths of ``docs/api-reference.md`` (no trailing slashes)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.urls import path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from sysprompt.api import views

app_name = "api"


class SystemPromptRoute(views.SystemPromptPutApi, views.SystemPromptGetApi):
    """GET and PUT /api/system-prompt."""


class ConversationPromptRoute(views.ConversationPromptGetApi, views.ConversationPromptDeleteApi):
    """GET and DELETE /api/conversations/{id}/system-prompt."""


class AnyConversationIdConverter:
    """Any text, even empty or with a slash: the view answers 400 for an invalid id.

    Django's ``str`` would leave ``a/b`` or an empty id to the HTML 404 page.
    """

    regex = "(?s:.*)"  # newlines included

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(AnyConversationIdConverter, "any_conversation_id")

conversation = "conversations/<any_conversation_id:conversation_id>/system-prompt"

urlpatterns = [
    path("system-prompt", SystemPromptRoute.as_view(), name="system-prompt"),
    path("system-prompt/variables", views.VariablesApi.as_view(), name="variables"),
    path("system-prompt/versions", views.VersionsApi.as_view(), name="versions"),
    path("system-prompt/preview", views.PreviewApi.as_view(), name="preview"),
    path("conversations", views.ConversationsApi.as_view(), name="conversations"),
    path(conversation, ConversationPromptRoute.as_view(), name="conversation-prompt"),
    path(f"{conversation}/resolve", views.ResolveApi.as_view(), name="resolve"),
    path(f"{conversation}/construct", views.ConstructApi.as_view(), name="construct"),
    path(f"{conversation}/compact", views.CompactApi.as_view(), name="compact"),
    path("health", views.HealthApi.as_view(), name="health"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "docs/",
        # The split view serves its init script as a file (?script), for the CSP.
        login_required(
            SpectacularSwaggerSplitView.as_view(
                url_name="api:schema", template_name="api/swagger_ui.html"
            )
        ),
        name="docs",
    ),
]
