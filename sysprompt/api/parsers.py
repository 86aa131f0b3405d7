"""JSON bodies with a size limit: DRF's parser would read a body of any size."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.parsers import JSONParser

from sysprompt.api.errors import PayloadTooLarge
from sysprompt.conf import app_settings

JSON_OVERHEAD_BYTES = 65_536


def max_body_bytes() -> int:
    """The largest body accepted: room for a template at the limit, fully JSON-escaped."""
    return 6 * app_settings().max_template_bytes + JSON_OVERHEAD_BYTES


class LimitedJSONParser(JSONParser):
    """Refuses a body over :func:`max_body_bytes` with 413 before reading it."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        request = (parser_context or {}).get("request")
        length = request.META.get("CONTENT_LENGTH") if request is not None else None
        # Every limit is at least JSON_OVERHEAD_BYTES: small bodies skip reading the settings.
        size = int(length) if length and length.isdigit() else 0
        if size > JSON_OVERHEAD_BYTES and size > (limit := max_body_bytes()):
            raise PayloadTooLarge(
                f"The request body is {size:,} bytes; the limit is {limit:,} bytes."
            )
        return super().parse(stream, media_type, parser_context)
