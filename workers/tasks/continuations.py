"""The ``continuations`` job: RoFT passages from a human corpus, on the gpu queue."""

from __future__ import annotations

from annotation.models import Job

from .base import job_task


@job_task("workers.tasks.continuations.generate_continuations_task")
def generate_continuations_task(job: Job) -> dict:
    """Generate the study's missing passages; see ``workers.generation.study_passages``."""
    from workers.generation.study_passages import continuations_into_study
    from workers.progress import JobProgress

    return continuations_into_study(job.study, job.parameters, JobProgress(job.pk))
