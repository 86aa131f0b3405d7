"""Cursor pagination: stable under inserts and as fast on page 1,000 as on page 1."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request


class StrictPageSizePagination(CursorPagination):
    """``page_size`` must be a whole number from 1; DRF would silently ignore anything else.

    A size over ``max_page_size`` is capped to it, as in DRF.
    """

    page_size: int
    page_size_query_param = "page_size"
    max_page_size: int

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        digits = raw.lstrip("0")
        if not (raw.isascii() and raw.isdigit() and digits):
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        f"{raw[:50]!r} is not a page size: use a whole number from 1 "
                        f"to {self.max_page_size}."
                    ]
                }
            )
        # int() refuses over 4,300 digits; any size that long is over the cap anyway.
        size = int(digits) if len(digits) <= 10 else self.max_page_size
        return min(size, self.max_page_size)


class VersionPagination(StrictPageSizePagination):
    ordering = "-number"
    page_size = 20
    max_page_size = 100


class ConversationPagination(StrictPageSizePagination):
    ordering = "-id"
    page_size = 50
    max_page_size = 500
