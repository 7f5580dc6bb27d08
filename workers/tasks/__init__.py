"""Celery tasks, one module per task kind; imported here so the worker registers them.

No module here imports torch at import time: the web process imports these to queue jobs.
"""

from . import (
    assignments,
    continuations,
    editing,
    erasure,
    exports,
    items,
    jobs,
    judges,
    llm_raters,
    platforms,
    rate,
    reports,
    simulatability,
    train_mend,
    train_rater,
)

__all__ = [
    "assignments",
    "continuations",
    "editing",
    "erasure",
    "exports",
    "items",
    "jobs",
    "judges",
    "llm_raters",
    "platforms",
    "rate",
    "reports",
    "simulatability",
    "train_mend",
    "train_rater",
]
