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
from sysprompt.editor.scoping import SCOPED_PREFIX

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


def _scoped_pages(prefix: str, name_prefix: str) -> list[URLPattern]:
    """The pages scoped to one prompt (sysprompt/editor/scoping.py): Releases (with test
    contexts), Evaluations, Agent hosts and Conversations, under ``prefix`` (today's ``""``, or
    ``editor/p/<name>/-/``) and named ``name_prefix`` + their name."""
    return [
        # --- the Releases page (sysprompt/editor/releases.py) ---
        path(
            f"{prefix}releases/", releases.ReleasesPageView.as_view(), name=f"{name_prefix}releases"
        ),
        path(
            f"{prefix}releases/create",
            releases.ReleaseCreateView.as_view(),
            name=f"{name_prefix}releases-create",
        ),
        path(
            f"{prefix}releases/compare",
            releases.ReleaseCompareView.as_view(),
            name=f"{name_prefix}releases-compare",
        ),
        path(
            f"{prefix}releases/publish",
            releases.PublishView.as_view(),
            name=f"{name_prefix}releases-publish",
        ),
        path(
            f"{prefix}releases/publish/evaluate",
            releases.GateRunView.as_view(),
            name=f"{name_prefix}releases-gate-run",
        ),
        path(
            f"{prefix}releases/labels/",
            releases.LabelSetView.as_view(),
            name=f"{name_prefix}releases-label-set",
        ),
        path(
            f"{prefix}releases/labels/<str:name>/",
            releases.LabelView.as_view(),
            name=f"{name_prefix}releases-label",
        ),
        path(
            f"{prefix}releases/labels/<str:name>/gate",
            releases.LabelGateView.as_view(),
            name=f"{name_prefix}releases-label-gate",
        ),
        path(
            f"{prefix}releases/labels/<str:name>/rollback",
            releases.LabelRollbackView.as_view(),
            name=f"{name_prefix}releases-label-rollback",
        ),
        path(
            f"{prefix}releases/test-contexts/",
            releases.TestContextNewView.as_view(),
            name=f"{name_prefix}releases-test-context-new",
        ),
        path(
            f"{prefix}releases/test-contexts/<str:name>/",
            releases.TestContextEditView.as_view(),
            name=f"{name_prefix}releases-test-context",
        ),
        path(
            f"{prefix}releases/test-contexts/<str:name>/delete",
            releases.TestContextDeleteView.as_view(),
            name=f"{name_prefix}releases-test-context-delete",
        ),
        # --- end of the Releases page ---
        # --- the Evaluations page (sysprompt/editor/evaluations.py) ---
        path(
            f"{prefix}evaluations/",
            evaluations.EvaluationsPageView.as_view(),
            name=f"{name_prefix}evaluations",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/",
            evaluations.SuiteView.as_view(),
            name=f"{name_prefix}evaluations-suite",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/edit",
            evaluations.SuiteEditView.as_view(),
            name=f"{name_prefix}evaluations-suite-edit",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/delete",
            evaluations.SuiteDeleteView.as_view(),
            name=f"{name_prefix}evaluations-suite-delete",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/import",
            evaluations.SuiteImportView.as_view(),
            name=f"{name_prefix}evaluations-import",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/export",
            evaluations.SuiteExportView.as_view(),
            name=f"{name_prefix}evaluations-export",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/run",
            evaluations.RunStartView.as_view(),
            name=f"{name_prefix}evaluations-run-start",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/plan",
            evaluations.RunPlanView.as_view(),
            name=f"{name_prefix}evaluations-run-plan",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/cases/new",
            evaluations.CaseNewView.as_view(),
            name=f"{name_prefix}evaluations-case-new",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/cases/<str:case>/",
            evaluations.CaseEditView.as_view(),
            name=f"{name_prefix}evaluations-case",
        ),
        path(
            f"{prefix}evaluations/suites/<str:name>/cases/<str:case>/delete",
            evaluations.CaseDeleteView.as_view(),
            name=f"{name_prefix}evaluations-case-delete",
        ),
        path(
            f"{prefix}evaluations/runs/<int:run_id>/",
            evaluations.RunView.as_view(),
            name=f"{name_prefix}evaluations-run",
        ),
        path(
            f"{prefix}evaluations/runs/<int:run_id>/cancel",
            evaluations.RunCancelView.as_view(),
            name=f"{name_prefix}evaluations-run-cancel",
        ),
        # --- end of the Evaluations page ---
        # --- the Agent hosts page (sysprompt/editor/hosts.py): each host's label and
        # instance override for the prompt; "New agent host" (a POST to the page) and
        # a token's rotation are today's URLs only ---
        path(
            f"{prefix}agent-hosts/",
            (hosts.AgentHostPageView if name_prefix else hosts.AgentHostListView).as_view(),
            name=f"{name_prefix}agent-hosts",
        ),
        path(
            f"{prefix}agent-hosts/<str:name>/override",
            hosts.AgentHostOverrideView.as_view(),
            name=f"{name_prefix}agent-host-override",
        ),
        path(
            f"{prefix}agent-hosts/<str:name>/label",
            hosts.AgentHostLabelView.as_view(),
            name=f"{name_prefix}agent-host-label",
        ),
        path(
            f"{prefix}agent-hosts/<str:name>/prompts",
            hosts.AgentHostPromptsView.as_view(),
            name=f"{name_prefix}agent-host-prompts",
        ),
        # --- end of the Agent hosts page ---
        path(
            f"{prefix}conversations/",
            views.ConversationListView.as_view(),
            name=f"{name_prefix}conversations",
        ),
        path(
            f"{prefix}conversations/<str:conversation_id>/",
            views.ConversationDetailView.as_view(),
            name=f"{name_prefix}conversation",
        ),
        path(
            f"{prefix}conversations/<str:conversation_id>/compaction",
            views.ConversationCompactionView.as_view(),
            name=f"{name_prefix}conversation-compaction",
        ),
        path(
            f"{prefix}conversations/<str:conversation_id>/construct",
            views.ConversationConstructView.as_view(),
            name=f"{name_prefix}conversation-construct",
        ),
        path(
            f"{prefix}conversations/<str:conversation_id>/forget",
            views.ConversationForgetView.as_view(),
            name=f"{name_prefix}conversation-forget",
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
    path("prompts/-/restrict", prompts.PromptRestrictView.as_view(), name="prompts-restrict"),
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
    # Creating a host and rotating its token are deployment-wide: today's URLs only.
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
    *_scoped_pages("", ""),
    *_scoped_pages(PROMPT, SCOPED_PREFIX),
]
