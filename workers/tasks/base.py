"""The base class of job tasks: ids in, state checked before acting, failures recorded.

The base does the wiring every job needs, so a task body is one call: it claims the job,
checks that a kind working on a study has one, builds the job's typed parameters and its
progress reporter, and hands the body ``(job, parameters, progress)``.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import TypeVar

from celery import Task
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection

from annotation.models import Job, Study
from annotation.services.jobs import (
    JOB_KINDS,
    JobCancelled,
    JobParameters,
    Progress,
    check_job_paths_now,
    claim_job,
    fail_job,
    finish_job,
    job_kind_of_task,
    job_parameters,
    release_job,
    worker_folders,
)
from roft_site.celery import GPU_QUEUE, app
from workers.lm.registry import model_folders, without_paths
from workers.progress import JobProgress, job_heartbeat, running_attempt

log = logging.getLogger(__name__)


class TransientJobError(Exception):
    """Trouble that may pass (a model directory on a network share not mounted yet…): retried with backoff."""


class JobWithoutStudy(Exception):
    """A job of a kind that works on a study (``JobKind.needs_study``) has none: it fails with this."""


class JobTask(Task):
    """A Celery task that runs one ``Job`` row.

    Subclasses implement ``run_job(job, parameters, progress) -> dict`` (the result summary):
    ``parameters`` is the kind's frozen dataclass (``job_parameters``), ``progress`` the job's
    ``JobProgress``, and a kind that ``needs_study`` is never run without its study. ``uses_gpu`` is
    true when the job kind's queue is ``gpu`` (routed there). Messages are acknowledged
    after the work (``acks_late``) and requeued if the worker dies; ``claim_job`` makes
    the redelivered copy a no-op once the job is done. Database hiccups are retried with
    backoff on a fresh connection, as is ``TransientJobError``; any other error fails
    the job with a short message (the traceback goes to the log and to admins). While the
    job runs, a heartbeat thread marks it alive; a delivery that finds it running elsewhere
    looks again after ``JOB_HEARTBEAT_GRACE_S`` and takes it over if the heartbeat stopped.
    GPU tasks get the ``GPU_TASK_*_TIME_LIMIT`` settings: past the soft limit the job fails
    cleanly, past the hard one the worker process is replaced.
    """

    abstract = True
    uses_gpu = False
    acks_late = True
    reject_on_worker_lost = True
    autoretry_for = (OperationalError, InterfaceError, TransientJobError)
    retry_backoff = True
    retry_backoff_max = 300
    max_retries = 5

    def run(self, job_id: int) -> dict | None:
        job = claim_job(job_id)
        if job is None:
            self._not_claimed(job_id)
            return None
        attempt = job.attempts
        every = max(settings.JOB_HEARTBEAT_GRACE_S / 4, 0.5)
        try:
            folders = worker_folders(job.created_by)  # a researcher's job: their own and shared models
            readable = None if folders is None else folders["read"]
            with job_heartbeat(job_id, attempt, every), running_attempt(attempt), model_folders(readable):
                if JOB_KINDS[job.kind].needs_study:
                    job_study(job)
                check_job_paths_now(job)  # on this worker's disk, just before the job reads or writes
                result = self.run_job(job, job_parameters(job), JobProgress(job.pk))
        except JobCancelled:
            return None
        except (OperationalError, InterfaceError, TransientJobError) as exc:
            self._give_back(job_id, attempt, exc)
            return None
        except Exception as exc:
            log.exception("job %s failed", job_id)
            fail_job(job_id, error=short_error(exc), traceback=traceback.format_exc(), attempt=attempt)
            return None
        finish_job(job_id, result=result or {}, attempt=attempt)
        return result

    def _give_back(self, job_id: int, attempt: int, exc: Exception) -> None:
        """Trouble that may pass: requeue the job for the retry, or fail it after the last try.

        The database error may have come from a dropped connection: it is closed first, so
        these updates (and the retry) run on a fresh one. If even that fails, the job keeps
        RUNNING with a heartbeat that stops, and the retry or the sweeper takes it over.
        """
        drop_broken_connection()
        last_try = self.request.retries >= self.max_retries
        try:
            if last_try:
                fail_job(job_id, error=f"Gave up after {attempt} tries: {short_error(exc)}", attempt=attempt)
            else:
                release_job(job_id, attempt=attempt)
        except DatabaseError:
            log.warning("job %s: could not record the retry; the sweeper will requeue it", job_id)
            drop_broken_connection()
        if last_try:
            log.error("job %s failed for good: %s", job_id, exc)
            return
        raise exc

    def _not_claimed(self, job_id: int) -> None:
        """A delivery of a job that another run holds: look again once that run may have died.

        A worker process killed mid-job has its message redelivered at once, while the job's
        heartbeat is still fresh; this copy retries after the grace and then takes it over (or
        finds it done). Done, failed and cancelled jobs are left alone.
        """
        running = Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).exists()
        if running and self.request.retries < self.max_retries:
            log.info("job %s is running elsewhere; looking again after the heartbeat grace", job_id)
            raise self.retry(countdown=settings.JOB_HEARTBEAT_GRACE_S + 1)
        log.info("job %s is not claimable (done, cancelled or running elsewhere)", job_id)

    def run_job(
        self, job: Job, parameters: JobParameters, progress: Progress
    ) -> dict:  # pragma: no cover - every subclass defines it
        raise TypeError(f"{type(self).__name__} must define run_job(job, parameters, progress)")


def job_study(job: Job) -> Study:
    """The study the job works on; ``JobWithoutStudy`` when it has none or it was deleted.

    ``JobTask`` calls it before the body of every kind that ``needs_study``, so such a job
    fails with this message and never starts its work; the bodies call it for the study."""
    study = Study.objects.filter(pk=job.study_id).first() if job.study_id is not None else None
    if study is None:
        raise JobWithoutStudy(
            f"This {job.kind} job works on a study, and it has none (never given, or deleted since)."
        )
    job.study = study
    return study


def drop_broken_connection() -> None:
    """Close this thread's database connection if it broke, so the next query opens a fresh one.

    Inside a transaction (a command or test running the job in its own) the caller owns it.
    """
    if not connection.in_atomic_block:
        connection.close_if_unusable_or_obsolete()


def short_error(exc: BaseException) -> str:
    """What a researcher sees of a failure: the first line of its message, never a traceback,
    and never the worker's absolute paths (each cut to its last part)."""
    lines = str(exc).strip().splitlines()
    return without_paths(lines[0] if lines else type(exc).__name__)[:300]


P = TypeVar("P", bound=JobParameters)


def job_task(name: str) -> Callable[[Callable[[Job, P, Progress], dict]], JobTask]:
    """Register ``fn(job, parameters, progress) -> result dict`` as a ``JobTask`` named ``name``.

    Its queue is the one its job kind declares (``register_job_kind(task=name, queue=…)``),
    never a second time here; a task without a registered kind is an error. ``parameters``
    is the kind's dataclass (``register_job_kind(parameters=…)``).

    >>> @job_task("workers.tasks.reports.compute_study_reports_task")
    ... def compute_study_reports_task(job, parameters: ReportsParameters, progress): ...
    """

    uses_gpu = job_kind_of_task(name).queue == GPU_QUEUE

    def decorate(fn: Callable[[Job, P, Progress], dict]) -> JobTask:
        attrs = {"name": name, "uses_gpu": uses_gpu, "run_job": staticmethod(fn), "__doc__": fn.__doc__}
        if uses_gpu:
            attrs["soft_time_limit"] = settings.GPU_TASK_SOFT_TIME_LIMIT
            attrs["time_limit"] = settings.GPU_TASK_TIME_LIMIT
        task_class = type(fn.__name__, (JobTask,), attrs)
        return app.register_task(task_class())

    return decorate
