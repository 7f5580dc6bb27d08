"""The ``train_mend`` job: train MEND's editor networks for one model, on the gpu queue."""

from __future__ import annotations

from annotation.job_parameters import TrainMendParameters
from annotation.models import Job
from annotation.services.jobs import Progress

from .base import job_task


@job_task("workers.tasks.train_mend.train_mend_task")
def train_mend_task(job: Job, parameters: TrainMendParameters, progress: Progress) -> dict:
    """Train, save and measure on held-out requests; see ``workers.editing.mend_training``."""
    from workers.editing.mend_training import job_settings, train_mend  # import torch: inside the body
    from workers.lm.loading import shared_lm

    layers = list(parameters.layers) if parameters.layers else None
    return train_mend(
        shared_lm(parameters.model),
        data=parameters.requests,
        output=parameters.output,
        layers=layers,
        settings=job_settings(parameters),
        progress=progress,
    )
