"""drf-spectacular extensions: how the API's own classes appear in the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension


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
