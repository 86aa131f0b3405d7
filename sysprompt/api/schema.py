"""drf-spectacular extensions: how the API's own classes appear in the OpenAPI schema.

The schema is written for client generators too (``tests/api/test_generated_client.py``
generates one with openapi-python-client and runs turns through it): unions are
``oneOf`` of named components, never of nested inline unions.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from sysprompt.api.serializers import (
    OVERRIDE_DESCRIPTION,
    OVERRIDE_PRESET_SCHEMA,
    OVERRIDE_TEXT_SCHEMA,
    OverrideField,
)
from sysprompt_core.releases import RELEASE_NUMBER_MAX


class BearerTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "sysprompt.api.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "The same API token as tokenAuth, sent as `Bearer <key>`.",
        }


class FieldErrorsScheme(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """``{"field": ["message", …]}``: the keys are the input's field names, so no
    serializer can declare them."""

    target_class = "sysprompt.api.serializers.FieldErrorsOutputSerializer"

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "description": (
                "Invalid input: each field name (or `non_field_errors`) → its messages."
            ),
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "minProperties": 1,
        }


class OverrideFieldScheme(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    """An override: ``Override`` = ``oneOf`` a string, ``OverrideText`` and
    ``OverridePreset``, each object form a named component (a generator makes a class of
    each; an inline object with a nullable map inside a union is what openapi-python-client
    could not process). ``Override`` itself is nullable: null is "no override"."""

    target_class = "sysprompt.api.serializers.OverrideField"

    def get_name(self) -> str:
        return "Override"

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        forms = [
            _component(auto_schema, "OverrideText", OVERRIDE_TEXT_SCHEMA),
            _component(auto_schema, "OverridePreset", OVERRIDE_PRESET_SCHEMA),
        ]
        return {
            "description": OVERRIDE_DESCRIPTION,
            "nullable": True,
            "oneOf": [{"type": "string"}, *forms],
        }


def _component(auto_schema: Any, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Register ``schema`` as the component ``name`` (once); its ``$ref``."""
    component = ResolvedComponent(  # type: ignore[no-untyped-call]
        name=name, type=ResolvedComponent.SCHEMA, schema=schema, object=OverrideField
    )
    auto_schema.registry.register_on_missing(component)
    ref: dict[str, Any] = component.ref
    return ref


class LatestTargetScheme(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """``"latest"``: a target or an arm's pointer naming the working copy."""

    target_class = "sysprompt.api.release_serializers.LatestTargetSchema"

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        return "LatestTarget"

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        return {
            "type": "string",
            "enum": ["latest"],
            "description": "The working copy itself, moving with every save.",
        }


class ReleaseNumberScheme(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """A release's number: a target's arm or an impact's candidate."""

    target_class = "sysprompt.api.release_serializers.ReleaseNumberSchema"

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        return "ReleaseNumber"

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        return {
            "type": "integer",
            "minimum": 1,
            "maximum": RELEASE_NUMBER_MAX,
            "description": "A release's number.",
        }


PROMPT_ROUTES = "/api/prompts/{prompt}/-/"
"""Where a named prompt's routes start: the same views as today's routes, for it."""
HOST_CONVERSATION_ROUTES = "/api/agent-hosts/{username}/conversations/"
"""Where an agent host's conversations' routes start: the same views as
``/api/conversations/…``, for that host's."""

_PROMPT = OpenApiParameter(
    "prompt",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description=(
        "The prompt's name, a path such as support/triage (its slashes are part of it: a "
        "generated client encodes them); /-/ ends it."
    ),
)
_HOST = OpenApiParameter(
    "username",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The agent host's user name (a user in the 'Agent hosts' group).",
)


class SyspromptAutoSchema(AutoSchema):
    """The project's schema class: an operation served again under a named prompt's
    path (``/api/prompts/{prompt}/-/…``) or an agent host's (``/api/agent-hosts/
    {username}/conversations/…``) by the same view is documented there with its path
    parameter and its operation id prefixed (``prompt_``, ``host_``), so every id stays
    unique; a named prompt's operation takes no ``prompt`` query parameter (the path
    names it)."""

    def _route_prefix(self) -> str:
        if self.path.startswith(PROMPT_ROUTES):
            return "prompt_"
        if self.path.startswith(HOST_CONVERSATION_ROUTES):
            return "host_"
        return ""

    def get_override_parameters(self) -> list[Any]:
        parameters = list(super().get_override_parameters())
        prefix = self._route_prefix()
        if prefix == "prompt_":
            return [_PROMPT, *parameters]
        if prefix == "host_":
            return [_HOST, *parameters]
        return parameters

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation: dict[str, Any] | None = super().get_operation(*args, **kwargs)
        prefix = self._route_prefix()
        if operation is None or not prefix:
            return operation
        operation["operationId"] = prefix + operation["operationId"]
        if prefix == "prompt_":  # the path names the prompt; it may break the rule or be unknown
            operation["parameters"] = [
                parameter
                for parameter in operation.get("parameters", [])
                if (parameter["name"], parameter["in"]) != ("prompt", "query")
            ]
            responses = operation["responses"]
            responses.setdefault("400", _response("BadRequest", _BAD_PROMPT))
            responses.setdefault("404", _response("Error", "Not found (the prompt: no such name)."))
            operation["responses"] = dict(sorted(responses.items()))
        return operation


_BAD_PROMPT = "Invalid input: field name → list of messages (prompt: a name that breaks the rule)."


def _response(component: str, description: str) -> dict[str, Any]:
    return {
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{component}"}}},
        "description": description,
    }
