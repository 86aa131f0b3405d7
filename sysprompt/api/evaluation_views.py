"""The evaluations views (evaluations §5): models, suites, cases (JSONL import and export,
a case from a recorded conversation), runs (their plan before they start, held to the
limits of ``evaluations.planning``), their results and cancelling. One class per
operation; ``urls.py`` combines the classes that share a path.

request → the path's names, the body (input serializer) → a selector or a service of
``sysprompt.evaluations`` (which checks every field and names it in its 400) → output.
Prompt authors only (``IsEvaluationAuthor``): agent hosts get 403 on every one of them.
A run is only queued here (its task on the evaluations' queue); a worker
(``manage.py evaluations_worker``) does it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import evaluation_serializers as es
from sysprompt.api.auth import IsEvaluationAuthor
from sysprompt.api.common import error_responses, page_parameters, page_response, route_prompt
from sysprompt.api.pagination import (
    CasePagination,
    EvaluationPagination,
    EvaluationResultPagination,
    NamePagination,
)
from sysprompt.api.parsers import (
    JSONL,
    OCTET_STREAM,
    LimitedJsonLinesOctetParser,
    LimitedJsonLinesParser,
)
from sysprompt.api.transfer_views import JsonFirstNegotiation
from sysprompt.conf import app_settings
from sysprompt.errors import EvaluationNotFound, InvalidInput, RunRefused
from sysprompt.evaluations import planning, results, selectors, services
from sysprompt.evaluations.validation import suite_name_valid
from sysprompt.prompts.catalog import prompt_get
from sysprompt.prompts.validation import conversation_id_check
from sysprompt_core.prompt_names import PROMPT_NAME_MAX_LENGTH
from sysprompt_core.releases import LABEL_NAME_PATTERN

if TYPE_CHECKING:
    from sysprompt.prompts.models import ConversationPrompt, Prompt

SUITE = OpenApiParameter(
    "name",
    {"type": "string", "pattern": f"^{LABEL_NAME_PATTERN}$"},
    OpenApiParameter.PATH,
    description="The suite's name.",
)
CASE = OpenApiParameter(
    "case", OpenApiTypes.STR, OpenApiParameter.PATH, description="The case's name."
)
RUN_ID = OpenApiParameter(
    "id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="The run's id."
)
DELETED = OpenApiResponse(description="Deleted; no body.")


class _Authors(APIView):
    permission_classes = [IsAuthenticated, IsEvaluationAuthor]

    def prompt(self) -> Prompt:
        """The route's prompt (``/api/prompts/{prompt}/-/suites…``; ``default`` on
        ``/api/suites…``)."""
        return route_prompt(self)

    def editable_prompt(self, request: Request, action: str) -> Prompt:
        """The route's prompt, when ``request``'s user may change it (after the view's
        permission, before the body is read): a prompt restricted to groups the user is in
        none of is a 403, audited as ``prompt.refused``."""
        prompt = self.prompt()
        services.editors_check(request.user, prompt, action=action)
        return prompt


def _suite(name: str) -> str:
    return suite_name_valid(name)


def _case(name: str) -> str:
    """The path's case name, checked as a conversation id is (400 naming ``case``)."""
    try:
        return conversation_id_check(name)
    except InvalidInput as error:
        raise InvalidInput("case", error.message) from None


def _run_id(text: str) -> int:
    """The path's run id (digits only, by the route): 404 beyond any run."""
    number = int(text) if len(text) <= 10 else 0
    if not 1 <= number <= 2_147_483_647:
        raise EvaluationNotFound(number)
    return number


# --- models ---------------------------------------------------------------------------------


class ModelListApi(_Authors):
    @extend_schema(
        operation_id="list_models",
        summary="The configured model endpoints (never a key or a credential)",
        responses={200: es.ModelListOutputSerializer, **error_responses()},
    )
    def get(self, request: Request) -> Response:
        conf = app_settings()
        rows = [
            {
                "name": endpoint.name,
                "kind": endpoint.kind,
                "model": endpoint.model,
                "max_concurrency": endpoint.max_concurrency,
                "default": endpoint.name == conf.eval_default_model,
            }
            for endpoint in conf.models.values()
        ]
        return Response(es.ModelListOutputSerializer({"results": rows}).data)


# --- suites ---------------------------------------------------------------------------------


