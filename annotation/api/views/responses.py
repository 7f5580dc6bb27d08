"""Responses across the studies a researcher reaches, filtered, with a cursor."""

from __future__ import annotations

from annotation.api.pagination import ResponseCursorPagination
from annotation.api.schema import documented
from annotation.api.serializers.responses import ResponseFilter, ResponseOut
from annotation.services.access import researcher_responses

from .base import ResearcherView


class ResponseListView(ResearcherView):
    serializer_class = ResponseOut
    pagination_class = ResponseCursorPagination

    @documented(
        summary="Responses, oldest first; follow `next` to page on",
        responses={200: ResponseOut(many=True)},
        parameters=[ResponseFilter],
    )
    def get(self, request):
        query = self.query(ResponseFilter)
        rows = researcher_responses(request.user).select_related("study", "item", "participant", "assignment")
        filters = {
            "study__slug": query.get("study"),
            "study__kind": query.get("kind"),
            "answered_at__gte": query.get("since"),
            "answered_at__lt": query.get("until"),
            "flagged": query.get("flagged"),
            "is_attention_check": query.get("attention_check"),
            "participant__public_id": query.get("participant"),
        }
        rows = rows.filter(**{name: value for name, value in filters.items() if value is not None})
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(ResponseOut(page, many=True).data)
