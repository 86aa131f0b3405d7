"""Editor URLs: pages, and the htmx partials and JSON the editor page fetches.

The root template and each variant have the same History endpoints, made by
:func:`_history_routes` under their own prefix. The Library's own pages sit under
``library/-/`` and a variant's endpoints under ``library/<name>/-/``: ``-`` cannot
start a fragment name's segment, so no name ever collides with them.
"""

from __future__ import annotations

from django.urls import URLPattern, path, register_converter
from django.views import View

from sysprompt.editor import evaluations, events, hosts, library, prompts, releases, transfer, views

app_name = "editor"


class PromptNameConverter:
    """A prompt's name in ``/editor/p/<name>/-/…``: segments that do not start with
    ``-`` (so ``/-/`` ends the name); the view answers 404 for an unknown one."""

    regex = "[^/-][^/]*(?:/[^/-][^/]*)*"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(PromptNameConverter, "editor_prompt_name")
PROMPT = "editor/p/<editor_prompt_name:prompt>/-/"


def _history_routes(
    prefix: str,
    name_prefix: str,
    history: type[View],
    compare: type[View],
    text: type[View],
    diff: type[View],
    versions_diff: type[View],
) -> list[URLPattern]:
    """The History tab's endpoints under ``prefix`` (the root template's ``editor/``, a
    variant's ``library/<name>/-/``), named ``name_prefix`` + ``history``, ``version``,
    ``version-diff``, ``versions-diff`` and ``versions-compare``."""
    return [
        path(f"{prefix}history", history.as_view(), name=f"{name_prefix}history"),
        path(
            f"{prefix}history/compare",
            compare.as_view(),
            name=f"{name_prefix}versions-compare",
        ),
        path(f"{prefix}history/<int:number>.json", text.as_view(), name=f"{name_prefix}version"),
        path(
            f"{prefix}history/<int:number>/diff",
            diff.as_view(),
            name=f"{name_prefix}version-diff",
        ),
        path(
            f"{prefix}history/<int:old>/diff/<int:new>",
            versions_diff.as_view(),
            name=f"{name_prefix}versions-diff",
        ),
    ]


