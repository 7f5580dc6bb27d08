"""The ``train_rater`` job: fine-tune a trained rater on a study's human answers, on the gpu queue."""

from __future__ import annotations

from pathlib import Path

from annotation.job_parameters import TrainRaterParameters
from annotation.models import Job
from annotation.services.jobs import Progress
from workers.trained_raters.model import TrainingSettings
from workers.trained_raters.training import train_rater

from .base import job_study, job_task


@job_task("workers.tasks.train_rater.train_rater_task")
def train_rater_task(job: Job, parameters: TrainRaterParameters, progress: Progress) -> dict:
    """Train, measure on held-out items and save; see ``workers.trained_raters.training``."""
    settings = TrainingSettings(
        epochs=parameters.epochs,
        batch_size=parameters.batch_size,
        lr=parameters.lr,
        max_length=parameters.max_length,
        seed=parameters.seed,
    )
    return train_rater(
        job_study(job),
        output=Path(parameters.output),
        question=parameters.question,
        encoder=parameters.encoder,
        settings=settings,
        test_share=parameters.test_share,
        progress=progress,
    )
