"""A Celery worker thread on the Redis broker for the worker tests (tasks sent, not run eagerly)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from celery.contrib.testing.worker import start_worker
from django.conf import settings

from roft_site.celery import app


@contextmanager
def redis_worker_on(queues: list[str]) -> Iterator[None]:
    assert settings.CELERY_BROKER_URL.startswith("redis://"), "the worker test needs Redis"
    app.conf.task_always_eager = False
    app.control.purge()
    try:
        with start_worker(app, pool="solo", queues=queues, perform_ping_check=False, shutdown_timeout=30):
            yield
    finally:
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
