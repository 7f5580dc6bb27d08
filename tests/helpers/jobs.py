"""Waiting for a job that a real worker runs."""

from __future__ import annotations

import time

from annotation.models import Job


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
