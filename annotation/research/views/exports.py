"""Researchers' export page: start an export job, watch it, download the file."""

from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.errors import InputError
from annotation.models import Job
from annotation.services.access import (
    access_export_for_researcher,
    access_study_to_read,
    can_see_platform_ids,
    researcher_jobs,
)
from annotation.services.authoring.study_changes import start_export
from annotation.services.exports.export import FILE_DELETED, FORMATS, export_path
from annotation.services.jobs import job_details

from .decorators import researcher_required


def _exports(request, study) -> dict:
    """The study's latest exports, and whether one is still running (the table then polls)."""
    jobs = (
        researcher_jobs(request.user).filter(study=study, kind="export").select_related("study", "created_by")
    )
    exports = [job_details(job) for job in jobs.order_by("-created_at", "-id")[:50]]
    return {"study": study, "exports": exports, "active": any(not job["finished"] for job in exports)}


@researcher_required
@require_http_methods(["GET", "POST"])
def export_list(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_to_read(request.user, slug)
    if request.method == "POST":
        fmt = request.POST.get("format", "")
        include_ids = request.POST.get("include_platform_ids") == "on"
        try:
            start_export(
                user=request.user,
                study=study,
                parameters={"format": fmt, "include_platform_ids": include_ids},
            )
        except InputError as exc:
            messages.error(request, exc.summary())
        else:
            messages.success(request, f"The {fmt} export has started.")
        return redirect("research-exports", slug=slug)
    context = {
        **_exports(request, study),
        "formats": list(FORMATS),
        "sees_platform_id": can_see_platform_ids(request.user, study),
    }
    return render(request, "research/exports.html", context)


@researcher_required
def export_table(request: HttpRequest, slug: str) -> HttpResponse:
    """The list of exports alone, polled while one is running."""
    study = access_study_to_read(request.user, slug)
    return render(request, "research/_exports_table.html", _exports(request, study))


@researcher_required
def export_download(request: HttpRequest, slug: str, export_id: int) -> HttpResponseBase:
    study = access_study_to_read(request.user, slug)
    job = access_export_for_researcher(request.user, study, export_id)
    if job.status != Job.Status.DONE:
        messages.error(request, f"That export is {job.status}.")
        return redirect("research-exports", slug=slug)
    path = export_path(job)
    if not path.exists():
        messages.error(request, FILE_DELETED)
        return redirect("research-exports", slug=slug)
    return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name)
