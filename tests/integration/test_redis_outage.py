"""N8: with Redis down, participant entries, consent, a session under way, the login form and
the API token request answered 500 (the session store and the rate limiter raised), and
/healthz stayed 200. Now the cache degrades to "no cache": sessions are read from and written
to the database, the rate limits pause, and /healthz answers 503 naming Redis. The test runs
its own redis-server on a free port and kills it."""

from __future__ import annotations

import socket
import subprocess

import pytest
from django.test import Client

from annotation.models import Participant
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import researcher_user
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start, task_action
from tests.helpers.jobs import wait_until

pytestmark = pytest.mark.django_db


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def own_redis(settings):
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return False
        return True

    assert wait_until(listening, 10, step=0.05), "redis-server did not start"
    settings.CACHES = {
        "default": {
            "BACKEND": "roft_site.redis_cache.SharedClientRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2},
        }
    }
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    yield server
    if server.poll() is None:
        server.kill()
        server.wait()


def stop(server: subprocess.Popen) -> None:
    server.kill()
    server.wait()


def test_participants_and_logins_go_on_while_redis_is_down(own_redis, django_user_model):
    study = load_study_file(claim_study_file(slug="claims-outage")).study
    researcher_user("alice", password="pw-alice-1")  # API access
    before = Client()
    first_page = start(before, study.slug, f"?PROLIFIC_PID={prolific_id('before-outage')}")
    assert Client().get("/healthz").status_code == 200

    stop(own_redis)

    health = Client().get("/healthz")
    assert health.status_code == 503 and b"redis" in health.content
    # A session from before the outage still holds its page (read from the database).
    again = before.get(f"/s/{study.slug}/task/")
    assert again.status_code == 200 and task_action(again.content.decode()) == task_action(first_page)
    # A new participant enters and consents.
    newcomer = Client()
    page = start(newcomer, study.slug, f"?PROLIFIC_PID={prolific_id('during-outage')}")
    assert task_action(page)
    assert Participant.objects.filter(platform_worker_id=prolific_id("during-outage")).exists()
    # The login form and the API token.
    login = Client().post("/accounts/login/", {"username": "alice", "password": "pw-alice-1"})
    assert login.status_code == 302
    token = Client().post(
        "/api/v1/auth/token/",
        {"username": "alice", "password": "pw-alice-1"},
        content_type="application/json",
    )
    assert token.status_code in (200, 201), token.content
