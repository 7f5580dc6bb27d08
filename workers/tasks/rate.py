"""The ``rate`` job: a saved trained rater answers a study's new items, on the gpu queue."""

from __future__ import annotations

from pathlib import Path

from annotation.models import Job

from .base import job_task


@job_task("workers.tasks.rate.rate_task")
def rate_task(job: Job) -> dict:
    """Answer the items the rater has not answered; see ``workers.trained_raters.rating``."""
    from workers.progress import JobProgress
    from workers.trained_raters.rating import rate_study

    return rate_study(job.study, Path(job.parameters["rater"]), progress=JobProgress(job.pk))
