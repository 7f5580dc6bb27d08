"""A study's stored reports (computed by the reports job; this only reads them)."""

from __future__ import annotations

from annotation.api.schema import documented
from annotation.api.views.base import ResearcherView
from scoring.api.serializers import ReportFilter, ReportOut
from scoring.models import Report


class ReportListView(ResearcherView):
    serializer_class = ReportOut

    @documented(
        summary="Report rows of a study, by metric, population and version",
        responses={200: ReportOut(many=True)},
        parameters=[ReportFilter],
    )
    def get(self, request, slug):
        query = self.query(ReportFilter)
        version = query.pop("version", None)  # none: every answer's figures, never a version's
        reports = Report.objects.filter(study=self.study("dashboard"), **query)
        reports = reports.filter(version=version) if version else reports.filter(version__isnull=True)
        reports = reports.order_by("metric", "id")
        page = self.paginate_queryset(reports)
        return self.get_paginated_response(ReportOut(page, many=True).data)
