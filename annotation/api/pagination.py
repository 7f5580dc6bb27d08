"""Pagination: numbered pages for small lists, a cursor for responses (stable while rows arrive)."""

from __future__ import annotations

from rest_framework.pagination import CursorPagination, PageNumberPagination


class PagePagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 500


class ResponseCursorPagination(CursorPagination):
    """Ordered by id: a cursor stays valid while new responses are stored."""

    ordering = "id"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
