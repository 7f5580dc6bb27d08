"""Housekeeping: the studies' retention periods (platform ids, and answers where asked)."""

from __future__ import annotations

from dataclasses import asdict

from celery import shared_task

from annotation.services.authoring.erasure import apply_retention


@shared_task(name="workers.tasks.erasure.apply_retention_task")
def apply_retention_task() -> dict:
    """Periodic (celery beat, RETENTION_EVERY_SECONDS): delete what is past its study's period."""
    return asdict(apply_retention())
