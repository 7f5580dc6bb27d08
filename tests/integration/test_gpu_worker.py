"""A model-work job on a real Celery worker consuming queue ``gpu`` from Redis."""

from __future__ import annotations

import json

import pytest

from annotation.models import Item
from annotation.services.authoring.studies import ensure_study
from annotation.services.jobs import start_job
from tests.celery_worker import redis_worker_on
from tests.helpers.jobs import wait_for_done
from tests.lm_fixtures import RECORDS
from workers.tasks.editing import edit_and_generate_task


@pytest.fixture
def gpu_worker():
    """A worker listening to queue ``gpu`` only: model work must be routed there."""
    with redis_worker_on(["gpu"]):
        yield


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
    job = wait_for_done(start_job(kind="edit_and_generate", parameters=parameters, study=study))

    assert (job.progress_done, job.progress_total) == (2, 2) and job.heartbeat_at is not None
    assert job.message.startswith("case tolvik done")
    assert job.attempts == 1 and job.started_at <= job.heartbeat_at <= job.finished_at
    assert job.result["added"] == Item.objects.filter(study=study).count() == 2 * 2 * 3 + 2 * 3
