"""Starting background jobs and moving them through their states.

The web process queues a job by its kind's task *name* (it never imports the workers'
modules, which may need torch); each kind names its Celery task and queue below. Every
state change is a conditional UPDATE, so a task redelivered after a worker died, or a
cancelled job, is recognised and left alone.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from django.conf import settings
from django.db import connections, transaction
from django.db.models import F, Q
from django.utils import timezone
from rest_framework import serializers

from annotation.errors import InputError, flatten_errors
from annotation.models import Job, Study
from annotation.services.access import researcher_jobs
from roft_site.celery import DEFAULT_QUEUE, QUEUES


class Progress(Protocol):
    """The one progress callback every job body takes: ``progress(done, total=None, message="")``.

    On a worker it is ``workers.progress.JobProgress``, which records the step on the job's
    row and raises ``JobCancelled`` once the job was cancelled; elsewhere ``no_progress``.
    """

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None: ...


class JobCancelled(Exception):
    """The job was cancelled: raised by the progress callback, so the work stops at its next step."""


def no_progress(done: int, total: int | None = None, message: str = "") -> None:
    """The progress callback of work run outside a job (commands, tests): reports nothing."""


@dataclass(frozen=True)
class JobKind:
    task: str  # the Celery task's registered name
    queue: str  # the only declaration of the kind's queue: "gpu" for model work, else "default"
    parameters: type[serializers.Serializer] | None = None  # validates a job's parameters
    needs_study: bool = False  # the job works on one study (Job.study must be set)


JOB_KINDS: dict[str, JobKind] = {}


def register_job_kind(
    name: str,
    *,
    task: str,
    queue: str = DEFAULT_QUEUE,
    parameters: type[serializers.Serializer] | None = None,
    needs_study: bool = False,
) -> None:
    """Declare a job kind: its Celery task, its queue, and the serializer of its parameters."""
    if queue not in QUEUES:
        raise ValueError(f"queue must be one of {', '.join(QUEUES)}, not {queue!r}")
    JOB_KINDS[name] = JobKind(task=task, queue=queue, parameters=parameters, needs_study=needs_study)


def job_kind_of_task(task: str) -> JobKind:
    """The job kind whose Celery task is named ``task``: where a job task finds its queue."""
    for kind in JOB_KINDS.values():
        if kind.task == task:
            return kind
    raise LookupError(f"No job kind runs task {task!r}: register_job_kind(...) before defining it.")


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
    job = create_job(kind=kind, parameters=parameters, study=study, user=user)
    queue_job(job)
    return job


def check_new_job(*, kind: str, parameters: dict | None, study: Study | None) -> dict:
    """The validated parameters of a job about to be created (``InputError`` naming the field)."""
    parameters = check_job_parameters(kind, parameters)
    if JOB_KINDS[kind].needs_study and study is None:
        raise InputError({"study": [f"A {kind} job works on a study: choose one."]})
    return parameters


def create_job(*, kind: str, parameters: dict | None = None, study: Study | None = None, user=None) -> Job:
    """A validated QUEUED job row that nothing runs yet (commands run it in their own process)."""
    parameters = check_new_job(kind=kind, parameters=parameters, study=study)
    owner = user if user is not None and getattr(user, "is_authenticated", False) else None
    return Job.objects.create(kind=kind, parameters=parameters, study=study, created_by=owner)


def queue_job(job: Job) -> None:
    """Send the job's task to its queue once the current transaction commits."""
    transaction.on_commit(lambda: _send(job))


def _send(job: Job) -> None:
    from roft_site.celery import app

    spec = JOB_KINDS[job.kind]
    if settings.CELERY_TASK_ALWAYS_EAGER and settings.JOBS_IN_BACKGROUND_THREAD:
        _run_in_thread(app.tasks[spec.task], job.pk)
    elif settings.CELERY_TASK_ALWAYS_EAGER:
        app.tasks[spec.task].apply(args=[job.pk], throw=False)
    else:
        app.send_task(spec.task, args=[job.pk], queue=spec.queue)


def _run_in_thread(task, job_id: int) -> None:
    """Run an in-process task beside the request (the embedded runtime has no worker):
    the page that started it answers at once and polls the job like any other."""

    def run() -> None:
        try:
            task.apply(args=[job_id], throw=False)
        finally:
            connections.close_all()  # this thread's own connections

    threading.Thread(target=run, name=f"job-{job_id}", daemon=True).start()


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


RECENT_JOBS = 50


def job_board(user) -> tuple[list[Job], list[Job]]:
    """(queued or running jobs, the most recent finished ones) for the jobs page."""
    jobs = researcher_jobs(user).select_related("study")
    active = list(jobs.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("created_at"))
    recent = list(jobs.filter(status__in=Job.FINISHED).order_by("-finished_at", "-pk")[:RECENT_JOBS])
    return active, recent


def job_status(job: Job) -> dict:
    """The one shape of a job's state: the jobs page, the dashboard and the API all show this
    (the API adds what was asked and what came out). Needs ``job.study`` (select it)."""
    return {
        "id": job.pk,
        "kind": job.kind,
        "study": job.study.slug if job.study is not None else None,
        "status": job.status,
        "status_label": job.get_status_display(),
        "finished": job.status in Job.FINISHED,
        "progress_done": job.progress_done,
        "progress_total": job.progress_total,
        "percent": job.percent,
        "message": job.message,
        "error": job.error,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


def job_details(job: Job) -> dict:
    """``job_status`` plus what was asked and what came out: the API's job and the exports
    table. Needs ``job.study`` and ``job.created_by`` (select them)."""
    return job_status(job) | {
        "parameters": job.parameters,
        "result": job.result,
        "created_by": job.created_by.username if job.created_by is not None else None,
        "created_at": job.created_at,
    }
