"""The ``train_rater`` job: fine-tune a trained rater on a study's human answers, on the gpu queue."""

from __future__ import annotations

from annotation.models import Job

from .base import job_task


@job_task("workers.tasks.train_rater.train_rater_task")
def train_rater_task(job: Job) -> dict:
    """Train, measure on held-out items and save; see ``workers.trained_raters.training``."""
    from workers.progress import JobProgress
    from workers.trained_raters.model import TrainingSettings
    from workers.trained_raters.training import train_rater

    p = job.parameters
    settings = TrainingSettings(
        epochs=p["epochs"], batch_size=p["batch_size"], lr=p["lr"], max_length=p["max_length"], seed=p["seed"]
    )
    return train_rater(
        job.study,
        output=p["output"],
        question=p.get("question"),
        encoder=p["encoder"],
        settings=settings,
        test_share=p["test_share"],
        progress=JobProgress(job.pk),
    )
