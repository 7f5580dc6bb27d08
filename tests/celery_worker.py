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
                # Celery's Django fixup runs Django's system checks at each worker start
                # (0.2 CPU-s of a 1.2 s start here); tests/integration/test_runtime.py runs
                # them (manage.py check, --deploy too) on the same code.
                "CELERY_SKIP_CHECKS": "1",
            }
            | (extra_env or {})
        )
        self.queues = queues
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.log_offset = 0  # where ``log()`` starts reading (``new_log``)

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

        assert wait_until(ready, 120, step=0.05), "the worker did not start"

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

    def log(self) -> str:
        """What the worker logged since it started, or since ``new_log()``."""
        return self.log_path.read_text()[self.log_offset :]

    def new_log(self) -> None:
        """From now on ``log()`` shows only what comes next: a test that shares a running
        worker with others of its module asserts on its own part of the log."""
        self.log_offset = len(self.log_path.read_text())


class WorkerProcesses:
    """The worker process that a module's tests share, started on first use, and again
    after a test killed it; killed (main process and pool) at ``close``.

    A start costs seconds of imports. A test that hurts only a job (kills a pool child, cuts
    the database connections) leaves the worker as it found it: the pool replaces its child,
    the next query opens a fresh connection. Killed rather than stopped: the tests wait for
    their jobs to finish, so a warm shutdown has nothing left to finish, and it cost seconds
    of the pool's idle joins and the interpreter's teardown (2.5 to 5 s a worker here).
    """

    def __init__(self, queues: list[str], folder: Path, extra_env: dict[str, str] | None = None):
        assert settings.CELERY_BROKER_URL.startswith("redis://"), "the worker test needs Redis"
        self.queues = queues
        self.folder = folder
        self.extra_env = extra_env
        self.started: list[WorkerProcess] = []

    def live(self) -> WorkerProcess:
        """The running worker; a new one (its own log) when there is none or it was killed."""
        current = self.started[-1] if self.started else None
        if current is None or current.process is None or current.process.poll() is not None:
            log_path = self.folder / f"worker-{len(self.started) + 1}.log"
            current = WorkerProcess(self.queues, log_path, self.extra_env)
            self.started.append(current)
            current.start()
        return current

    def close(self) -> None:
        for worker in self.started:
            if worker.process is not None and worker.process.poll() is None:
                worker.kill()


@contextmanager
def tasks_sent_to_the_broker() -> Iterator[None]:
    """Tasks sent to Redis (not run eagerly) in this block, starting from an empty queue."""
    app.conf.task_always_eager = False
    app.control.purge()
    try:
        with override_settings(CELERY_TASK_ALWAYS_EAGER=False):
            yield
    finally:
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
