"""The deployment's defaults for the hot path: persistent, health-checked database
connections; sessions read from Redis when it is configured; no benchmark anchors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READ = (
    "import json; from roft_site import settings as s; db = s.DATABASES['default']; "
    "print(json.dumps([db['CONN_MAX_AGE'], db['CONN_HEALTH_CHECKS'], s.SESSION_ENGINE, s.BENCH_ANCHORS]))"
)


def settings_under(**env: str) -> list:
    """The settings as a fresh process computes them from exactly ``env`` (and PATH)."""
    clean = {"PATH": os.environ.get("PATH", ""), "SECRET_KEY": "defaults-test", **env}
    done = subprocess.run(
        [sys.executable, "-c", READ], cwd=ROOT, env=clean, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_connections_persist_with_health_checks_and_sessions_come_from_redis():
    found = settings_under(DATABASE_URL="postgres://u@db:5432/roft", REDIS_URL="redis://redis:6379/0")
    assert found == [600, True, "django.contrib.sessions.backends.cached_db", False]


def test_each_default_can_be_changed_and_no_redis_means_database_sessions():
    found = settings_under(
        DATABASE_URL="postgres://u@db:5432/roft", DB_CONN_MAX_AGE="0", DB_CONN_HEALTH_CHECKS="0"
    )
    assert found == [0, False, "django.contrib.sessions.backends.db", False]


@pytest.mark.django_db
def test_the_benchmark_anchors_do_not_exist_in_a_normal_deployment(client):
    assert client.get("/bench/hello").status_code == 404
    assert client.get("/bench/locked-write/1").status_code == 404
