"""Job rows: queued → running → done/failed/cancelled, redelivery harmless, eager in embedded mode."""

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework import serializers

from annotation.errors import InputError
from annotation.models import Job
from annotation.services.jobs import (
    JobCancelled,
    JobParameters,
    cancel_job,
    claim_job,
    register_job_kind,
    report_progress,
    start_job,
)
from workers.tasks.base import job_task

pytestmark = pytest.mark.django_db

RUNS: list[int] = []


@dataclass(frozen=True, kw_only=True)
class CountParameters(JobParameters):
    n: int
    fail: bool

    class Serializer(serializers.Serializer):
        n = serializers.IntegerField(min_value=1, max_value=100)
        fail = serializers.BooleanField(default=False)


register_job_kind("test-count", task="tests.count_to_task", parameters=CountParameters)


@job_task("tests.count_to_task")
def count_to_task(job, parameters: CountParameters, progress):
    RUNS.append(job.pk)
    total = parameters.n
    for done in range(1, total + 1):
        if not report_progress(job.pk, done=done, total=total, message=f"{done} of {total}"):
            raise JobCancelled
    if parameters.fail:
        raise ValueError("asked to fail")
    return {"counted": total}


def test_job_runs_eagerly_after_commit_and_records_result(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job(kind="test-count", parameters={"n": 3})
    job.refresh_from_db()
    assert job.status == "done" and job.result == {"counted": 3}
    assert (job.progress_done, job.progress_total, job.percent) == (3, 3, 100)
    assert job.message == "3 of 3"


def test_failure_is_recorded_with_the_error(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job(kind="test-count", parameters={"n": 1, "fail": True})
    job.refresh_from_db()
    assert job.status == "failed" and "asked to fail" in job.error


def test_redelivered_message_does_nothing_twice(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job(kind="test-count", parameters={"n": 2})
    runs = len(RUNS)
    count_to_task.apply(args=[job.pk])
    assert len(RUNS) == runs
    assert Job.objects.get(pk=job.pk).attempts == 1


def test_running_job_with_a_live_heartbeat_is_not_taken_over():
    job = Job.objects.create(kind="test-count", parameters={"n": 1})
    assert claim_job(job.pk) is not None
    assert claim_job(job.pk) is None
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert claim_job(job.pk).attempts == 2


def test_cancel_stops_a_running_job():
    job = Job.objects.create(kind="test-count", parameters={"n": 5})
    claim_job(job.pk)
    assert cancel_job(job.pk)
    assert report_progress(job.pk, done=1) is False
    assert Job.objects.get(pk=job.pk).status == "cancelled"


def test_unknown_kind_and_bad_parameters_are_refused_and_write_nothing():
    with pytest.raises(InputError, match="Unknown job kind"):
        start_job(kind="nope")
    with pytest.raises(InputError) as exc:
        start_job(kind="test-count", parameters={"n": 0})
    assert "parameters.n" in exc.value.errors
    assert Job.objects.count() == 0
