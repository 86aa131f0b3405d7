"""Cursor pagination: stable under inserts and as fast on page 1,000 as on page 1."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.views import APIView


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


class NamePagination(StrictPageSizePagination):
    """Cursor pagination over a list sorted by ``name`` (the library's fragments, which a
    selector gives as a list, not a queryset): the cursor holds the name to go on from,
    so a page stays stable while fragments are added or removed elsewhere."""

    ordering = "name"
    page_size = 50
    max_page_size = 500

    def paginate_queryset(
        self, queryset: Any, request: Request, view: APIView | None = None
    ) -> list[Any]:
        items: list[Any] = list(queryset)
        self.request = request
        self.base_url = request.build_absolute_uri()
        self.page_size = self.get_page_size(request)
        cursor = self.decode_cursor(request)
        names = [item.name for item in items]
        if cursor is None or cursor.position is None:
            start = 0
            end = min(len(items), self.page_size)
        elif cursor.reverse:
            end = bisect_left(names, cursor.position)
            start = max(0, end - self.page_size)
        else:
            start = bisect_right(names, cursor.position)
            end = min(len(items), start + self.page_size)
        page = items[start:end]
        self._after = page[-1].name if page and end < len(items) else None
        self._before = page[0].name if page and start > 0 else None
        return page

    def get_next_link(self) -> str | None:
        if self._after is None:
            return None
        return self.encode_cursor(Cursor(offset=0, reverse=False, position=self._after))

    def get_previous_link(self) -> str | None:
        if self._before is None:
            return None
        return self.encode_cursor(Cursor(offset=0, reverse=True, position=self._before))


class ReleasePagination(StrictPageSizePagination):
    """Releases, newest first."""

    ordering = "-number"
    page_size = 20
    max_page_size = 100


class MovePagination(StrictPageSizePagination):
    """A label's history, newest move first."""

    ordering = "-id"
    page_size = 20
    max_page_size = 100


class CasePagination(StrictPageSizePagination):
    """A suite's cases, in the order they were added."""

    ordering = "id"
    page_size = 50
    max_page_size = 500


class EvaluationPagination(StrictPageSizePagination):
    """Evaluation runs, newest first."""

    ordering = "-id"
    page_size = 20
    max_page_size = 100


class EvaluationResultPagination(StrictPageSizePagination):
    """A run's results: regressions first, then errors, fixes, the rest, by position
    within each (``evaluations.selectors.run_results``' unique ``result_order``)."""

    ordering = "result_order"
    page_size = 50
    max_page_size = 500
