"""The Celery application: JSON-only messages, two named queues, periodic jobs.

Queue ``default`` runs statistics, exports and housekeeping; queue ``gpu`` runs model
work (one worker process per GPU). Tasks live in ``workers.tasks`` and take ids, never
model instances.
"""

from __future__ import annotations

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")


# The queues, named once: job kinds choose one (``annotation.services.jobs.register_job_kind``).
DEFAULT_QUEUE = "default"
GPU_QUEUE = "gpu"
QUEUES = (DEFAULT_QUEUE, GPU_QUEUE)


def route_task(name, args, kwargs, options, task=None, **_):
    """Tasks of a job kind on queue ``gpu`` (``uses_gpu``) go there; all others to ``default``."""
    return {"queue": GPU_QUEUE if getattr(task, "uses_gpu", False) else DEFAULT_QUEUE}


app = Celery("roft_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_default_queue=DEFAULT_QUEUE,
    task_queues=tuple(Queue(name) for name in QUEUES),
    task_routes=(route_task,),
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
)
app.autodiscover_tasks(["workers"])


def _beat_schedule() -> dict:
    from django.conf import settings

    return {
        "release-expired-assignments": {
            "task": "workers.tasks.assignments.release_expired_assignments_task",
            "schedule": float(settings.RELEASE_EXPIRED_EVERY_SECONDS),
            "options": {"queue": DEFAULT_QUEUE},
        },
        "refresh-study-reports": {
            "task": "workers.tasks.reports.refresh_live_study_reports_task",
            "schedule": float(settings.REPORTS_REFRESH_SECONDS),
            "options": {"queue": DEFAULT_QUEUE},
        },
        "apply-retention": {
            "task": "workers.tasks.erasure.apply_retention_task",
            "schedule": float(settings.RETENTION_EVERY_SECONDS),
            "options": {"queue": DEFAULT_QUEUE},
        },
        "sweep-stalled-jobs": {
            "task": "workers.tasks.jobs.sweep_stalled_jobs_task",
            "schedule": float(settings.JOB_SWEEP_EVERY_S),
            "options": {"queue": DEFAULT_QUEUE},
        },
    }


@app.on_after_configure.connect
def _install_beat_schedule(sender: Celery, **_: object) -> None:
    sender.conf.beat_schedule = _beat_schedule()
