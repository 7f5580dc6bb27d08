"""The counterfactual-simulatability jobs (seed 001), on the gpu queue.

Three model steps (``explain``, ``counterfactuals``, ``answer_followups``) that write
records, and two study builders that run them and add items (``build_simulation_study``,
``build_plausibility_study``). See ``workers.simulatability``.
"""

from __future__ import annotations

from annotation.job_parameters import (
    AnswerFollowupsParameters,
    BuildPlausibilityStudyParameters,
    BuildSimulationStudyParameters,
    CounterfactualsParameters,
    ExplainParameters,
)
from annotation.models import Job
from annotation.services.jobs import Progress
from workers.simulatability.records import answer_followups, explain, write_followups
from workers.simulatability.study import plausibility_study, simulation_study

from .base import job_study, job_task


@job_task("workers.tasks.simulatability.explain_task")
def explain_task(job: Job, parameters: ExplainParameters, progress: Progress) -> dict:
    """Answers and explanations for every question and mode not yet stored."""
    return explain(parameters=parameters, progress=progress)


@job_task("workers.tasks.simulatability.counterfactuals_task")
def counterfactuals_task(job: Job, parameters: CounterfactualsParameters, progress: Progress) -> dict:
    """Follow-ups per explanation and generator, duplicates marked."""
    return write_followups(parameters=parameters, progress=progress)


@job_task("workers.tasks.simulatability.answer_followups_task")
def answer_followups_task(job: Job, parameters: AnswerFollowupsParameters, progress: Progress) -> dict:
    """The explaining model's answer to each kept follow-up (the simulation's truth)."""
    return answer_followups(parameters=parameters, progress=progress)


@job_task("workers.tasks.simulatability.build_simulation_study_task")
def build_simulation_study_task(
    job: Job, parameters: BuildSimulationStudyParameters, progress: Progress
) -> dict:
    """The chain, then one simulation item per kept, answered follow-up."""
    return simulation_study(job_study(job), parameters=parameters, progress=progress)


@job_task("workers.tasks.simulatability.build_plausibility_study_task")
def build_plausibility_study_task(
    job: Job, parameters: BuildPlausibilityStudyParameters, progress: Progress
) -> dict:
    """Explanations, then one plausibility item per question with a gold answer."""
    return plausibility_study(job_study(job), parameters=parameters, progress=progress)
