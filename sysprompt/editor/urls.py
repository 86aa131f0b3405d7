"""Editor URLs: pages, and the htmx partials and JSON the editor page fetches."""

from __future__ import annotations

from django.urls import path

from sysprompt.editor import hosts, views

app_name = "editor"

urlpatterns = [
    path("", views.EditorPageView.as_view(), name="index"),
    path("editor/", views.EditorPageView.as_view(open_editor=True), name="editor"),
    path("editor/preview", views.PreviewView.as_view(), name="preview"),
    path("editor/save", views.SaveView.as_view(), name="save"),
    path("editor/history", views.HistoryView.as_view(), name="history"),
    path("editor/history/<int:number>.json", views.VersionTextView.as_view(), name="version"),
    path("editor/history/<int:number>/diff", views.VersionDiffView.as_view(), name="version-diff"),
    path(
        "editor/history/<int:old>/diff/<int:new>",
        views.VersionsDiffView.as_view(),
        name="versions-diff",
    ),
    path("editor/history/compare", views.VersionsCompareView.as_view(), name="versions-compare"),
    path("editor/files", views.FileSuggestView.as_view(), name="files"),
    path("agent-hosts/", hosts.AgentHostListView.as_view(), name="agent-hosts"),
    path(
        "agent-hosts/<str:name>/rotate",
        hosts.AgentHostRotateView.as_view(),
        name="agent-host-rotate",
    ),
    path("conversations/", views.ConversationListView.as_view(), name="conversations"),
    path(
        "conversations/<str:conversation_id>/",
        views.ConversationDetailView.as_view(),
        name="conversation",
    ),
    path(
        "conversations/<str:conversation_id>/compaction",
        views.ConversationCompactionView.as_view(),
        name="conversation-compaction",
    ),
    path(
        "conversations/<str:conversation_id>/construct",
        views.ConversationConstructView.as_view(),
        name="conversation-construct",
    ),
    path(
        "conversations/<str:conversation_id>/forget",
        views.ConversationForgetView.as_view(),
        name="conversation-forget",
    ),
]
