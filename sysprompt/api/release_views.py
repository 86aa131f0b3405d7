"""The releases views (releases §5): releases, comparisons, labels, their histories and
rollbacks, the impact report, test contexts and agent hosts' labels. One class per
operation; ``urls.py`` combines the classes that share a path.

request → the path's name or number → who may change what it names (a protected
label, an agent host on one: 403 before the body is read, whatever it holds) → the
body (input serializer) → a selector or a service of ``sysprompt.releases`` (which
checks names, targets and pointers, and who may move a protected label, again) →
output. Prompt authors only (``IsReleaseAuthor``):
agent hosts get 403 on every one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sysprompt.api import release_serializers as rs
from sysprompt.api.auth import IsReleaseAuthor
from sysprompt.api.common import (
    error_responses,
    page_parameters,
    page_response,
    route_prompt,
)
from sysprompt.api.host_views import HOST_PROMPT, USERNAME, host_name, query_prompt
from sysprompt.api.pagination import MovePagination, NamePagination, ReleasePagination
from sysprompt.errors import InvalidInput, ReleaseNotFound
from sysprompt.prompts.catalog import prompt_or_default
from sysprompt.prompts.selectors import Actor
from sysprompt.releases import selectors, services
from sysprompt.releases.impact import ContextRow, ImpactReport, impact_report
from sysprompt.releases.validation import label_name_valid, pointer_valid
from sysprompt_core.releases import LABEL_NAME_PATTERN, BoundedDiff, ImpactSummary

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt

NUMBER = OpenApiParameter(
    "number",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.PATH,
    description="The release's number.",
)
NAME = OpenApiParameter(
    "name",
    {"type": "string", "pattern": f"^{LABEL_NAME_PATTERN}$"},
    OpenApiParameter.PATH,
    description="The label's name.",
)
TEST_NAME = OpenApiParameter(
    "name",
    {"type": "string", "pattern": f"^{LABEL_NAME_PATTERN}$"},
    OpenApiParameter.PATH,
    description="The test context's name.",
)


def release_number(text: str) -> int:
    """The path's release number (digits only, by the route): 404 beyond any release."""
    number = int(text) if len(text) <= 10 else 0
    if number < 1:
        raise ReleaseNotFound(number)
    return number


def _release_data(release: Any) -> dict[str, Any]:
    return {
        "prompt": release.prompt.name,
        "number": release.number,
        "message": release.message,
        "author": release.author.get_username() if release.author else None,
        "created_at": release.created_at,
        "template_version": release.template_version_id or 0,
    }


def label_data(state: selectors.LabelState) -> dict[str, Any]:
    return dict(
        rs.LabelOutputSerializer(
            {
                "prompt": state.prompt,
                "name": state.name,
                "target": state.target.as_json(),
                "protected": state.protected,
                "follows_latest": state.follows_latest,
                "updated_at": state.updated_at,
                "updated_by": state.updated_by,
                "gate": None if state.gate is None else state.gate.as_json(),
            }
        ).data
    )


def label_detail(state: selectors.LabelState, prompt: Prompt | None = None) -> dict[str, Any]:
    """One label of ``prompt`` (``None``: ``default``), with where a rollback would move
    it now (one more query)."""
    back_to = selectors.rollback_target(state.name, prompt=prompt)
    return {**label_data(state), "rollback_to": None if back_to is None else back_to.as_json()}


def label_put(
    name: str, given: Callable[[], Any], *, author: Actor, prompt: Prompt | None = None
) -> services.LabelSet:
    """``PUT /api/labels/{name}``'s work, for the view and ``/mcp``'s ``set_label``: the
    name checked, then who may change the label (403 for a protected one without
    ``releases.publish_release``, and for a prompt restricted to groups the author is
    in none of, audited; before ``given()`` reads the body, whatever it holds), then the
    body (``LabelInputSerializer``), then the prompt's label (``None``: ``default``'s)
    set or moved."""
    checked = label_name_valid(name)
    services.label_change_check(name=checked, author=author)
    prompt = prompt_or_default(prompt)
    services.prompt_write_check(user=author, prompt=prompt, action="move label")
    body = rs.LabelInputSerializer(data=given())
    body.is_valid(raise_exception=True)
    data = body.validated_data
    return services.label_set(
        name=checked,
        target=data.get("target", services.UNCHANGED),
        message=data.get("message", ""),
        protected=data.get("protected"),
        gate=data.get("gate", services.UNCHANGED),
        force=data.get("force", False),
        author=author,
        prompt=prompt,
    )


