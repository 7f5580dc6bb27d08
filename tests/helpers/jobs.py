"""Waiting for a job that a real worker runs, and the worker thread on the Redis broker
(fixture ``redis_worker``, loaded through ``pytest_plugins`` in tests/conftest.py)."""

from __future__ import annotations

import time

import pytest

from annotation.models import Job
from tests.celery_worker import redis_worker_on

FIRST_PAUSE_S = 0.01


def wait_until(check, seconds: float = 30.0, *, step: float = 0.1) -> bool:
    """Whether ``check()`` turned true within ``seconds``, asking every ``step`` seconds once
    the wait is under way: the first pauses are shorter (from ``FIRST_PAUSE_S``, doubling),
    so a job a worker finishes in a few milliseconds is not waited on for a whole step.
    The tests' one polling loop: every wait below, and every wait in a test, goes through it.
    ``check`` may raise (an assertion that what it waits on is still alive, say)."""
    deadline = time.monotonic() + seconds
    pause = min(FIRST_PAUSE_S, step)
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(2 * pause, step)


def wait_for_job(job: Job, seconds: float = 180) -> Job:
    """``job`` once it finished (done, failed or cancelled), refreshed; an assertion error
    naming it if it is still going after ``seconds`` (a generous bound, not a timing test)."""

    def finished() -> bool:
        job.refresh_from_db()
        return job.status in Job.FINISHED

    if not wait_until(finished, seconds):
        raise AssertionError(f"job {job.pk} ({job.kind}) still {job.status} after {seconds} s")
    return job


def wait_for_done(job: Job, seconds: float = 180) -> Job:
    """``job`` once it finished, which must be done (its error otherwise)."""
    wait_for_job(job, seconds)
    assert job.status == Job.Status.DONE, (job.kind, job.status, job.error)
    return job


@pytest.fixture
def redis_worker():
    """A worker thread on the Redis broker, with tasks sent (not run eagerly)."""
    with redis_worker_on(["default"]):
        yield
