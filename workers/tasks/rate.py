"""The ``rate`` job: a saved trained rater answers a study's new items, on the gpu queue."""

from __future__ import annotations

from pathlib import Path

from annotation.job_parameters import RateParameters
from annotation.models import Job
from annotation.services.jobs import Progress
from workers.raters.run import answer_as_model
from workers.trained_raters.rating import BATCH, trained_rater

from .base import job_study, job_task


@job_task("workers.tasks.rate.rate_task")
def rate_task(job: Job, parameters: RateParameters, progress: Progress) -> dict:
    """Answer the items the rater has not answered; see ``workers.trained_raters.rating``."""
    study = job_study(job)
    rater = trained_rater(study, Path(parameters.rater))
    return answer_as_model(study, rater, progress=progress, batch=BATCH).summary()
