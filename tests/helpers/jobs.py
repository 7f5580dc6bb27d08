"""Waiting for a job that a real worker runs, and the worker thread on the Redis broker
(fixture ``redis_worker``, loaded through ``pytest_plugins`` in tests/conftest.py)."""

from __future__ import annotations

import time

import pytest

from annotation.models import Job
from tests.celery_worker import redis_worker_on


def wait_for_job(job: Job, seconds: float = 180) -> Job:
    """``job`` once it finished (done, failed or cancelled), refreshed; an assertion error
    naming it if it is still going after ``seconds`` (a generous bound, not a timing test)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in Job.FINISHED:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job.pk} ({job.kind}) still {job.status} after {seconds} s")


def wait_for_done(job: Job, seconds: float = 180) -> Job:
    """``job`` once it finished, which must be done (its error otherwise)."""
    wait_for_job(job, seconds)
    assert job.status == Job.Status.DONE, (job.kind, job.status, job.error)
    return job


def wait_until(check, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


@pytest.fixture
def redis_worker():
    """A worker thread on the Redis broker, with tasks sent (not run eagerly)."""
    with redis_worker_on(["default"]):
        yield
