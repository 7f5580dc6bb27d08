"""Celery workers on the Redis broker for the worker tests (tasks sent, not run eagerly):
a thread, or a process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.db import connection
from django.test import override_settings

from roft_site.celery import app

# Seconds a worker's wait for a message on Redis (BRPOP) lasts before it looks at its stop
# flag again: kombu's ``polling_interval`` transport option, which a deployment sets through
# ``CELERY_BROKER_TRANSPORT_OPTIONS`` too. Kombu's 1 s made stopping the thread worker below
# cost every test that starts one a second; messages arrive at once either way.
BROKER_POLL_S = 0.1


@contextmanager
def redis_worker_on(queues: list[str]) -> Iterator[None]:
    assert settings.CELERY_BROKER_URL.startswith("redis://"), "the worker test needs Redis"
    app.conf.task_always_eager = False
    app.control.purge()
    transport_options = app.conf.broker_transport_options
    app.conf.broker_transport_options = {**transport_options, "polling_interval": BROKER_POLL_S}
    try:
        with (
            override_settings(CELERY_TASK_ALWAYS_EAGER=False),
            start_worker(app, pool="solo", queues=queues, perform_ping_check=False, shutdown_timeout=30),
        ):
            yield
    finally:
        app.conf.broker_transport_options = transport_options
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER


class WorkerProcess:
    """A real ``celery worker`` in its own process, with a prefork pool of one child.

    The faults the platform must survive happen to processes: a pool child killed by the
    OOM killer, a whole worker killed, a database connection cut. The thread worker above
    cannot show those, so these tests start this one on the test database.
    """

    def __init__(self, queues: list[str], log_path: Path, extra_env: dict[str, str] | None = None):
        database = connection.settings_dict
        self.env = (
            os.environ
            | {
                "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
                "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
                "CELERY_TASK_ALWAYS_EAGER": "0",
            }
            | (extra_env or {})
        )
        self.queues = queues
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        command = [sys.executable, "-m", "celery", "-A", "roft_site", "worker", "--pool", "prefork"]
        command += ["--concurrency", "1", "-Q", ",".join(self.queues), "--loglevel", "INFO"]
        command += ["--include", "tests.worker_hooks", "--without-mingle", "--without-gossip"]
        with self.log_path.open("a") as log:
            self.process = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        from tests.helpers.jobs import wait_until  # that module imports this one

        def ready() -> bool:
            assert self.process is not None and self.process.poll() is None, self.log_path.read_text()[-3000:]
            return "ready." in self.log_path.read_text()[offset:]

        assert wait_until(ready, 120, step=0.2), "the worker did not start"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def pool_children(self) -> list[int]:
        """The pids of the worker's pool processes (its child processes)."""
        children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        return [int(pid) for pid in children]

    def kill(self) -> None:
        """SIGKILL the whole worker, main process and pool, as a machine crash would."""
        children = self.pool_children()
        os.kill(self.pid, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        assert self.process is not None
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        children = self.pool_children()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)

    def log(self) -> str:
        return self.log_path.read_text()


@contextmanager
def worker_process(
    queues: list[str], log_path: Path, extra_env: dict[str, str] | None = None
) -> Iterator[WorkerProcess]:
    """A started ``WorkerProcess`` on an empty queue, stopped (and its pool gone) afterwards."""
    assert settings.CELERY_BROKER_URL.startswith("redis://"), "the worker test needs Redis"
    app.conf.task_always_eager = False
    app.control.purge()
    worker = WorkerProcess(queues, log_path, extra_env)
    try:
        worker.start()
        with override_settings(CELERY_TASK_ALWAYS_EAGER=False):
            yield worker
    finally:
        worker.stop()
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
