"""Housekeeping of jobs: requeue the ones whose worker died (queue ``default``)."""

from __future__ import annotations

from celery import shared_task

from annotation.services.jobs import sweep_stalled_jobs


@shared_task(name="workers.tasks.jobs.sweep_stalled_jobs_task")
def sweep_stalled_jobs_task() -> dict:
    """Periodic (celery beat): requeue, or fail after too many runs, jobs whose heartbeat stopped."""
    sweep = sweep_stalled_jobs()
    return {"requeued": sweep.requeued, "failed": sweep.failed}
