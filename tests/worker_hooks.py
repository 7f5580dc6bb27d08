"""Loaded only by the worker processes the tests start (``celery worker --include tests.worker_hooks``).

``TEST_JOB_STEP_DELAY_S`` makes every progress step of a job's first run wait up to that
long after it is recorded, so a test can hurt the worker while a cheap job (a small study's
reports) is surely mid-way. The wait ends early once the run is hurt: a killed process
waits no more, and a run whose database connection the server cut (``pg_terminate_backend``:
the server sends its notice and closes the socket) goes on at once to its next query, which
fails as it would have after the whole delay. The run that takes over (attempt 2 and later)
goes at full speed: nothing hurts it, and waiting there only made the tests slow. Nothing
outside the tests imports this module.
"""

from __future__ import annotations

import os
import select
import time

from django.db import connection

from workers.progress import JobProgress

STEP_DELAY_S = float(os.environ.get("TEST_JOB_STEP_DELAY_S", "0"))


def wait_unless_cut(seconds: float) -> None:
    """Wait ``seconds``, or less if the server closes this thread's database connection
    meanwhile: an idle connection's socket turns readable only then (the server has nothing
    else to say to a client that asked nothing). The wait reads nothing from it."""
    if connection.connection is None:
        time.sleep(seconds)
    else:
        select.select([connection.connection.fileno()], [], [], seconds)


if STEP_DELAY_S > 0:
    _record_step = JobProgress.__call__

    def _slow_step(self: JobProgress, done: int, total: int | None = None, message: str = "") -> None:
        _record_step(self, done, total, message)
        if self.attempt is None or self.attempt <= 1:
            wait_unless_cut(STEP_DELAY_S)

    JobProgress.__call__ = _slow_step  # type: ignore[method-assign]
