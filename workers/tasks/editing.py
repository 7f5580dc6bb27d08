"""The ``edit_and_generate`` job: edited-model passages into a study, on the gpu queue."""

from __future__ import annotations

from annotation.job_parameters import EditAndGenerateParameters
from annotation.models import Job
from annotation.services.jobs import Progress

from .base import job_study, job_task


@job_task("workers.tasks.editing.edit_and_generate_task")
def edit_and_generate_task(job: Job, parameters: EditAndGenerateParameters, progress: Progress) -> dict:
    """Edit, generate and add the study's missing items; see ``workers.editing.passages``."""
    from workers.editing.passages import edited_passages_into_study  # imports torch: inside the body

    return edited_passages_into_study(job_study(job), parameters=parameters, progress=progress)
