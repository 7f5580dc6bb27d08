"""Starting background jobs and moving them through their states.

The web process queues a job by its kind's task *name* (it never imports the workers'
modules, which may need torch); each kind names its Celery task and queue below. Every
state change is a conditional UPDATE, so a task redelivered after a worker died, or a
cancelled job, is recognised and left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from rest_framework import serializers

from annotation.errors import InputError, flatten_errors
from annotation.models import Job, Study


@dataclass(frozen=True)
class JobKind:
    task: str  # the Celery task's registered name
    queue: str  # "gpu" for model work, "default" for everything else
    parameters: type[serializers.Serializer] | None = None  # validates a job's parameters


JOB_KINDS: dict[str, JobKind] = {}


def register_job_kind(
    name: str, *, task: str, queue: str = "default", parameters: type[serializers.Serializer] | None = None
) -> None:
    """Declare a job kind: its Celery task, its queue, and the serializer of its parameters."""
    if queue not in ("default", "gpu"):
        raise ValueError(f"queue must be 'default' or 'gpu', not {queue!r}")
    JOB_KINDS[name] = JobKind(task=task, queue=queue, parameters=parameters)


def check_job_parameters(kind: str, parameters: dict | None) -> dict:
    """Validated parameters for a job kind; ``InputError`` naming the field otherwise."""
    if kind not in JOB_KINDS:
        known = ", ".join(sorted(JOB_KINDS)) or "none"
        raise InputError({"kind": [f"Unknown job kind {kind!r}; known: {known}."]})
    spec = JOB_KINDS[kind].parameters
    if spec is None:
        return dict(parameters or {})
    serializer = spec(data=parameters or {})
    if not serializer.is_valid():
        raise InputError(flatten_errors(serializer.errors, "parameters"))
    return dict(serializer.validated_data)


def start_job(*, kind: str, parameters: dict | None = None, study: Study | None = None, user=None) -> Job:
    """Validate the parameters, create the job row, queue its task once the transaction commits."""
    parameters = check_job_parameters(kind, parameters)
    owner = user if user is not None and getattr(user, "is_authenticated", False) else None
    job = Job.objects.create(kind=kind, parameters=parameters, study=study, created_by=owner)
    transaction.on_commit(lambda: _send(job))
    return job


def _send(job: Job) -> None:
    from roft_site.celery import app

    spec = JOB_KINDS[job.kind]
    if settings.CELERY_TASK_ALWAYS_EAGER:
        app.loader.import_default_modules()  # in-process: make sure workers.tasks is registered
        app.tasks[spec.task].apply(args=[job.pk], throw=False)
    else:
        app.send_task(spec.task, args=[job.pk], queue=spec.queue)


def claim_job(job_id: int) -> Job | None:
    """QUEUED → RUNNING, or take over a RUNNING job whose worker went silent.

    Returns None when the job is done, cancelled, or alive in another worker: a message
    delivered twice then does nothing the second time.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.JOB_STALE_SECONDS)
    claimable = Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING, heartbeat_at__lt=stale)
    updated = Job.objects.filter(claimable, pk=job_id).update(
        status=Job.Status.RUNNING, started_at=now, heartbeat_at=now, attempts=F("attempts") + 1
    )
    return Job.objects.get(pk=job_id) if updated else None


def report_progress(job_id: int, *, done: int, total: int | None = None, message: str = "") -> bool:
    """Record progress; returns False when the job was cancelled meanwhile (stop working)."""
    values = {"progress_done": done, "message": message[:300], "heartbeat_at": timezone.now()}
    if total is not None:
        values["progress_total"] = total
    return bool(Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(**values))


def finish_job(job_id: int, *, result: dict | None = None) -> bool:
    """RUNNING → DONE with a result summary (the last progress message stays)."""
    return bool(
        Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(
            status=Job.Status.DONE, result=result or {}, finished_at=timezone.now()
        )
    )


def fail_job(job_id: int, *, error: str) -> bool:
    """RUNNING or QUEUED → FAILED, keeping the error for the researcher."""
    return bool(
        Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
            status=Job.Status.FAILED, error=error[:20000], finished_at=timezone.now()
        )
    )


def cancel_job(job_id: int) -> bool:
    """Ask a queued or running job to stop; the task sees it at its next progress report."""
    return bool(
        Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
            status=Job.Status.CANCELLED, finished_at=timezone.now()
        )
    )
