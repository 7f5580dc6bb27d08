"""The ``items_upload`` job: a large API items upload, stored by the web, loaded here."""

from __future__ import annotations

from annotation.models import Job
from annotation.services.authoring.items_upload import ItemsUploadParameters, load_stored_upload
from annotation.services.jobs import Progress

from .base import job_study, job_task


@job_task("workers.tasks.items.upload_items_task")
def upload_items_task(job: Job, parameters: ItemsUploadParameters, progress: Progress) -> dict:
    """Load the stored upload into the job's study: ``{"created": n, "updated": m}``."""
    return load_stored_upload(job.pk, job_study(job), parameters.file)
