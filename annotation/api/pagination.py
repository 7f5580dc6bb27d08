"""Pagination: numbered pages for small lists, a cursor for responses (stable while rows arrive).

``page_size`` is checked, not dropped: a value that is not a whole number from 1 up is a 400
naming it (DRF would silently use the default page size); a larger one than the list allows
is cut to its maximum, as documented.
"""

from __future__ import annotations

from rest_framework.pagination import CursorPagination, PageNumberPagination

from annotation.errors import InputError
from annotation.numbers import whole_number

PAGE_SIZE_WRONG = "Give a whole number from 1 up (at most {maximum} are listed)."


class CheckedPageSize:
    page_size_query_param = "page_size"
    max_page_size: int

    def get_page_size(self, request):
        values = request.query_params.getlist(self.page_size_query_param)
        if not values:
            return self.page_size  # type: ignore[attr-defined]
        number = whole_number(values[0]) if len(values) == 1 and values[0].isdigit() else None
        if number is None or number < 1:
            raise InputError(
                {self.page_size_query_param: [PAGE_SIZE_WRONG.format(maximum=self.max_page_size)]}
            )
        return min(number, self.max_page_size)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)  # type: ignore[misc]
        for parameter in parameters:
            if parameter["name"] in (self.page_size_query_param, "page"):
                parameter["schema"] = {**parameter["schema"], "minimum": 1}
        return parameters


class PagePagination(CheckedPageSize, PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 500


class ResponseCursorPagination(CheckedPageSize, CursorPagination):
    """Ordered by id: a cursor stays valid while new responses are stored."""

    ordering = "id"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
