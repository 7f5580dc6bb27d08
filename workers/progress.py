"""Progress of a job: into its row (the jobs page polls it) and onto a tqdm bar (commands).

A task body calls ``progress(done, total, message)`` as it goes; that records the progress
on the ``Job`` row, moves the command's progress bar when one is showing, and raises
``JobCancelled`` once the job was cancelled, so the work stops at the next step.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from tqdm import tqdm

from annotation.models import Job
from annotation.services.jobs import JOB_KINDS, JobCancelled, report_progress

_BAR: ContextVar[tqdm | None] = ContextVar("job_progress_bar", default=None)


class JobProgress:
    """The ``annotation.services.jobs.Progress`` of one job: records each step on its row."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.bar = _BAR.get()

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        if self.bar is not None:
            if total is not None:
                self.bar.total = total
            self.bar.n = done
            self.bar.set_postfix_str(message[:60], refresh=False)
            self.bar.refresh()
        if not report_progress(self.job_id, done=done, total=total, message=message):
            raise JobCancelled(f"Job {self.job_id} was cancelled.")


@contextmanager
def progress_bar(description: str, stream=None) -> Iterator[tqdm]:
    """Show a tqdm bar for the jobs run in this block (``JobProgress`` finds it)."""
    with tqdm(total=0, desc=description, unit="step", file=stream or sys.stderr, dynamic_ncols=True) as bar:
        token = _BAR.set(bar)
        try:
            yield bar
        finally:
            _BAR.reset(token)


def run_job_here(job: Job, *, description: str, stream=None) -> Job:
    """Run a job's task in this process with a progress bar (the commands); the job afterwards.

    The task goes through the same claim/finish/fail steps as on a worker, so the row
    ends DONE with its result or FAILED with the error, exactly as a queued job would.
    """
    from roft_site.celery import app

    task = app.tasks[JOB_KINDS[job.kind].task]
    with progress_bar(description, stream):
        task.apply(args=[job.pk], throw=False)
    job.refresh_from_db()
    return job
