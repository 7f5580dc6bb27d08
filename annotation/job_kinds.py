"""The job kinds the site can start, with the parameters each accepts.

One ``register_job_kind`` call per kind, next to the serializer of its parameters. The
tasks themselves live in ``workers/tasks/`` (the web process starts them by name).
Imported once at start-up by ``AnnotationConfig.ready``. The reports job is ``scoring``'s
and registers itself in ``scoring/job_kinds.py`` (``ScoringConfig.ready``): ``annotation``
does not import ``scoring``.
"""

from __future__ import annotations

from annotation.job_parameters import (
    AnswerFollowupsParameters,
    BuildPlausibilityStudyParameters,
    BuildSimulationStudyParameters,
    ContinuationsParameters,
    CounterfactualsParameters,
    EditAndGenerateParameters,
    ExplainParameters,
    JudgeParameters,
    PlatformBonusParameters,
    PlatformPublishParameters,
    PlatformReviewParameters,
    RateLLMParameters,
    RateParameters,
    TrainMendParameters,
    TrainRaterParameters,
)
from annotation.models import Platform
from annotation.services.authoring.items_upload import ItemsUploadParameters
from annotation.services.exports.export import ExportParameters
from annotation.services.jobs import register_job_kind

register_job_kind(
    "export",
    task="workers.tasks.exports.export_study_task",
    parameters=ExportParameters,
    needs_study=True,
    analysis=True,
)
# A large API items upload (services.authoring.items_upload.receive_items_upload), stored, loaded here.
register_job_kind(
    "items_upload",
    task="workers.tasks.items.upload_items_task",
    parameters=ItemsUploadParameters,
    needs_study=True,
)


register_job_kind(
    "continuations",
    task="workers.tasks.continuations.generate_continuations_task",
    queue="gpu",
    parameters=ContinuationsParameters,
    needs_study=True,
    worker_paths={"corpus": "corpus", "model": "model"},
)
register_job_kind(
    "edit_and_generate",
    task="workers.tasks.editing.edit_and_generate_task",
    queue="gpu",
    parameters=EditAndGenerateParameters,
    needs_study=True,
    worker_paths={"requests": "corpus", "model": "model", "hparams_dir": "model_dir"},
)

# Counterfactual simulatability (seed 001): the three model steps, and the two study builders.
SIMULATABILITY_PATHS = {"questions": "corpus", "explainer": "model"}
register_job_kind(
    "explain",
    task="workers.tasks.simulatability.explain_task",
    queue="gpu",
    parameters=ExplainParameters,
    worker_paths=SIMULATABILITY_PATHS,
)
register_job_kind(
    "counterfactuals",
    task="workers.tasks.simulatability.counterfactuals_task",
    queue="gpu",
    parameters=CounterfactualsParameters,
    worker_paths={**SIMULATABILITY_PATHS, "generators": "model"},
)
register_job_kind(
    "answer_followups",
    task="workers.tasks.simulatability.answer_followups_task",
    queue="gpu",
    parameters=AnswerFollowupsParameters,
    worker_paths=SIMULATABILITY_PATHS,
)
register_job_kind(
    "build_simulation_study",
    task="workers.tasks.simulatability.build_simulation_study_task",
    queue="gpu",
    parameters=BuildSimulationStudyParameters,
    needs_study=True,
    worker_paths={**SIMULATABILITY_PATHS, "generators": "model"},
)
register_job_kind(
    "build_plausibility_study",
    task="workers.tasks.simulatability.build_plausibility_study_task",
    queue="gpu",
    parameters=BuildPlausibilityStudyParameters,
    needs_study=True,
    worker_paths=SIMULATABILITY_PATHS,
)
register_job_kind(
    "rate_llm",
    task="workers.tasks.llm_raters.rate_llm_task",
    queue="gpu",
    parameters=RateLLMParameters,
    needs_study=True,
    worker_paths={"model": "model"},
)
# A judge behind an OpenAI-compatible endpoint: network calls, no model here (default queue).
register_job_kind(
    "judge",
    task="workers.tasks.judges.judge_task",
    parameters=JudgeParameters,
    needs_study=True,
)
register_job_kind(
    "train_rater",
    task="workers.tasks.train_rater.train_rater_task",
    queue="gpu",
    parameters=TrainRaterParameters,
    needs_study=True,
    worker_paths={"output": "output", "encoder": "model"},
    analysis=True,  # learns from the answers; writes the rater to the worker's folder
)
register_job_kind(
    "rate",
    task="workers.tasks.rate.rate_task",
    queue="gpu",
    parameters=RateParameters,
    needs_study=True,
    worker_paths={"rater": "model"},
)
register_job_kind(
    "train_mend",
    task="workers.tasks.train_mend.train_mend_task",
    queue="gpu",
    parameters=TrainMendParameters,
    worker_paths={"model": "model", "requests": "corpus", "output": "output"},
)

# The crowd platforms' API calls (docs/crowd.md): light work on the default queue.
PLATFORM_JOBS = {
    "publish": PlatformPublishParameters,
    "review": PlatformReviewParameters,
    "bonus": PlatformBonusParameters,
}
for _platform in Platform.values:  # each platform's jobs: workers/tasks/platforms.py
    for _action, _parameters in PLATFORM_JOBS.items():
        register_job_kind(
            f"{_platform}_{_action}",
            task=f"workers.tasks.platforms.{_platform}_{_action}_task",
            parameters=_parameters,
            needs_study=True,
            crowd=True,
        )
