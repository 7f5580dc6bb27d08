"""The counterfactual-simulatability jobs (seed 001), on the gpu queue.

Three model steps (``explain``, ``counterfactuals``, ``answer_followups``) that write
records, and two study builders that run them and add items (``build_simulation_study``,
``build_plausibility_study``). See ``workers.simulatability``.
"""

from __future__ import annotations

from annotation.models import Job

from .base import job_task


@job_task("workers.tasks.simulatability.explain_task")
def explain_task(job: Job) -> dict:
    """Answers and explanations for every question and mode not yet stored."""
    from workers.progress import JobProgress
    from workers.simulatability.records import explain

    return explain(job.parameters, JobProgress(job.pk))


@job_task("workers.tasks.simulatability.counterfactuals_task")
def counterfactuals_task(job: Job) -> dict:
    """Follow-ups per explanation and generator, duplicates marked."""
    from workers.progress import JobProgress
    from workers.simulatability.records import write_followups

    return write_followups(job.parameters, JobProgress(job.pk))


@job_task("workers.tasks.simulatability.answer_followups_task")
def answer_followups_task(job: Job) -> dict:
    """The explaining model's answer to each kept follow-up (the simulation's truth)."""
    from workers.progress import JobProgress
    from workers.simulatability.records import answer_followups

    return answer_followups(job.parameters, JobProgress(job.pk))


@job_task("workers.tasks.simulatability.build_simulation_study_task")
def build_simulation_study_task(job: Job) -> dict:
    """The chain, then one simulation item per kept, answered follow-up."""
    from workers.progress import JobProgress
    from workers.simulatability.study import simulation_study

    return simulation_study(job.study, job.parameters, JobProgress(job.pk))


@job_task("workers.tasks.simulatability.build_plausibility_study_task")
def build_plausibility_study_task(job: Job) -> dict:
    """Explanations, then one plausibility item per question with a gold answer."""
    from workers.progress import JobProgress
    from workers.simulatability.study import plausibility_study

    return plausibility_study(job.study, job.parameters, JobProgress(job.pk))
