"""Loaded only by the worker processes the tests start (``celery worker --include tests.worker_hooks``).

``TEST_JOB_STEP_DELAY_S`` makes every progress step of a job's first run wait that long
after it is recorded, so a test can hurt the worker while a cheap job (a small study's
reports) is surely mid-way. The run that takes over (attempt 2 and later) goes at full
speed: nothing hurts it, and waiting there only made the tests slow. Nothing outside the
tests imports this module.
"""

from __future__ import annotations

import os
import time

from workers.progress import JobProgress

STEP_DELAY_S = float(os.environ.get("TEST_JOB_STEP_DELAY_S", "0"))

if STEP_DELAY_S > 0:
    _record_step = JobProgress.__call__

    def _slow_step(self: JobProgress, done: int, total: int | None = None, message: str = "") -> None:
        _record_step(self, done, total, message)
        if self.attempt is None or self.attempt <= 1:
            time.sleep(STEP_DELAY_S)

    JobProgress.__call__ = _slow_step  # type: ignore[method-assign]
