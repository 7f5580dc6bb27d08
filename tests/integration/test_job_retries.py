"""Job tasks: transient trouble is retried, a redelivered message does nothing, cancelling stops the work."""

from __future__ import annotations

import pytest

from annotation.models import Job
from annotation.services.jobs import (
    JOB_KINDS,
    JobCancelled,
    cancel_job,
    claim_job,
    register_job_kind,
    start_job,
)
from roft_site.celery import app, route_task
from workers.progress import JobProgress
from workers.tasks.base import TransientJobError, job_task

pytestmark = pytest.mark.django_db

ATTEMPTS: list[int] = []


register_job_kind("test-flaky", task="tests.flaky_gpu_task", queue="gpu")


@job_task("tests.flaky_gpu_task")
def flaky_gpu_task(job, parameters, progress):
    ATTEMPTS.append(job.pk)
    progress(0, total=1, message="starting")
    if ATTEMPTS.count(job.pk) == 1:
        raise TransientJobError("the model share is not mounted yet")
    progress(1, message="finished")
    return {"attempts": ATTEMPTS.count(job.pk)}


def test_transient_errors_are_retried_until_the_job_finishes(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job(kind="test-flaky")
    job.refresh_from_db()
    assert job.status == "done" and job.result == {"attempts": 2} and job.attempts == 2
    assert (job.progress_done, job.progress_total, job.message) == (1, 1, "finished")


def test_gpu_tasks_carry_time_limits_and_survive_lost_workers(settings):
    assert flaky_gpu_task.uses_gpu and flaky_gpu_task.acks_late and flaky_gpu_task.reject_on_worker_lost
    assert flaky_gpu_task.soft_time_limit == settings.GPU_TASK_SOFT_TIME_LIMIT
    assert flaky_gpu_task.time_limit == settings.GPU_TASK_TIME_LIMIT > flaky_gpu_task.soft_time_limit
    assert TransientJobError in flaky_gpu_task.autoretry_for


def test_a_redelivered_message_for_a_finished_job_does_nothing(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job(kind="test-flaky")
    runs = len(ATTEMPTS)
    flaky_gpu_task.apply(args=[job.pk])
    assert len(ATTEMPTS) == runs and Job.objects.get(pk=job.pk).attempts == 2


def test_progress_on_a_cancelled_job_stops_the_work():
    job = Job.objects.create(kind="test-flaky")
    claim_job(job.pk)
    progress = JobProgress(job.pk)
    progress(1, total=3, message="one")
    cancel_job(job.pk)
    with pytest.raises(JobCancelled):
        progress(2)
    assert Job.objects.get(pk=job.pk).progress_done == 1


def test_a_job_task_takes_its_queue_from_its_kind():
    """The queue is declared once, by the kind: a task whose kind says ``gpu`` is routed there."""
    register_job_kind("test-gpu-only", task="tests.gpu_only_task", queue="gpu")
    gpu_only_task = job_task("tests.gpu_only_task")(lambda job, parameters, progress: {})
    assert gpu_only_task.uses_gpu and route_task(gpu_only_task.name, (), {}, {}, task=gpu_only_task) == {
        "queue": "gpu"
    }
    with pytest.raises(LookupError, match="register_job_kind"):
        job_task("tests.kindless_task")


def test_every_job_kind_runs_a_registered_task_on_the_kinds_queue():
    for name, kind in JOB_KINDS.items():
        task = app.tasks[kind.task]
        assert route_task(task.name, (), {}, {}, task=task) == {"queue": kind.queue}, name
