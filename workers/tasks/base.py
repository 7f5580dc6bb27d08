"""The base class of job tasks: ids in, state checked before acting, failures recorded."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

from celery import Task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from annotation.models import Job
from annotation.services.jobs import JobCancelled, claim_job, fail_job, finish_job, job_kind_of_task
from roft_site.celery import GPU_QUEUE, app

log = logging.getLogger(__name__)


class TransientJobError(Exception):
    """Trouble that may pass (a model directory on a network share not mounted yet…): retried with backoff."""


class JobTask(Task):
    """A Celery task that runs one ``Job`` row.

    Subclasses implement ``run_job(job) -> dict`` (the result summary); ``uses_gpu`` is
    true when the job kind's queue is ``gpu`` (routed there). Messages are acknowledged
    after the work (``acks_late``) and requeued if the worker dies; ``claim_job`` makes
    the redelivered copy a no-op once the job is done. Database hiccups are retried with
    backoff, as is ``TransientJobError``; any other error fails the job with its
    traceback. GPU tasks get the ``GPU_TASK_*_TIME_LIMIT`` settings: past the soft limit
    the job fails cleanly, past the hard one the worker process is replaced.
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
            log.info("job %s is not claimable (done, cancelled or running elsewhere)", job_id)
            return None
        try:
            result = self.run_job(job)
        except JobCancelled:
            return None
        except (OperationalError, InterfaceError, TransientJobError):
            Job.objects.filter(pk=job_id).update(status=Job.Status.QUEUED)
            raise
        except Exception as exc:
            fail_job(job_id, error=f"{exc}\n\n{traceback.format_exc()}")
            log.exception("job %s failed", job_id)
            return None
        finish_job(job_id, result=result or {})
        return result

    def run_job(self, job: Job) -> dict:  # pragma: no cover - every subclass defines it
        raise TypeError(f"{type(self).__name__} must define run_job(job)")


def job_task(name: str) -> Callable[[Callable[[Job], dict]], JobTask]:
    """Register ``fn(job) -> result dict`` as a ``JobTask`` named ``name``.

    Its queue is the one its job kind declares (``register_job_kind(task=name, queue=…)``),
    never a second time here; a task without a registered kind is an error.

    >>> @job_task("workers.tasks.reports.compute_study_reports_task")
    ... def compute_study_reports_task(job): ...
    """

    uses_gpu = job_kind_of_task(name).queue == GPU_QUEUE

    def decorate(fn: Callable[[Job], dict]) -> JobTask:
        attrs = {"name": name, "uses_gpu": uses_gpu, "run_job": staticmethod(fn), "__doc__": fn.__doc__}
        if uses_gpu:
            attrs["soft_time_limit"] = settings.GPU_TASK_SOFT_TIME_LIMIT
            attrs["time_limit"] = settings.GPU_TASK_TIME_LIMIT
        task_class = type(fn.__name__, (JobTask,), attrs)
        return app.register_task(task_class())

    return decorate
