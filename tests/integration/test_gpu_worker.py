"""A model-work job on a real Celery worker consuming queue ``gpu`` from Redis."""

from __future__ import annotations

import json
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings

from annotation.models import Item, Job
from annotation.services.jobs import start_job
from annotation.services.studies import ensure_study
from roft_site.celery import app
from tests.lm_fixtures import RECORDS
from workers.tasks.editing import edit_and_generate_task


@pytest.fixture
def gpu_worker():
    """A worker thread on the Redis broker listening to queue ``gpu`` only."""
    assert settings.CELERY_BROKER_URL.startswith("redis://"), "the worker test needs Redis"
    app.conf.task_always_eager = False
    app.control.purge()
    try:
        with start_worker(app, pool="solo", queues=["gpu"], perform_ping_check=False, shutdown_timeout=30):
            yield
    finally:
        app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_edit_job_reports_progress_and_finishes_on_the_gpu_queue(worker_settings, gpu_worker, tmp_path):
    assert edit_and_generate_task.uses_gpu and edit_and_generate_task.acks_late
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps(RECORDS[0]))
    study = ensure_study(slug="leme-worker", kind="claim")
    parameters = {
        "requests": str(requests),
        "model": "tiny-gpt2",
        "methods": ["none", "rome"],
        "max_new_tokens": 16,
    }
    job = start_job(kind="edit_and_generate", parameters=parameters, study=study)

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in Job.FINISHED:
            break
        time.sleep(0.2)

    assert job.status == "done", job.error
    assert (job.progress_done, job.progress_total) == (2, 2) and job.heartbeat_at is not None
    assert job.message.startswith("case tolvik done")
    assert job.attempts == 1 and job.started_at <= job.heartbeat_at <= job.finished_at
    assert job.result["added"] == Item.objects.filter(study=study).count() == 2 * 2 * 3 + 2 * 3
