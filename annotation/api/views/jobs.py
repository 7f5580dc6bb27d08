"""Background jobs: the registered kinds, start one, follow it, cancel it."""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response

from annotation.api.idempotency import idempotent
from annotation.api.schema import documented
from annotation.api.serializers.jobs import JobFilter, JobIn, JobKindOut, JobOut
from annotation.services.access import access_job_for_researcher, access_job_to_cancel, researcher_jobs
from annotation.services.authoring.study_changes import start_job_for_researcher
from annotation.services.jobs import JOB_KINDS, cancel_job

from .base import ResearcherView


class JobKindListView(ResearcherView):
    serializer_class = JobKindOut
    pagination_class = None

    @documented(
        summary="The job kinds this site can start, with their parameters",
        responses={200: JobKindOut(many=True)},
    )
    def get(self, request):
        kinds = [
            {
                "name": name,
                "queue": spec.queue,
                "parameters": list(spec.parameters.Serializer().fields),
            }
            for name, spec in sorted(JOB_KINDS.items())
        ]
        return Response(JobKindOut(kinds, many=True).data)


class JobListView(ResearcherView):
    serializer_class = JobOut

    @documented(
        summary="Jobs on your studies, and study-less jobs you started",
        responses={200: JobOut(many=True)},
        parameters=[JobFilter],
    )
    def get(self, request):
        query = self.query(JobFilter)
        filters = {
            "study__slug": query.get("study"),
            "kind": query.get("kind"),
            "status": query.get("status"),
        }
        jobs = researcher_jobs(request.user).select_related("study", "created_by")
        jobs = jobs.filter(**{name: value for name, value in filters.items() if value is not None})
        page = self.paginate_queryset(jobs.order_by("-created_at", "-id"))
        return self.get_paginated_response(JobOut(page, many=True).data)

    @documented(
        summary="Start a job of any registered kind (generation, editing, reports, export…)",
        request=JobIn,
        responses={201: JobOut},
        write=True,
    )
    @idempotent
    def post(self, request):
        data = self.body(JobIn)
        job = start_job_for_researcher(
            user=request.user, kind=data["kind"], study_slug=data["study"], parameters=data["parameters"]
        )
        return Response(JobOut(job).data, status=status.HTTP_201_CREATED)


class JobDetailView(ResearcherView):
    serializer_class = JobOut

    @documented(summary="A job's status, progress, result or error", responses={200: JobOut})
    def get(self, request, job_id):
        return Response(JobOut(access_job_for_researcher(request.user, job_id)).data)


class JobCancelView(ResearcherView):
    serializer_class = JobOut

    @documented(
        summary="Ask a queued or running job to stop", request=None, responses={200: JobOut}, write=True
    )
    @idempotent
    def post(self, request, job_id):
        job = access_job_to_cancel(request.user, job_id)
        cancel_job(job.pk)
        job.refresh_from_db()
        return Response(JobOut(job).data)
