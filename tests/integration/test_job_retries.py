"""Job tasks: transient trouble is retried, a redelivered message does nothing, cancelling stops the work."""

from __future__ import annotations

import pytest

from annotation.models import Job
from annotation.services.jobs import cancel_job, claim_job, register_job_kind, start_job
from workers.progress import JobProgress
from workers.tasks.base import JobCancelled, TransientJobError, job_task

pytestmark = pytest.mark.django_db

ATTEMPTS: list[int] = []


@job_task("tests.flaky_gpu_task", uses_gpu=True)
def flaky_gpu_task(job):
    ATTEMPTS.append(job.pk)
    progress = JobProgress(job.pk)
    progress(0, total=1, message="starting")
    if ATTEMPTS.count(job.pk) == 1:
        raise TransientJobError("the model share is not mounted yet")
    progress(1, message="finished")
    return {"attempts": ATTEMPTS.count(job.pk)}


register_job_kind("test-flaky", task="tests.flaky_gpu_task", queue="gpu")


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
