"""Exports of a study: start one (a background job), follow it, download the file."""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.utils import OpenApiResponse, OpenApiTypes
from rest_framework import status
from rest_framework.response import Response

from annotation.api.idempotency import Conflict, idempotent
from annotation.api.schema import Detail, documented
from annotation.api.serializers.exports import ExportIn, ExportOut
from annotation.models import Job
from annotation.services.access import access_export_for_researcher, researcher_jobs
from annotation.services.authoring.study_changes import start_export
from annotation.services.exports.export import FILE_DELETED, export_path

from .base import ResearcherView

CONTENT_TYPES = {
    "csv": "text/csv",
    "jsonl": "application/x-ndjson",
    "sqlite": "application/zip",
    "dataset": "application/zip",
}


class ExportListView(ResearcherView):
    serializer_class = ExportOut

    @documented(summary="Exports of a study, newest first", responses={200: ExportOut(many=True)})
    def get(self, request, slug):
        jobs = (
            researcher_jobs(request.user)
            .filter(study=self.study(), kind="export")
            .select_related("study", "created_by")
        )
        page = self.paginate_queryset(jobs.order_by("-created_at", "-id"))
        return self.get_paginated_response(ExportOut(page, many=True).data)

    @documented(
        summary="Start an export: csv, jsonl, sqlite (zip with README) or dataset (Parquet, a dataset "
        "card); pseudonymised unless an admin asks",
        request=ExportIn,
        responses={202: ExportOut},
        write=True,
    )
    @idempotent
    def post(self, request, slug):
        job = start_export(user=request.user, study=self.study(), parameters=request.data)
        return Response(ExportOut(job).data, status=status.HTTP_202_ACCEPTED)


class ExportDetailView(ResearcherView):
    serializer_class = ExportOut

    @documented(summary="An export's status and progress", responses={200: ExportOut})
    def get(self, request, slug, export_id):
        return Response(ExportOut(access_export_for_researcher(request.user, self.study(), export_id)).data)


class ExportDownloadView(ResearcherView):
    @documented(
        summary="Download a finished export's file",
        responses={
            **{
                (200, media_type): OpenApiResponse(
                    OpenApiTypes.BINARY, description="The file, of the type its format names."
                )
                for media_type in CONTENT_TYPES.values()
            },
            409: OpenApiResponse(
                response=Detail,
                description="The export has not finished (or failed), or its file was deleted by an erasure.",
            ),
        },
    )
    def get(self, request, slug, export_id):
        job = access_export_for_researcher(request.user, self.study(), export_id)
        if job.status != Job.Status.DONE:
            raise Conflict(f"The export is {job.status}; download it once it is done.")
        path = export_path(job)
        if not path.exists():
            raise Conflict(FILE_DELETED)
        content_type = CONTENT_TYPES[job.parameters["format"]]
        return FileResponse(
            open(path, "rb"), as_attachment=True, filename=path.name, content_type=content_type
        )
