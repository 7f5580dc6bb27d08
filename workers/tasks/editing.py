"""The ``edit_and_generate`` job: edited-model passages into a study, on the gpu queue."""

from __future__ import annotations

from annotation.models import Job

from .base import job_task


@job_task("workers.tasks.editing.edit_and_generate_task")
def edit_and_generate_task(job: Job) -> dict:
    """Edit, generate and add the study's missing items; see ``workers.editing.passages``."""
    from workers.editing.passages import edited_passages_into_study
    from workers.progress import JobProgress

    return edited_passages_into_study(job.study, job.parameters, JobProgress(job.pk))
