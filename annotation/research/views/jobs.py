"""The researchers' jobs page: running and recent jobs, each row polling its own progress."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.services.access import access_job_for_researcher
from annotation.services.jobs import RECENT_JOBS, job_board, job_status

from .decorators import researcher_required


@researcher_required
@require_GET
def jobs_page(request):
    active, recent = job_board(request.user)
    context = {
        "active": [job_status(job) for job in active],
        "recent": [job_status(job) for job in recent],
        "recent_limit": RECENT_JOBS,
    }
    return render(request, "research/jobs.html", context)


@researcher_required
@require_GET
def job_row(request, job_id: int):
    """One job's row, which htmx polls while the job is unfinished (404 for others' jobs)."""
    job = access_job_for_researcher(request.user, job_id)
    return render(request, "research/_job_row.html", {"job": job_status(job)})
