"""Progress of a job: into its row (the jobs page polls it) and onto a tqdm bar (commands).

A task body calls ``progress(done, total, message)`` as it goes; that records the progress
on the ``Job`` row, moves the command's progress bar when one is showing, and raises
``JobCancelled`` once the job was cancelled, so the work stops at the next step.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import DatabaseError, connection
from tqdm import tqdm

from annotation.models import Job
from annotation.services.jobs import JOB_KINDS, JobCancelled, beat_job, report_progress, run_task_here

log = logging.getLogger(__name__)

_BAR: ContextVar[tqdm | None] = ContextVar("job_progress_bar", default=None)
# The run number (``Job.attempts``) of the job this task is running: progress goes through
# only while the run still owns the job (``JobTask.run`` sets it).
_ATTEMPT: ContextVar[int | None] = ContextVar("job_attempt", default=None)


class JobProgress:
    """The ``annotation.services.jobs.Progress`` of one job: records each step on its row."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.bar = _BAR.get()
        self.attempt = _ATTEMPT.get()

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        if self.bar is not None:
            if total is not None:
                self.bar.total = total
            self.bar.n = done
            self.bar.set_postfix_str(message[:60], refresh=False)
            self.bar.refresh()
        if not report_progress(self.job_id, done=done, total=total, message=message, attempt=self.attempt):
            raise JobCancelled(f"Job {self.job_id} was cancelled (or taken over after its run went silent).")


@contextmanager
def running_attempt(attempt: int) -> Iterator[None]:
    """Mark the work in this block as run number ``attempt`` of its job (``JobProgress`` reads it)."""
    token = _ATTEMPT.set(attempt)
    try:
        yield
    finally:
        _ATTEMPT.reset(token)


@contextmanager
def job_heartbeat(job_id: int, attempt: int, every: float) -> Iterator[None]:
    """Beat the job's heartbeat every ``every`` seconds while the block runs.

    A step that reports no progress for minutes (loading a model) still shows the job
    alive; a worker process that dies stops beating, and after the grace the job is taken
    over. The thread has its own database connection: when that drops it is closed and the
    next beat opens a fresh one.
    """
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(every):
                try:
                    beat_job(job_id, attempt)
                except DatabaseError as exc:
                    log.warning("job %s: heartbeat failed (%s); reconnecting", job_id, exc)
                    connection.close()
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"job-{job_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


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
        run_task_here(task, job.pk)
    job.refresh_from_db()
    return job
