"""Editor URLs: pages, and the htmx partials and JSON the editor page fetches.

The Library's own pages sit under ``library/-/`` and a variant's endpoints under
``library/<name>/-/``: ``-`` cannot start a fragment name's segment, so no name ever
collides with them.
"""

from __future__ import annotations

from django.urls import path

from sysprompt.editor import events, hosts, library, transfer, views

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
    path("library/", library.LibraryListView.as_view(), name="library"),
    path("library/-/new", library.LibraryNewView.as_view(), name="library-new"),
    path("library/-/transfer", transfer.TransferPageView.as_view(), name="library-transfer"),
    path("library/-/export", transfer.ExportView.as_view(), name="library-export"),
    path("library/-/import", transfer.ImportView.as_view(), name="library-import"),
    path(
        "library/-/import/apply",
        transfer.ImportApplyView.as_view(),
        name="library-import-apply",
    ),
    path(
        "library/<path:name>/-/edit",
        library.VariantPageView.as_view(open_editor=True),
        name="library-edit",
    ),
    path("library/<path:name>/-/save", library.VariantSaveView.as_view(), name="library-save"),
    path(
        "library/<path:name>/-/history",
        library.VariantHistoryView.as_view(),
        name="library-history",
    ),
    path(
        "library/<path:name>/-/history/compare",
        library.VariantVersionsCompareView.as_view(),
        name="library-versions-compare",
    ),
    path(
        "library/<path:name>/-/history/<int:number>.json",
        library.VariantVersionTextView.as_view(),
        name="library-version",
    ),
    path(
        "library/<path:name>/-/history/<int:number>/diff",
        library.VariantVersionDiffView.as_view(),
        name="library-version-diff",
    ),
    path(
        "library/<path:name>/-/history/<int:old>/diff/<int:new>",
        library.VariantVersionsDiffView.as_view(),
        name="library-versions-diff",
    ),
    path(
        "library/<path:name>/-/delete", library.VariantDeleteView.as_view(), name="library-delete"
    ),
    path(
        "library/<path:name>/-/restore",
        library.VariantRestoreView.as_view(),
        name="library-restore",
    ),
    path("library/<path:name>/-/adopt", library.VariantAdoptView.as_view(), name="library-adopt"),
    path(
        "library/<path:name>/-/keep-mine",
        library.VariantKeepMineView.as_view(),
        name="library-keep-mine",
    ),
    path("library/<path:name>", library.VariantPageView.as_view(), name="library-variant"),
    path("agent-hosts/", hosts.AgentHostListView.as_view(), name="agent-hosts"),
    path(
        "agent-hosts/<str:name>/override",
        hosts.AgentHostOverrideView.as_view(),
        name="agent-host-override",
    ),
    path(
        "agent-hosts/<str:name>/rotate",
        hosts.AgentHostRotateView.as_view(),
        name="agent-host-rotate",
    ),
    path("webhooks/", events.WebhookListView.as_view(), name="webhooks"),
    path("webhooks/<int:webhook_id>/", events.WebhookDetailView.as_view(), name="webhook"),
    path("webhooks/<int:webhook_id>/log", events.WebhookLogView.as_view(), name="webhook-log"),
    path("webhooks/<int:webhook_id>/test", events.WebhookTestView.as_view(), name="webhook-test"),
    path(
        "webhooks/<int:webhook_id>/resume",
        events.WebhookResumeView.as_view(),
        name="webhook-resume",
    ),
    path(
        "webhooks/<int:webhook_id>/delete",
        events.WebhookDeleteView.as_view(),
        name="webhook-delete",
    ),
    path("audit/", events.AuditView.as_view(), name="audit"),
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
