"""Each pytest-xdist worker gets a Redis database of its own.

pytest-django already gives each worker its own PostgreSQL test database (``test_roft_gw0``,
…). Redis is shared by the cache, the sessions, the rate limits and the Celery broker, and
the worker tests purge the broker's queues: two workers on one Redis database would drop
each other's tasks and trip each other's rate limits. Before xdist starts its workers, this
hook (in the controlling process) gives worker ``gwN`` the database ``base + N + 1`` of the
same server in its environment, where Django's settings read it (``REDIS_URL``'s own
database stays the one a plain run uses).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

import pytest

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def worker_redis_url(url: str, worker: str) -> str:
    """``url`` moved to the database of xdist worker ``worker`` (``gw0`` → base + 1)."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    number = base + int(worker.removeprefix("gw")) + 1
    return urlunsplit(parts._replace(path=f"/{number}"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs) -> None:
    """Set each worker's Redis database in the environment it starts with."""
    base = os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
    for spec in specs:
        url = worker_redis_url(base, spec.id)
        spec.env["REDIS_URL"] = url
        if "CELERY_BROKER_URL" in os.environ:
            spec.env["CELERY_BROKER_URL"] = url
