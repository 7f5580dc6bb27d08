"""The ``rate_llm`` job: an LLM rater, or an LLM simulator, answers a study (gpu queue)."""

from __future__ import annotations

from annotation.models import Job

from .base import job_task


@job_task("workers.tasks.llm_raters.rate_llm_task")
def rate_llm_task(job: Job) -> dict:
    """Answer the study's items the rater has not answered; see ``workers.raters.llm``."""
    from workers.progress import JobProgress
    from workers.raters.llm import rate_study_with_llm

    return rate_study_with_llm(job.study, job.parameters, JobProgress(job.pk))