class SuiteListApi(_Authors):
    pagination_class = NamePagination

    @extend_schema(
        operation_id="list_suites",
        summary="Every suite, by name",
        parameters=page_parameters(NamePagination.max_page_size),
        responses={200: es.SuitePageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, **route: str) -> Response:
        rows = list(selectors.suites_list(prompt=self.prompt()))
        return page_response(self, request, rows, es.SuiteOutputSerializer)


class SuiteCreateApi(_Authors):
    @extend_schema(
        operation_id="create_suite",
        summary="Create a suite",
        description=(
            "201; 400 naming the field (name: the prompt has a suite of that name already); "
            "404 for an unknown prompt (/api/prompts/{prompt}/-/suites)."
        ),
        request=es.SuiteInputSerializer,
        responses={201: es.SuiteOutputSerializer, **error_responses(400, 404, 415)},
    )
    def post(self, request: Request, **route: str) -> Response:
        prompt = self.editable_prompt(request, "create suites of")
        body = es.SuiteInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        made = services.suite_create(
            name=body.validated_data["name"],
            description=body.validated_data.get("description", ""),
            author=request.user,
            prompt=prompt,
        )
        return Response(_suite_data(made.name, prompt), status=status.HTTP_201_CREATED)


def _suite_data(name: str, prompt: Prompt) -> dict[str, Any]:
    return dict(es.SuiteOutputSerializer(selectors.suite_get(name, prompt=prompt)).data)


class SuiteGetApi(_Authors):
    @extend_schema(
        operation_id="get_suite",
        summary="One suite",
        parameters=[SUITE],
        responses={200: es.SuiteOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str, **route: str) -> Response:
        return Response(_suite_data(_suite(name), self.prompt()))


class SuiteUpdateApi(_Authors):
    @extend_schema(
        operation_id="update_suite",
        summary="Change a suite's description",
        parameters=[SUITE],
        request=es.SuiteUpdateInputSerializer,
        responses={200: es.SuiteOutputSerializer, **error_responses(400, 404, 415)},
    )
    def put(self, request: Request, name: str, **route: str) -> Response:
        prompt = self.editable_prompt(request, "change suites of")
        checked = _suite(name)
        body = es.SuiteUpdateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.suite_update(
            name=checked,
            description=body.validated_data.get("description", ""),
            author=request.user,
            prompt=prompt,
        )
        return Response(_suite_data(checked, prompt))


class SuiteDeleteApi(_Authors):
    @extend_schema(
        operation_id="delete_suite",
        summary="Delete a suite and its cases (its runs stay, without it)",
        parameters=[SUITE],
        responses={204: DELETED, **error_responses(400, 404)},
    )
    def delete(self, request: Request, name: str, **route: str) -> Response:
        prompt = self.editable_prompt(request, "delete suites of")
        services.suite_delete(name=_suite(name), author=request.user, prompt=prompt)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- cases ----------------------------------------------------------------------------------


class CaseListApi(_Authors):
    pagination_class = CasePagination

    @extend_schema(
        operation_id="list_cases",
        summary="A suite's cases, in the order they were added",
        parameters=[SUITE, *page_parameters(CasePagination.max_page_size)],
        responses={200: es.CasePageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str, **route: str) -> Response:
        rows = selectors.cases_list(selectors.suite_get(_suite(name), prompt=self.prompt()))
        return page_response(self, request, rows, _CaseRowSerializer)


class _CaseRowSerializer(es.CaseOutputSerializer):
    def to_representation(self, instance: Any) -> Any:
        return super().to_representation(services.case_json(instance))


class CaseCreateApi(_Authors):
    @extend_schema(
        operation_id="create_case",
        summary="Add a case to a suite (or make one from a recorded conversation)",
        description=(
            "201 with the case; 400 naming the field (checks[1].pattern, messages[0].role, "
            "context.test_context, name when the suite has it already). With "
            "from_conversation, the conversation's context (label, cwd, provider, model, "
            "tools, variables, thread override) is copied from what the server stored, and "
            "messages and values are this request's; 404 when the caller may not see it."
        ),
        parameters=[SUITE],
        request=es.CaseInputSerializer,
        responses={201: es.CaseOutputSerializer, **error_responses(400, 404, 415)},
    )
    def post(self, request: Request, name: str, **route: str) -> Response:
        prompt = self.editable_prompt(request, "change suites of")
        suite = _suite(name)
        body = es.CaseInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        fields = dict(body.validated_data)
        conversation = fields.pop("from_conversation", None)
        values = fields.pop("values", None)
        if conversation is not None:
            if "context" in fields:
                raise InvalidInput("context", "give context or from_conversation, not both")
            stored = selectors.case_conversation(conversation, user=request.user, prompt=prompt)
            fields["context"] = _conversation_context(stored, values)
            fields.setdefault("name", stored.conversation_id)
        elif values is not None:
            raise InvalidInput("values", "values go with from_conversation (else in context)")
        case = services.case_create(suite=suite, fields=fields, author=request.user, prompt=prompt)
        return Response(services.case_json(case), status=status.HTTP_201_CREATED)


def _conversation_context(stored: ConversationPrompt, values: Any) -> dict[str, Any]:
    """The context of a recorded conversation, as a case keeps it."""
    context: dict[str, Any] = {"cwd": stored.cwd, "label": stored.label}
    for field in ("provider", "model", "tools", "variables"):
        if getattr(stored, field):
            context[field] = getattr(stored, field)
    if stored.override is not None:
        context["override"] = stored.override
    if values:
        context["values"] = values
    return context


def _case_data(suite: str, case: str, prompt: Prompt) -> dict[str, Any]:
    return services.case_json(selectors.case_get(selectors.suite_get(suite, prompt=prompt), case))


class CaseGetApi(_Authors):
    @extend_schema(
        operation_id="get_case",
        summary="One case of a suite",
        parameters=[SUITE, CASE],
        responses={200: es.CaseOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str, case: str, **route: str) -> Response:
        return Response(_case_data(_suite(name), _case(case), self.prompt()))


class CaseUpdateApi(_Authors):
    @extend_schema(
        operation_id="update_case",
        summary="Replace a case (a name in the body renames it)",
        parameters=[SUITE, CASE],
        request=es.CaseUpdateInputSerializer,
        responses={200: es.CaseOutputSerializer, **error_responses(400, 404, 415)},
    )
    def put(self, request: Request, name: str, case: str, **route: str) -> Response:
        prompt = self.editable_prompt(request, "change suites of")
        suite = _suite(name)
        body = es.CaseUpdateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        saved = services.case_save(
            suite=suite,
            name=_case(case),
            fields=dict(body.validated_data),
            author=request.user,
            prompt=prompt,
        )
        return Response(services.case_json(saved))


class CaseDeleteApi(_Authors):
    @extend_schema(
        operation_id="delete_case",
        summary="Delete a case",
        parameters=[SUITE, CASE],
        responses={204: DELETED, **error_responses(400, 404)},
    )
    def delete(self, request: Request, name: str, case: str, **route: str) -> Response:
        prompt = self.editable_prompt(request, "change suites of")
        services.case_delete(
            suite=_suite(name), name=_case(case), author=request.user, prompt=prompt
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- JSONL ----------------------------------------------------------------------------------


class CasesExportApi(_Authors):
    content_negotiation_class = JsonFirstNegotiation

    @extend_schema(
        operation_id="export_cases",
        summary="A suite's cases as JSONL (one case a line, the API's fields)",
        parameters=[SUITE],
        responses={
            (200, JSONL): OpenApiResponse(OpenApiTypes.BINARY, description="The cases."),
            (200, OCTET_STREAM): OpenApiResponse(OpenApiTypes.BINARY, description="The cases."),
            **error_responses(400, 404),
        },
    )
    def get(self, request: Request, name: str, **route: str) -> HttpResponse:
        suite = selectors.suite_get(_suite(name), prompt=self.prompt())
        lines = (services.case_jsonl(case) for case in selectors.cases_list(suite).iterator())
        named = {
            p.split(";")[0].strip().lower() for p in request.headers.get("Accept", "").split(",")
        }
        media = OCTET_STREAM if OCTET_STREAM in named and JSONL not in named else JSONL
        return HttpResponse(
            "".join(lines).encode(),
            content_type=media,
            headers={"Content-Disposition": f'attachment; filename="{suite.name}.jsonl"'},
        )


class CasesImportApi(_Authors):
    parser_classes = [LimitedJsonLinesParser, LimitedJsonLinesOctetParser]

    @extend_schema(
        operation_id="import_cases",
        summary="Add or replace a suite's cases from JSONL (one case a line)",
        description=(
            "The body is the JSONL text (application/x-ndjson, or application/octet-stream). "
            "A case of the same name is replaced. All or nothing: when any line is bad, "
            'nothing is stored and the 400 names each bad line: {"line 3": ["checks[0].type: '
            '…"]}.'
        ),
        parameters=[SUITE],
        request={OCTET_STREAM: OpenApiTypes.BINARY},
        responses={200: es.CasesImportedOutputSerializer, **error_responses(400, 404, 413, 415)},
    )
    def post(self, request: Request, name: str, **route: str) -> Response:
        prompt = self.editable_prompt(request, "change suites of")
        suite = _suite(name)
        media = request.content_type.split(";")[0].strip().lower()
        if media not in (JSONL, OCTET_STREAM):
            raise UnsupportedMediaType(request.content_type or "none")
        data = request.data
        if not isinstance(data, bytes):
            raise ParseError("Send the JSONL text itself as the body.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidInput("body", f"not UTF-8 (byte {error.start})") from None
        count = services.cases_import(suite=suite, text=text, author=request.user, prompt=prompt)
        return Response(es.CasesImportedOutputSerializer({"imported": count}).data)


# --- runs -----------------------------------------------------------------------------------


class _RunRowSerializer(es.EvaluationOutputSerializer):
    def to_representation(self, instance: Any) -> Any:
        return super().to_representation(results.run_json(instance))


class EvaluationListApi(_Authors):
    pagination_class = EvaluationPagination

    @extend_schema(
        operation_id="list_evaluations",
        summary="Every run, newest first (of one prompt with ?prompt=)",
        parameters=[
            OpenApiParameter(
                "prompt",
                {"type": "string", "maxLength": PROMPT_NAME_MAX_LENGTH},
                description="Only this prompt's runs (a prompt's name; 404 for an unknown "
                "one). Left out: every prompt's.",
            ),
            *page_parameters(EvaluationPagination.max_page_size),
        ],
        responses={200: es.EvaluationPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        name = request.query_params.get("prompt")
        prompt = None if name is None else prompt_get(name, field="prompt")
        runs = selectors.runs_list(prompt=prompt)
        return page_response(self, request, runs, _RunRowSerializer)


def _run_fields(request: Request) -> dict[str, Any]:
    """The body of a run's start or plan, its shape checked (the service checks the rest)."""
    body = es.EvaluationInputSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    given = body.validated_data
    return {
        "prompt": given.get("prompt"),
        "suite": given["suite"],
        "candidate": given["candidate"],
        "baseline": given.get("baseline"),
        "model": given.get("model"),
        "baseline_model": given.get("baseline_model"),
        "candidate_model": given.get("candidate_model"),
        "repeat": given.get("repeat"),
        "fresh": given.get("fresh", False),
    }


class EvaluationCreateApi(_Authors):
    @extend_schema(
        operation_id="start_evaluation",
        summary="Start a run: a candidate against a baseline on a suite",
        description=(
            "202 with the queued run's id, the models each side is answered by (default_model: "
            "a side named none and got EVAL_DEFAULT_MODEL's) and its plan: the most calls it "
            "may make and what they may cost; a worker does it (GET /api/evaluations/{id} "
            "shows its progress). 400 naming the field (a release or label that does not "
            "exist in the prompt; calls: more calls than EVAL_MAX_CALLS_PER_RUN allows); 404 "
            "for an unknown prompt or suite; 429 when you have EVAL_MAX_RUNS_PER_USER runs "
            "going, or the day's EVAL_DAILY_BUDGET would be passed (Retry-After: when the "
            "day ends). "
            "POST /api/evaluations/plan tells all this without starting it."
        ),
        request=es.EvaluationInputSerializer,
        responses={
            202: es.EvaluationStartedOutputSerializer,
            **error_responses(400, 404, 415, 429),
        },
    )
    def post(self, request: Request) -> Response:
        run = services.run_create(**_run_fields(request), author=request.user)
        answer = {
            "id": run.pk,
            "prompt": run.prompt.name,
            "status": run.status,
            "baseline_model": run.baseline_model,
            "candidate_model": run.candidate_model,
            "default_model": run.default_model,
            "planned_calls": run.planned_calls,
            "planned_cost": run.planned_cost,
        }
        return Response(
            es.EvaluationStartedOutputSerializer(answer).data, status=status.HTTP_202_ACCEPTED
        )


class EvaluationPlanApi(_Authors):
    @extend_schema(
        operation_id="plan_evaluation",
        summary="A run's plan, without starting it: its calls, its cost, the limits",
        description=(
            "The body of POST /api/evaluations. 200 with the most model calls the run may "
            "make (2 sides × repeat × (1 + judge checks) per case; fewer are made where "
            "both prompts are the same or the response cache answers), what they may cost "
            "(answers at max_tokens, inputs estimated; null when a model has no prices), "
            "the limits and where you stand, and whether POST would start it now (refused: "
            "why not, refused_status: 400 or 429). 400 naming a bad field, 404 for an "
            "unknown suite, as POST."
        ),
        request=es.EvaluationInputSerializer,
        responses={200: es.EvaluationPlanOutputSerializer, **error_responses(400, 404, 415)},
    )
    def post(self, request: Request) -> Response:
        plan = planning.run_plan(planning.run_request_valid(**_run_fields(request)))
        limits = planning.limits_now(request.user)
        refusal = planning.plan_refusal(plan, limits)
        return Response(es.EvaluationPlanOutputSerializer(plan_json(plan, limits, refusal)).data)


def plan_json(
    plan: planning.RunPlan,
    limits: planning.Limits,
    refusal: InvalidInput | RunRefused | None,
) -> dict[str, Any]:
    """A plan as ``POST /api/evaluations/plan`` answers it."""
    request = plan.request
    return {
        "prompt": request.prompt.name,
        "suite": request.suite.name,
        "cases": plan.cases,
        "repeat": request.repeat,
        "baseline_model": request.baseline_model,
        "candidate_model": request.candidate_model,
        "default_model": request.default_model,
        "calls": plan.calls,
        "judge_calls": plan.judge_calls,
        "cost": plan.cost,
        "unpriced": list(plan.unpriced),
        "limits": {
            "max_calls_per_run": limits.max_calls,
            "max_runs_per_user": limits.max_runs,
            "runs_going": list(limits.runs_going),
            "daily_budget": limits.budget,
            "spent_today": round(limits.spent_today, 6),
            "reserved": limits.reserved,
        },
        "allowed": refusal is None,
        "refused": None if refusal is None else _said(refusal),
        "refused_status": None
        if refusal is None
        else (400 if isinstance(refusal, InvalidInput) else 429),
    }


def _said(error: InvalidInput | RunRefused) -> str:
    return error.message if isinstance(error, InvalidInput) else str(error)


class EvaluationGetApi(_Authors):
    @extend_schema(
        operation_id="get_evaluation",
        summary="One run: its status, progress and (once finished) summary",
        parameters=[RUN_ID],
        responses={200: es.EvaluationOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, id: str) -> Response:
        run = selectors.run_get(_run_id(id))
        return Response(es.EvaluationOutputSerializer(results.run_json(run)).data)


class _CaseResultRowSerializer(es.CaseResultOutputSerializer):
    def to_representation(self, instance: Any) -> Any:
        return super().to_representation(results.case_result(instance))


class EvaluationResultsApi(_Authors):
    pagination_class = EvaluationResultPagination

    @extend_schema(
        operation_id="get_evaluation_results",
        summary="A run's results per case: regressions first, then errors, fixes, the rest",
        description=(
            "Per case and side: each repetition's answer and tool calls, every check's "
            "result, the pass rate, tokens, mean latency and the first error. A call made "
            "once for both sides (the prompts were the same) counts for both. Paged like "
            "every list: follow next until it is null."
        ),
        parameters=[RUN_ID, *page_parameters(EvaluationResultPagination.max_page_size)],
        responses={200: es.EvaluationResultPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, id: str) -> Response:
        run = selectors.run_get(_run_id(id))
        rows = selectors.run_results(run)
        return page_response(self, request, rows, _CaseResultRowSerializer)


class EvaluationCancelApi(_Authors):
    @extend_schema(
        operation_id="cancel_evaluation",
        summary="Stop a queued or running run (an ended one is left as it is)",
        description=(
            "A queued run is cancelled at once; a running one stops within a few seconds "
            "(the calls in flight are finished and saved). The answer is the run."
        ),
        parameters=[RUN_ID],
        request=None,
        responses={200: es.EvaluationOutputSerializer, **error_responses(404)},
    )
    def post(self, request: Request, id: str) -> Response:
        run = services.run_cancel(run_id=_run_id(id), author=request.user)
        return Response(es.EvaluationOutputSerializer(results.run_json(run)).data)
