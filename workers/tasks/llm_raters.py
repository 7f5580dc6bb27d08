"""The ``rate_llm`` job: an LLM rater, or an LLM simulator, answers a study (gpu queue)."""

from __future__ import annotations

from annotation.job_parameters import RateLLMParameters
from annotation.models import Job
from annotation.services.jobs import Progress
from workers.raters.llm import ITEMS_PER_STEP, llm_rater
from workers.raters.run import answer_as_model

from .base import job_study, job_task


@job_task("workers.tasks.llm_raters.rate_llm_task")
def rate_llm_task(job: Job, parameters: RateLLMParameters, progress: Progress) -> dict:
    """Answer the study's items the rater has not answered; see ``workers.raters.llm``."""
    study = job_study(job)
    rater = llm_rater(study, parameters)
    return answer_as_model(study, rater, progress=progress, batch=ITEMS_PER_STEP).summary()
