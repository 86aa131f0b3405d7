"""Cursor pagination: stable under inserts and as fast on page 1,000 as on page 1."""

from __future__ import annotations

from rest_framework.pagination import CursorPagination


class VersionPagination(CursorPagination):
    ordering = "-number"
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


class ConversationPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