urlpatterns = [
    path("", views.EditorPageView.as_view(), name="index"),
    path("editor/", views.EditorPageView.as_view(open_editor=True), name="editor"),
    path("editor/preview", views.PreviewView.as_view(), name="preview"),
    path("editor/save", views.SaveView.as_view(), name="save"),
    *_history_routes(
        "editor/",
        "",
        views.HistoryView,
        views.VersionsCompareView,
        views.VersionTextView,
        views.VersionDiffView,
        views.VersionsDiffView,
    ),
    # --- one prompt's pages: /editor/p/<name>/-/… (the same views, that prompt's data) ---
    path(PROMPT, views.EditorPageView.as_view(), name="prompt-index"),
    path(f"{PROMPT}editor", views.EditorPageView.as_view(open_editor=True), name="prompt-editor"),
    path(f"{PROMPT}save", views.SaveView.as_view(), name="prompt-save"),
    *_history_routes(
        PROMPT,
        "prompt-",
        views.HistoryView,
        views.VersionsCompareView,
        views.VersionTextView,
        views.VersionDiffView,
        views.VersionsDiffView,
    ),
    # --- the Prompts page (sysprompt/editor/prompts.py) ---
    path("prompts/", prompts.PromptsPageView.as_view(), name="prompts"),
    path("prompts/-/new", prompts.PromptNewView.as_view(), name="prompts-new"),
    path("prompts/-/rename", prompts.PromptRenameView.as_view(), name="prompts-rename"),
    path("prompts/-/duplicate", prompts.PromptDuplicateView.as_view(), name="prompts-duplicate"),
    path("prompts/-/archive", prompts.PromptArchiveView.as_view(), name="prompts-archive"),
    path("prompts/-/actions", prompts.PromptActionsView.as_view(), name="prompts-actions"),
    path("prompts/-/switch", prompts.PromptSwitchView.as_view(), name="prompts-switch"),
    path("editor/files", views.FileSuggestView.as_view(), name="files"),
    path("editor/cwd", views.CwdRememberView.as_view(), name="cwd"),
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
    *_history_routes(
        "library/<path:name>/-/",
        "library-",
        library.VariantHistoryView,
        library.VariantVersionsCompareView,
        library.VariantVersionTextView,
        library.VariantVersionDiffView,
        library.VariantVersionsDiffView,
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
        "agent-hosts/<str:name>/label",
        hosts.AgentHostLabelView.as_view(),
        name="agent-host-label",
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
    # --- the Releases page (sysprompt/editor/releases.py) ---
    path("releases/", releases.ReleasesPageView.as_view(), name="releases"),
    path("releases/create", releases.ReleaseCreateView.as_view(), name="releases-create"),
    path("releases/compare", releases.ReleaseCompareView.as_view(), name="releases-compare"),
    path("releases/publish", releases.PublishView.as_view(), name="releases-publish"),
    path("releases/publish/evaluate", releases.GateRunView.as_view(), name="releases-gate-run"),
    path("releases/labels/", releases.LabelSetView.as_view(), name="releases-label-set"),
    path("releases/labels/<str:name>/", releases.LabelView.as_view(), name="releases-label"),
    path(
        "releases/labels/<str:name>/gate",
        releases.LabelGateView.as_view(),
        name="releases-label-gate",
    ),
    path(
        "releases/labels/<str:name>/rollback",
        releases.LabelRollbackView.as_view(),
        name="releases-label-rollback",
    ),
    path(
        "releases/test-contexts/",
        releases.TestContextNewView.as_view(),
        name="releases-test-context-new",
    ),
    path(
        "releases/test-contexts/<str:name>/",
        releases.TestContextEditView.as_view(),
        name="releases-test-context",
    ),
    path(
        "releases/test-contexts/<str:name>/delete",
        releases.TestContextDeleteView.as_view(),
        name="releases-test-context-delete",
    ),
    # --- end of the Releases page ---
    # --- the Evaluations page (sysprompt/editor/evaluations.py) ---
    path("evaluations/", evaluations.EvaluationsPageView.as_view(), name="evaluations"),
    path(
        "evaluations/suites/<str:name>/",
        evaluations.SuiteView.as_view(),
        name="evaluations-suite",
    ),
    path(
        "evaluations/suites/<str:name>/edit",
        evaluations.SuiteEditView.as_view(),
        name="evaluations-suite-edit",
    ),
    path(
        "evaluations/suites/<str:name>/delete",
        evaluations.SuiteDeleteView.as_view(),
        name="evaluations-suite-delete",
    ),
    path(
        "evaluations/suites/<str:name>/import",
        evaluations.SuiteImportView.as_view(),
        name="evaluations-import",
    ),
    path(
        "evaluations/suites/<str:name>/export",
        evaluations.SuiteExportView.as_view(),
        name="evaluations-export",
    ),
    path(
        "evaluations/suites/<str:name>/run",
        evaluations.RunStartView.as_view(),
        name="evaluations-run-start",
    ),
    path(
        "evaluations/suites/<str:name>/plan",
        evaluations.RunPlanView.as_view(),
        name="evaluations-run-plan",
    ),
    path(
        "evaluations/suites/<str:name>/cases/new",
        evaluations.CaseNewView.as_view(),
        name="evaluations-case-new",
    ),
    path(
        "evaluations/suites/<str:name>/cases/<str:case>/",
        evaluations.CaseEditView.as_view(),
        name="evaluations-case",
    ),
    path(
        "evaluations/suites/<str:name>/cases/<str:case>/delete",
        evaluations.CaseDeleteView.as_view(),
        name="evaluations-case-delete",
    ),
    path("evaluations/runs/<int:run_id>/", evaluations.RunView.as_view(), name="evaluations-run"),
    path(
        "evaluations/runs/<int:run_id>/cancel",
        evaluations.RunCancelView.as_view(),
        name="evaluations-run-cancel",
    ),
    # --- end of the Evaluations page ---
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