class _Authors(APIView):
    permission_classes = [IsAuthenticated, IsReleaseAuthor]

    def prompt(self) -> Prompt:
        """The prompt the route names (``default`` on today's routes)."""
        return route_prompt(self)

    def write_check(self, request: Request, action: str) -> Prompt:
        """The route's prompt, once the user may change it (403, audited, before the
        body is read)."""
        prompt = self.prompt()
        services.prompt_write_check(user=request.user, prompt=prompt, action=action)
        return prompt


GATE_REFUSED = OpenApiResponse(
    rs.GateRefusedOutputSerializer,
    description="The label's gate refuses the move: detail says what is missing (no run, "
    "a run that regressed, a pass rate below the minimum, errors, cases changed since), "
    "and reasons lists it one by one.",
)


# --- releases -----------------------------------------------------------------------------


class ReleaseListApi(_Authors):
    pagination_class = ReleasePagination

    @extend_schema(
        operation_id="list_releases",
        summary="Every release, newest first",
        parameters=page_parameters(ReleasePagination.max_page_size),
        responses={200: rs.ReleasePageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, prompt: str | None = None) -> Response:
        rows = selectors.releases_list(prompt=self.prompt())
        return page_response(self, request, rows, _ReleaseRowSerializer)


class _ReleaseRowSerializer(rs.ReleaseOutputSerializer):
    """A release row as the list shows it."""

    def to_representation(self, instance: Any) -> Any:
        return super().to_representation(_release_data(instance))


class ReleaseCreateApi(_Authors):
    @extend_schema(
        operation_id="create_release",
        summary="Release the working copy",
        description=(
            "201 with a new release of the working copy (the template version and every "
            "fragment variant's version); 200 with the existing release when the working "
            "copy has not changed since it was released."
        ),
        request=rs.ReleaseInputSerializer,
        responses={
            200: rs.ReleaseDetailOutputSerializer,
            201: rs.ReleaseDetailOutputSerializer,
            **error_responses(400, 404, 415),
        },
    )
    def post(self, request: Request, prompt: str | None = None) -> Response:
        chosen = self.write_check(request, "release")
        body = rs.ReleaseInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        made = services.release_create(
            message=body.validated_data.get("message", ""), author=request.user, prompt=chosen
        )
        code = status.HTTP_201_CREATED if made.created else status.HTTP_200_OK
        return Response(release_detail(made.release.number, chosen), status=code)


def release_detail(number: int, prompt: Prompt | None = None) -> dict[str, Any]:
    detail = selectors.release_get(number, prompt=prompt)
    return dict(
        rs.ReleaseDetailOutputSerializer(
            {
                "prompt": detail.prompt,
                "number": detail.number,
                "message": detail.message,
                "author": detail.author,
                "created_at": detail.created_at,
                "template_version": detail.template_version,
                "fragments": [ref.as_dict() for ref in detail.fragments],
            }
        ).data
    )


class ReleaseGetApi(_Authors):
    @extend_schema(
        operation_id="get_release",
        summary="One release with the version of every variant it holds",
        parameters=[NUMBER],
        responses={200: rs.ReleaseDetailOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, number: str, prompt: str | None = None) -> Response:
        return Response(release_detail(release_number(number), self.prompt()))


class ReleaseCompareApi(_Authors):
    @extend_schema(
        operation_id="compare_release",
        summary="What differs from this release to the working copy or another release",
        parameters=[
            NUMBER,
            OpenApiParameter(
                "with",
                {"type": "string", "pattern": "^(latest|[1-9][0-9]{0,9})$"},
                description='"latest" (the working copy; the default) or a release number.',
            ),
        ],
        responses={200: rs.ComparisonOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, number: str, prompt: str | None = None) -> Response:
        chosen = self.prompt()
        query = rs.CompareQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        other = pointer_valid(query.validated_data["with"], "with")
        comparison = selectors.release_compare(release_number(number), other, prompt=chosen)
        template = comparison.template
        data = {
            "prompt": chosen.name,
            "release": comparison.before,
            "with": comparison.after,
            "changed": comparison.changed,
            "template": None
            if template is None
            else {
                "before_version": template.before_version,
                "after_version": template.after_version,
                "diff": template.diff.text,
                "diff_truncated": template.diff.truncated,
                "diff_too_large": _too_large(template.diff),
            },
            "fragments": [
                {
                    "name": change.name,
                    "provider": change.provider,
                    "model": change.model,
                    "before_version": change.before_version,
                    "after_version": change.after_version,
                    "diff": change.diff.text,
                    "diff_truncated": change.diff.truncated,
                    "diff_too_large": _too_large(change.diff),
                    "settings_changed": change.settings_changed,
                }
                for change in comparison.fragments
            ],
        }
        return Response(rs.ComparisonOutputSerializer(data).data)


class ImpactApi(_Authors):
    @extend_schema(
        operation_id="release_impact",
        summary="What moving a label to a candidate would do, for whom",
        description=(
            "Renders the label's recent conversations' contexts (the 200 most frequent "
            "in the window) and every test context with the label's target now and with "
            "the candidate: per context, changed or not, a unified diff, sizes in characters "
            "and tokens, the shared prefix before and after, and lint of the candidate. "
            "Stores nothing."
        ),
        request=rs.ImpactInputSerializer,
        responses={200: rs.ImpactOutputSerializer, **error_responses(400, 404, 415)},
    )
    def post(self, request: Request, prompt: str | None = None) -> Response:
        chosen = self.prompt()
        body = rs.ImpactInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        report = impact_report(
            label=body.validated_data["label"],
            candidate=body.validated_data["candidate"],
            window_days=body.validated_data.get("window_days"),
            prompt=chosen,
        )
        return Response(rs.ImpactOutputSerializer(_impact_data(report)).data)


def _too_large(diff: BoundedDiff) -> str | None:
    """Why the diff is not shown, with both sides' sizes (``None``: it is)."""
    return diff.too_large.summary if diff.too_large else None


def _impact_data(report: ImpactReport) -> dict[str, Any]:
    return {
        "prompt": report.prompt,
        "label": report.label,
        "candidate": report.candidate,
        "current": report.current.as_json(),
        "window_days": report.window_days,
        "since": report.since,
        "note": report.note,
        "summary": summary_data(report.summary),
        "contexts": [row_data(row) for row in report.contexts],
    }


def summary_data(summary: ImpactSummary) -> dict[str, Any]:
    """An impact summary as the API shows it."""
    return {
        "contexts": summary.contexts,
        "contexts_changed": summary.contexts_changed,
        "conversations": summary.conversations,
        "conversations_changed": summary.conversations_changed,
        "share_changed": summary.share_changed,
        "prefixes_changed": summary.prefixes_changed,
        "conversations_prefix_changed": summary.conversations_prefix_changed,
    }


def row_data(row: ContextRow) -> dict[str, Any]:
    """One row of an impact report (a release's or a fragment's) as the API shows it."""
    impact = row.impact
    return {
        "key": impact.key,
        "origin": row.origin,
        "conversations": impact.conversations,
        "changed": impact.changed,
        "diff": impact.diff,
        "diff_truncated": impact.diff_truncated,
        "diff_too_large": impact.diff_too_large,
        "chars_before": impact.chars_before,
        "chars_after": impact.chars_after,
        "tokens_before": impact.tokens_before,
        "tokens_after": impact.tokens_after,
        "tokens_exact": impact.tokens_exact,
        "tokens_error": impact.tokens_error,
        "shared_prefix_before": impact.shared_prefix_before,
        "shared_prefix_after": impact.shared_prefix_after,
        "prefix_changed": impact.prefix_changed,
        "diagnostics": [
            {
                "line": d.line,
                "column": d.column,
                "end_column": d.end_column,
                "severity": d.severity,
                "message": d.message,
            }
            for d in impact.diagnostics
        ],
        "problem": impact.problem,
        "note": row.note,
        "arm": row.arm,
        "before": row.before,
        "host_values": row.host_values,
        "agent_host": row.agent_host,
        "cwd": row.cwd,
        "provider": row.provider,
        "model": row.model,
        "tools": list(row.tools),
        "variables": row.variables,
        "override": row.override,
        "conversation_id": row.conversation_id,
    }


# --- labels -------------------------------------------------------------------------------


class LabelListApi(_Authors):
    pagination_class = NamePagination

    @extend_schema(
        operation_id="list_labels",
        summary="Every label with its target, by name",
        parameters=page_parameters(NamePagination.max_page_size),
        responses={200: rs.LabelPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, prompt: str | None = None) -> Response:
        rows = selectors.labels_list(self.prompt())
        return page_response(self, request, rows, _LabelRowSerializer)


class _LabelRowSerializer(rs.LabelOutputSerializer):
    def to_representation(self, instance: Any) -> Any:
        return label_data(instance)


class LabelGetApi(_Authors):
    @extend_schema(
        operation_id="get_label",
        summary="One label with its target",
        parameters=[NAME],
        responses={200: rs.LabelDetailOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str, prompt: str | None = None) -> Response:
        chosen = self.prompt()
        state = selectors.label_get(label_name_valid(name), prompt=chosen)
        return Response(label_detail(state, chosen))


class LabelSetApi(_Authors):
    @extend_schema(
        operation_id="set_label",
        summary="Create a label or move it",
        description=(
            "201 when the label is new, 200 otherwise. Every move is kept in the label's "
            "history; a PUT that changes nothing writes nothing; one without target keeps "
            "the label's (a new label needs one). A protected label (production) needs "
            "releases.publish_release: 403 without it whatever the body, nothing changed. "
            "A gated label's move to a release it does not serve yet needs a finished run of "
            "the gate's suite (candidate that release, baseline the label as it is) that "
            'passed: 409 saying what is missing (detail, and "reasons" one by one) without '
            'it, unless a publisher sends "force": true with a message.'
        ),
        parameters=[NAME],
        request=rs.LabelInputSerializer,
        responses={
            200: rs.LabelDetailOutputSerializer,
            201: rs.LabelDetailOutputSerializer,
            **error_responses(400, 404, 409, 415, e409=GATE_REFUSED),
        },
    )
    def put(self, request: Request, name: str, prompt: str | None = None) -> Response:
        chosen = self.prompt()
        done = label_put(name, lambda: request.data, author=request.user, prompt=chosen)
        code = status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
        return Response(label_detail(done.label, chosen), status=code)


class LabelHistoryApi(_Authors):
    pagination_class = MovePagination

    @extend_schema(
        operation_id="list_label_moves",
        summary="A label's moves, newest first",
        parameters=[NAME, *page_parameters(MovePagination.max_page_size)],
        responses={200: rs.LabelMovePageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str, prompt: str | None = None) -> Response:
        moves = selectors.label_history(label_name_valid(name), prompt=self.prompt())
        return page_response(self, request, moves, rs.LabelMoveOutputSerializer)


class LabelRollbackApi(_Authors):
    @extend_schema(
        operation_id="rollback_label",
        summary="Move a label one step back through its history",
        description=(
            "One action, kept in the history as a move marked rollback: the first "
            "rollback goes to the target the label had before its last move, each next "
            "one a step further back (a move that is not a rollback starts a new step). "
            "get_label's rollback_to says where it goes; the answer's rollback_to where "
            "the next one would. 400 (field name) when there is no earlier target; the "
            "same permissions and gate as a move."
        ),
        parameters=[NAME],
        request=rs.RollbackInputSerializer,
        responses={
            200: rs.LabelDetailOutputSerializer,
            **error_responses(400, 404, 409, 415, e409=GATE_REFUSED),
        },
    )
    def post(self, request: Request, name: str, prompt: str | None = None) -> Response:
        checked = label_name_valid(name)
        services.label_change_check(name=checked, author=request.user)  # before the body
        chosen = self.write_check(request, "roll back label")
        body = rs.RollbackInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        done = services.label_rollback(
            name=checked,
            message=body.validated_data.get("message", ""),
            force=body.validated_data.get("force", False),
            author=request.user,
            prompt=chosen,
        )
        return Response(label_detail(done.label, chosen))


# --- test contexts -----------------------------------------------------------------------


def _test_context_data(row: Any) -> dict[str, Any]:
    return dict(rs.TestContextOutputSerializer(row).data)


class TestContextListApi(_Authors):
    __test__ = False
    pagination_class = NamePagination

    @extend_schema(
        operation_id="list_test_contexts",
        summary="Every test context, by name",
        parameters=page_parameters(NamePagination.max_page_size),
        responses={200: rs.TestContextPageOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, prompt: str | None = None) -> Response:
        rows = list(selectors.test_contexts_list(self.prompt()))
        return page_response(self, request, rows, rs.TestContextOutputSerializer)


class TestContextCreateApi(_Authors):
    __test__ = False

    @extend_schema(
        operation_id="create_test_context",
        summary="Save a new test context",
        description="201; 400 naming the field (name: one of that name exists already).",
        request=rs.TestContextCreateInputSerializer,
        responses={201: rs.TestContextOutputSerializer, **error_responses(400, 404, 415)},
    )
    def post(self, request: Request, prompt: str | None = None) -> Response:
        chosen = self.write_check(request, "save a test context")
        body = rs.TestContextCreateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        fields = dict(body.validated_data)
        name = label_name_valid(fields.pop("name"))
        if selectors.test_contexts_list(chosen).filter(name=name).exists():
            raise InvalidInput(
                "name",
                f"A test context named {name!r} exists; PUT /api/test-contexts/{name} replaces it.",
            )
        saved = services.test_context_save(
            name=name, fields=fields, author=request.user, prompt=chosen
        )
        return Response(_test_context_data(saved.context), status=status.HTTP_201_CREATED)


class TestContextGetApi(_Authors):
    __test__ = False

    @extend_schema(
        operation_id="get_test_context",
        summary="One test context",
        parameters=[TEST_NAME],
        responses={200: rs.TestContextOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, name: str, prompt: str | None = None) -> Response:
        found = selectors.test_context_get(label_name_valid(name), prompt=self.prompt())
        return Response(_test_context_data(found))


class TestContextPutApi(_Authors):
    __test__ = False

    @extend_schema(
        operation_id="save_test_context",
        summary="Create or replace a test context",
        description="201 when it is new, 200 when it replaced one.",
        parameters=[TEST_NAME],
        request=rs.TestContextInputSerializer,
        responses={
            200: rs.TestContextOutputSerializer,
            201: rs.TestContextOutputSerializer,
            **error_responses(400, 404, 415),
        },
    )
    def put(self, request: Request, name: str, prompt: str | None = None) -> Response:
        checked = label_name_valid(name)
        chosen = self.write_check(request, "save a test context")
        body = rs.TestContextInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        saved = services.test_context_save(
            name=checked, fields=dict(body.validated_data), author=request.user, prompt=chosen
        )
        code = status.HTTP_201_CREATED if saved.created else status.HTTP_200_OK
        return Response(_test_context_data(saved.context), status=code)


class TestContextDeleteApi(_Authors):
    __test__ = False

    @extend_schema(
        operation_id="delete_test_context",
        summary="Delete a test context",
        parameters=[TEST_NAME],
        responses={
            204: OpenApiResponse(description="Deleted; no body."),
            **error_responses(400, 404),
        },
    )
    def delete(self, request: Request, name: str, prompt: str | None = None) -> Response:
        checked = label_name_valid(name)
        chosen = self.write_check(request, "delete a test context")
        if not services.test_context_delete(name=checked, author=request.user, prompt=chosen):
            selectors.test_context_get(checked, prompt=chosen)  # raises TestContextNotFound
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- an agent host's label ------------------------------------------------------------------


def _host_label_data(state: selectors.HostLabelState) -> dict[str, Any]:
    return dict(
        rs.HostLabelOutputSerializer(
            {
                "prompt": state.prompt,
                "username": state.username,
                "label": state.label,
                "effective": state.effective,
                "updated_at": state.updated_at,
                "updated_by": state.updated_by,
            }
        ).data
    )


class AgentHostLabelGetApi(_Authors):
    @extend_schema(
        operation_id="get_agent_host_label",
        summary="The label of an agent host",
        parameters=[USERNAME, HOST_PROMPT],
        responses={200: rs.HostLabelOutputSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, username: str) -> Response:
        prompt = query_prompt(request)
        state = selectors.host_label_state(host_name(username), prompt=prompt)
        return Response(_host_label_data(state))


class AgentHostLabelSetApi(_Authors):
    @extend_schema(
        operation_id="set_agent_host_label",
        summary="Set (or with null remove) the label of an agent host",
        description=(
            "The label its conversations use when a call names none (else production), "
            "from their next construct or compact on; stored prompts do not change. "
            "Moving a host off or onto a protected label needs releases.publish_release: "
            "403 without it. Per prompt (?prompt=, default: default): the label is one of "
            "that prompt's; a prompt restricted to groups the author is in none of: 403, "
            "audited."
        ),
        parameters=[USERNAME, HOST_PROMPT],
        request=rs.HostLabelInputSerializer,
        responses={200: rs.HostLabelOutputSerializer, **error_responses(400, 404, 415)},
    )
    def put(self, request: Request, username: str) -> Response:
        name = host_name(username)
        prompt = query_prompt(request)
        services.host_change_check(username=name, author=request.user, prompt=prompt)
        services.prompt_write_check(
            user=request.user, prompt=prompt, action="set the agent host's label"
        )  # who may, before the body
        body = rs.HostLabelInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        state = services.host_label_set(
            username=name, label=body.validated_data["label"], author=request.user, prompt=prompt
        )
        return Response(_host_label_data(state))
