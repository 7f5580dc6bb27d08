"""The researchers' jobs page: running and recent jobs, with progress the page polls."""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.services.access import researcher_jobs
from annotation.services.jobs import RECENT_JOBS, job_board, job_status

from .research import researcher_required

MAX_POLLED = 100


@researcher_required
@require_GET
def jobs_page(request):
    active, recent = job_board(request.user)
    return render(
        request, "research/jobs.html", {"active": active, "recent": recent, "recent_limit": RECENT_JOBS}
    )


@researcher_required
@require_GET
def jobs_status(request):
    """``?ids=3,4,5`` → ``{"jobs": [...]}`` for the jobs among those the researcher may see."""
    raw = [part for part in request.GET.get("ids", "").split(",") if part.strip()]
    if len(raw) > MAX_POLLED or not all(part.strip().isdigit() for part in raw):
        return JsonResponse(
            {"errors": {"ids": [f"Up to {MAX_POLLED} job ids, comma-separated."]}}, status=400
        )
    jobs = researcher_jobs(request.user).filter(pk__in=[int(part) for part in raw]).order_by("pk")
    return JsonResponse({"jobs": [job_status(job) for job in jobs]})
