"""Reports jobs: compute a study's statistics and store them (queue ``default``)."""

from __future__ import annotations

from celery import shared_task

from annotation.models import Job
from annotation.services.jobs import Progress
from scoring.job_kinds import ReportsParameters
from scoring.services import compute_study_reports, request_study_reports, stale_live_studies
from workers.similarity import available_embed

from .base import job_study, job_task


@job_task("workers.tasks.reports.compute_study_reports_task")
def compute_study_reports_task(job: Job, parameters: ReportsParameters, progress: Progress) -> dict:
    """Recompute every report of the job's study from the database and replace them."""
    result = compute_study_reports(
        job_study(job), embed=available_embed(), progress=progress, by=parameters.by
    )
    return {
        "rows": result.rows,
        "responses": result.fingerprint["responses"],
        "seconds": round(result.seconds, 3),
    }


@shared_task(name="workers.tasks.reports.refresh_live_study_reports_task")
def refresh_live_study_reports_task() -> int:
    """Periodic (celery beat): start a reports job for each live study whose inputs changed."""
    return sum(1 for study in stale_live_studies() if request_study_reports(study, trigger="schedule")[1])
