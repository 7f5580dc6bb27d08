"""Housekeeping: release assignments that participants abandoned."""

from __future__ import annotations

from celery import shared_task

from annotation.services.participation.assignment import release_expired_assignments


@shared_task(name="workers.tasks.assignments.release_expired_assignments_task")
def release_expired_assignments_task() -> int:
    """Periodic (celery beat): free the slots of assignments past their time."""
    return release_expired_assignments()
