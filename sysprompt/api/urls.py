"""API routes, exactly the paths of ``docs/api-reference.md`` (no trailing slashes)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.urls import path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from sysprompt.api import (
    evaluation_views,
    event_views,
    host_views,
    library_views,
    prompt_views,
    release_views,
    transfer_views,
    views,
)

app_name = "api"


class SystemPromptRoute(views.SystemPromptPutApi, views.SystemPromptGetApi):
    """GET and PUT /api/system-prompt."""


class ConversationPromptRoute(views.ConversationPromptGetApi, views.ConversationPromptDeleteApi):
    """GET and DELETE /api/conversations/{id}/system-prompt."""


class AgentHostPromptsRoute(host_views.AgentHostPromptsGetApi, host_views.AgentHostPromptsSetApi):
    """GET and PUT /api/agent-hosts/{username}/prompts."""


class FragmentRoute(
    library_views.FragmentGetApi, library_views.FragmentSaveApi, library_views.FragmentDeleteApi
):
    """GET, PUT and DELETE /api/library/fragments/{name}."""


class FragmentExactRoute(FragmentRoute):
    """/api/library/fragments/{name}/- : the fragment {name}, every method of FragmentRoute.

    A path ending in ``/versions`` is always a version list (GET only), also when a
    fragment's last segment is ``versions``; ``-`` cannot start a segment of a name, so
    ``/-`` ends a name without doubt (as ``/-/`` does in the editor's URLs), and
    ``…/tools/versions/-`` is the fragment ``tools/versions``. Not in the schema: it is
    ``/fragments/{name}`` again.
    """

    schema = None


class AgentHostOverrideRoute(
    host_views.AgentHostOverrideGetApi, host_views.AgentHostOverrideSetApi
):
    """GET and PUT /api/agent-hosts/{username}/override."""


class WebhooksRoute(event_views.WebhooksListApi, event_views.WebhookCreateApi):
    """GET and POST /api/webhooks."""


class WebhookRoute(
    event_views.WebhookGetApi, event_views.WebhookUpdateApi, event_views.WebhookDeleteApi
):
    """GET, PUT and DELETE /api/webhooks/{id}."""


class ReleaseRoute(release_views.ReleaseListApi, release_views.ReleaseCreateApi):
    """GET and POST /api/releases."""


class LabelRoute(release_views.LabelGetApi, release_views.LabelSetApi):
    """GET and PUT /api/labels/{name}."""


class TestContextsRoute(release_views.TestContextListApi, release_views.TestContextCreateApi):
    """GET and POST /api/test-contexts."""

    __test__ = False


class TestContextRoute(
    release_views.TestContextGetApi,
    release_views.TestContextPutApi,
    release_views.TestContextDeleteApi,
):
    """GET, PUT and DELETE /api/test-contexts/{name}."""

    __test__ = False


class AgentHostLabelRoute(release_views.AgentHostLabelGetApi, release_views.AgentHostLabelSetApi):
    """GET and PUT /api/agent-hosts/{username}/label."""


class SuitesRoute(evaluation_views.SuiteListApi, evaluation_views.SuiteCreateApi):
    """GET and POST /api/suites."""


class SuiteRoute(
    evaluation_views.SuiteGetApi, evaluation_views.SuiteUpdateApi, evaluation_views.SuiteDeleteApi
):
    """GET, PUT and DELETE /api/suites/{name}."""


class CasesRoute(evaluation_views.CaseListApi, evaluation_views.CaseCreateApi):
    """GET and POST /api/suites/{name}/cases."""


class CaseRoute(
    evaluation_views.CaseGetApi, evaluation_views.CaseUpdateApi, evaluation_views.CaseDeleteApi
):
    """GET, PUT and DELETE /api/suites/{name}/cases/{case}."""


class EvaluationsRoute(evaluation_views.EvaluationListApi, evaluation_views.EvaluationCreateApi):
    """GET and POST /api/evaluations."""


class PromptsRoute(prompt_views.PromptListApi, prompt_views.PromptCreateApi):
    """GET and POST /api/prompts."""


class PromptRoute(
    prompt_views.PromptGetApi, prompt_views.PromptUpdateApi, prompt_views.PromptDeleteApi
):
    """GET, PATCH and DELETE /api/prompts/{prompt}."""


class FolderRoute(prompt_views.FolderGetApi, prompt_views.FolderSetApi):
    """GET and PUT /api/folders/{folder}."""


class DigitsConverter:
    """A release number in a path: digits only (the view answers 404 beyond any release;
    anything else is no route, 404 too)."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(DigitsConverter, "digits")


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
# A fragment name has slashes; any text reaches the view, which answers 400 for a bad one.
register_converter(AnyConversationIdConverter, "any_fragment_name")


class PromptNameConverter:
    """A prompt's name in ``/api/prompts/{name}/-/…``: segments that do not start with
    ``-`` (so ``/-/`` always ends the name); the view answers 400 for one that breaks the
    rule, 404 for an unknown one."""

    regex = "[^/-][^/]*(?:/[^/-][^/]*)*"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(PromptNameConverter, "prompt_name")

conversation = "conversations/<any_conversation_id:conversation_id>/system-prompt"
# An agent host's conversation: ids are scoped to the host that made them.
host_conversation = f"agent-hosts/<str:username>/{conversation}"
# A named prompt's template: the same views as /api/system-prompt…, for that prompt.
prompt_template = "prompts/<prompt_name:prompt>/-/system-prompt"
in_prompt = "prompts/<prompt_name:prompt>/-"

prompt_suites = [
    path(
        f"{in_prompt}/suites",
        SuitesRoute.as_view(),
        name="prompt-suites",
    ),
    path(
        f"{in_prompt}/suites/<str:name>",
        SuiteRoute.as_view(),
        name="prompt-suite",
    ),
    path(
        f"{in_prompt}/suites/<str:name>/cases",
        CasesRoute.as_view(),
        name="prompt-cases",
    ),
    path(
        f"{in_prompt}/suites/<str:name>/cases/<any_conversation_id:case>",
        CaseRoute.as_view(),
        name="prompt-case",
    ),
    path(
        f"{in_prompt}/suites/<str:name>/import",
        evaluation_views.CasesImportApi.as_view(),
        name="prompt-suite-import",
    ),
    path(
        f"{in_prompt}/suites/<str:name>/export",
        evaluation_views.CasesExportApi.as_view(),
        name="prompt-suite-export",
    ),
]

urlpatterns = [
    path("system-prompt", SystemPromptRoute.as_view(), name="system-prompt"),
    path("system-prompt/variables", views.VariablesApi.as_view(), name="variables"),
    path("system-prompt/versions", views.VersionsApi.as_view(), name="versions"),
    path("system-prompt/preview", views.PreviewApi.as_view(), name="preview"),
    path("system-prompt/references", views.ReferencesApi.as_view(), name="references"),
    path("conversations", views.ConversationsApi.as_view(), name="conversations"),
    path(conversation, ConversationPromptRoute.as_view(), name="conversation-prompt"),
    path(f"{conversation}/resolve", views.ResolveApi.as_view(), name="resolve"),
    path(f"{conversation}/construct", views.ConstructApi.as_view(), name="construct"),
    path(f"{conversation}/compact", views.CompactApi.as_view(), name="compact"),
    path(host_conversation, ConversationPromptRoute.as_view(), name="host-conversation-prompt"),
    path(f"{host_conversation}/resolve", views.ResolveApi.as_view(), name="host-resolve"),
    path(f"{host_conversation}/construct", views.ConstructApi.as_view(), name="host-construct"),
    path(f"{host_conversation}/compact", views.CompactApi.as_view(), name="host-compact"),
    path(
        "agent-hosts/<str:username>/prompts",
        AgentHostPromptsRoute.as_view(),
        name="agent-host-prompts",
    ),
    path(prompt_template, SystemPromptRoute.as_view(), name="prompt-system-prompt"),
    path(f"{prompt_template}/variables", views.VariablesApi.as_view(), name="prompt-variables"),
    path(f"{prompt_template}/versions", views.VersionsApi.as_view(), name="prompt-versions"),
    path(f"{prompt_template}/preview", views.PreviewApi.as_view(), name="prompt-preview"),
    path(f"{prompt_template}/references", views.ReferencesApi.as_view(), name="prompt-references"),
    path("library", library_views.LibraryListApi.as_view(), name="library"),
    path("library/preview", library_views.LibraryPreviewApi.as_view(), name="library-preview"),
    path("library/export", transfer_views.LibraryExportApi.as_view(), name="library-export"),
    path("library/import", transfer_views.LibraryImportApi.as_view(), name="library-import"),
    # "/-" ends a name (FragmentExactRoute); else "/versions" at the end is the list.
    path(
        "library/fragments/<any_fragment_name:name>/-",
        FragmentExactRoute.as_view(),
        name="fragment-exact",
    ),
    path(
        "library/fragments/<any_fragment_name:name>/impact",
        library_views.FragmentImpactApi.as_view(),
        name="fragment-impact",
    ),
    path(
        "library/fragments/<any_fragment_name:name>/versions",
        library_views.FragmentVersionsApi.as_view(),
        name="fragment-versions",
    ),
    path("library/fragments/<any_fragment_name:name>", FragmentRoute.as_view(), name="fragment"),
    path(
        "agent-hosts/<str:username>/override",
        AgentHostOverrideRoute.as_view(),
        name="agent-host-override",
    ),
    path("webhooks", WebhooksRoute.as_view(), name="webhooks"),
    path("webhooks/<int:id>", WebhookRoute.as_view(), name="webhook"),
    path(
        "webhooks/<int:id>/deliveries",
        event_views.WebhookDeliveriesApi.as_view(),
        name="webhook-deliveries",
    ),
    path("webhooks/<int:id>/test", event_views.WebhookTestApi.as_view(), name="webhook-test"),
    path("audit", event_views.AuditApi.as_view(), name="audit"),
    path(
        "agent-hosts/<str:username>/label",
        AgentHostLabelRoute.as_view(),
        name="agent-host-label",
    ),
    path("releases", ReleaseRoute.as_view(), name="releases"),
    path("releases/impact", release_views.ImpactApi.as_view(), name="release-impact"),
    path("releases/<digits:number>", release_views.ReleaseGetApi.as_view(), name="release"),
    path(
        "releases/<digits:number>/compare",
        release_views.ReleaseCompareApi.as_view(),
        name="release-compare",
    ),
    path("labels", release_views.LabelListApi.as_view(), name="labels"),
    path("labels/<str:name>", LabelRoute.as_view(), name="label"),
    path(
        "labels/<str:name>/history", release_views.LabelHistoryApi.as_view(), name="label-history"
    ),
    path(
        "labels/<str:name>/rollback",
        release_views.LabelRollbackApi.as_view(),
        name="label-rollback",
    ),
    path("test-contexts", TestContextsRoute.as_view(), name="test-contexts"),
    path("test-contexts/<str:name>", TestContextRoute.as_view(), name="test-context"),
    path("models", evaluation_views.ModelListApi.as_view(), name="models"),
    path("suites", SuitesRoute.as_view(), name="suites"),
    path("suites/<str:name>", SuiteRoute.as_view(), name="suite"),
    path("suites/<str:name>/cases", CasesRoute.as_view(), name="cases"),
    path("suites/<str:name>/cases/<any_conversation_id:case>", CaseRoute.as_view(), name="case"),
    path(
        "suites/<str:name>/import",
        evaluation_views.CasesImportApi.as_view(),
        name="suite-import",
    ),
    path(
        "suites/<str:name>/export",
        evaluation_views.CasesExportApi.as_view(),
        name="suite-export",
    ),
    *prompt_suites,
    path("evaluations", EvaluationsRoute.as_view(), name="evaluations"),
    path("evaluations/plan", evaluation_views.EvaluationPlanApi.as_view(), name="evaluation-plan"),
    path(
        "evaluations/<digits:id>",
        evaluation_views.EvaluationGetApi.as_view(),
        name="evaluation",
    ),
    path(
        "evaluations/<digits:id>/results",
        evaluation_views.EvaluationResultsApi.as_view(),
        name="evaluation-results",
    ),
    path(
        "evaluations/<digits:id>/cancel",
        evaluation_views.EvaluationCancelApi.as_view(),
        name="evaluation-cancel",
    ),
    path("prompts", PromptsRoute.as_view(), name="prompts"),
    path("prompts/<prompt_name:prompt>", PromptRoute.as_view(), name="prompt"),
    path(
        "prompts/<prompt_name:prompt>/-/rename",
        prompt_views.PromptRenameApi.as_view(),
        name="prompt-rename",
    ),
    path(
        "prompts/<prompt_name:prompt>/-/archive",
        prompt_views.PromptArchiveApi.as_view(),
        name="prompt-archive",
    ),
    path(
        "prompts/<prompt_name:prompt>/-/unarchive",
        prompt_views.PromptUnarchiveApi.as_view(),
        name="prompt-unarchive",
    ),
    path(
        "prompts/<prompt_name:prompt>/-/duplicate",
        prompt_views.PromptDuplicateApi.as_view(),
        name="prompt-duplicate",
    ),
    path("folders/<prompt_name:folder>", FolderRoute.as_view(), name="folder"),
    path("me", views.CallerApi.as_view(), name="me"),
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

# A named prompt's releases, labels and test contexts: the same views as today's routes
# (which mean default), reading the prompt from the path.
_prompt = "prompts/<prompt_name:prompt>/-/"
urlpatterns += [
    path(f"{_prompt}releases", ReleaseRoute.as_view(), name="prompt-releases"),
    path(
        f"{_prompt}releases/impact",
        release_views.ImpactApi.as_view(),
        name="prompt-release-impact",
    ),
    path(
        f"{_prompt}releases/<digits:number>",
        release_views.ReleaseGetApi.as_view(),
        name="prompt-release",
    ),
    path(
        f"{_prompt}releases/<digits:number>/compare",
        release_views.ReleaseCompareApi.as_view(),
        name="prompt-release-compare",
    ),
    path(f"{_prompt}labels", release_views.LabelListApi.as_view(), name="prompt-labels"),
    path(f"{_prompt}labels/<str:name>", LabelRoute.as_view(), name="prompt-label"),
    path(
        f"{_prompt}labels/<str:name>/history",
        release_views.LabelHistoryApi.as_view(),
        name="prompt-label-history",
    ),
    path(
        f"{_prompt}labels/<str:name>/rollback",
        release_views.LabelRollbackApi.as_view(),
        name="prompt-label-rollback",
    ),
    path(f"{_prompt}test-contexts", TestContextsRoute.as_view(), name="prompt-test-contexts"),
    path(
        f"{_prompt}test-contexts/<str:name>",
        TestContextRoute.as_view(),
        name="prompt-test-context",
    ),
]
