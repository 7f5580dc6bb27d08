"""The ``judge`` job: a judge behind an OpenAI-compatible endpoint answers a study (default queue)."""

from __future__ import annotations

from annotation.job_parameters import JudgeParameters
from annotation.models import Job
from annotation.services.analysis.judges import endpoint_key
from annotation.services.jobs import Progress
from workers.raters.endpoint import judge_study

from .base import job_study, job_task


@job_task("workers.tasks.judges.judge_task")
def judge_task(job: Job, parameters: JudgeParameters, progress: Progress) -> dict:
    """Judge the study's items with the owner's key for the endpoint; see ``workers.raters.endpoint``."""
    study = job_study(job)
    api_key = endpoint_key(job.created_by, base_url=parameters.base_url)
    return judge_study(study, parameters, api_key=api_key, progress=progress)
