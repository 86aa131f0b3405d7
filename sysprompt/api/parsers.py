"""Bodies with a size limit: DRF's parsers would read a body of any size.

JSON for every operation but the library import, which takes a zip archive, and a
suite's import, which takes JSONL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser, JSONParser

from sysprompt.conf import app_settings
from sysprompt.errors import BodyTooLarge
from sysprompt.evaluations.services import IMPORT_MAX_BYTES

JSON_OVERHEAD_BYTES = 65_536
ARCHIVE_TEMPLATES = 64
"""An archive may be as large as this many templates at the limit (16 MiB by default)."""


def max_body_bytes() -> int:
    """The largest body accepted: room for a template at the limit, fully JSON-escaped."""
    return 6 * app_settings().max_template_bytes + JSON_OVERHEAD_BYTES


def max_archive_bytes() -> int:
    """The largest zip archive an import accepts, compressed as sent."""
    return ARCHIVE_TEMPLATES * app_settings().max_template_bytes


def body_limit(size: int) -> int | None:
    """The limit a body of ``size`` bytes breaks, or None when it is within every limit.

    Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` counts too: DRF reads the body from the
    stream, where Django's own check never runs.
    """
    django_limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if django_limit is not None and size > django_limit:
        return int(django_limit)
    # Every limit is at least JSON_OVERHEAD_BYTES: small bodies skip reading the settings.
    if size > JSON_OVERHEAD_BYTES and size > (limit := max_body_bytes()):
        return limit
    return None


class LimitedJSONParser(JSONParser):
    """Refuses a body over :func:`body_limit` with 413 before reading it, and JSON nested
    deeper than Python's recursion limit with 400 (``json`` raises RecursionError)."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        request = (parser_context or {}).get("request")
        length = request.META.get("CONTENT_LENGTH") if request is not None else None
        size = int(length) if length and length.isdigit() else 0
        if (limit := body_limit(size)) is not None:
            raise BodyTooLarge(size, limit)
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None


ZIP = "application/zip"
OCTET_STREAM = "application/octet-stream"
ARCHIVE_MEDIA_TYPES = (ZIP, OCTET_STREAM)
"""The media types of a zip archive as a body or an answer: ``application/zip``, and
``application/octet-stream``, the one binary type every client generator knows."""


class LimitedZipParser(BaseParser):
    """A zip archive as the body (``application/zip``), read as bytes up to
    :func:`max_archive_bytes`: over it, 413 before reading when ``Content-Length`` says
    so, else as soon as the stream gives one byte more."""

    media_type = ZIP

    def limit(self) -> int:
        return max_archive_bytes()

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:  # bytes: the stubs know only mappings
        limit = self.limit()
        request = (parser_context or {}).get("request")
        length = request.META.get("CONTENT_LENGTH") if request is not None else None
        size = int(length) if length and length.isdigit() else 0
        if size > limit:
            raise BodyTooLarge(size, limit)
        data: bytes = stream.read(limit + 1)
        if len(data) > limit:
            raise BodyTooLarge(len(data), limit)
        return data


class LimitedOctetStreamParser(LimitedZipParser):
    """The same archive sent as ``application/octet-stream`` (what generated clients send
    for a binary body)."""

    media_type = OCTET_STREAM


JSONL = "application/x-ndjson"


class LimitedJsonLinesParser(LimitedZipParser):
    """A suite's cases as JSONL (``application/x-ndjson``), read as bytes up to the
    import's limit (``evaluations.services.IMPORT_MAX_BYTES``), as the archive is."""

    media_type = JSONL

    def limit(self) -> int:
        return IMPORT_MAX_BYTES


class LimitedJsonLinesOctetParser(LimitedJsonLinesParser):
    """The same JSONL sent as ``application/octet-stream`` (generated clients' binary)."""

    media_type = OCTET_STREAM
