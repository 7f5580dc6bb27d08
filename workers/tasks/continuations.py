"""The ``continuations`` job: RoFT passages from a human corpus, on the gpu queue."""

from __future__ import annotations

from annotation.job_parameters import ContinuationsParameters
from annotation.models import Job
from annotation.services.jobs import Progress
from workers.generation.study_passages import continuations_into_study

from .base import job_study, job_task


@job_task("workers.tasks.continuations.generate_continuations_task")
def generate_continuations_task(job: Job, parameters: ContinuationsParameters, progress: Progress) -> dict:
    """Generate the study's missing passages; see ``workers.generation.study_passages``."""
    return continuations_into_study(job_study(job), parameters=parameters, progress=progress)
