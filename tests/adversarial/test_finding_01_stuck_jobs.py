"""Finding 1: a job whose worker process dies, or whose database connection drops, never
stays ``running``: it is taken over or retried on a fresh connection, and finishes once with
the result an undisturbed run gives. A stalled job never blocks *Recompute*."""

from __future__ import annotations

import os
import signal
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Job
from annotation.services.jobs import start_job
from scoring.models import Report
from scoring.services import REPORTS_JOB, compute_study_reports
from tests.celery_worker import worker_process
from tests.helpers.jobs import wait_until
from tests.helpers.reports import game_study

GRACE_S = 2
WORKER_ENV = {"JOB_HEARTBEAT_GRACE_S": str(GRACE_S), "TEST_JOB_STEP_DELAY_S": "1.5"}


def report_values(study) -> list[tuple]:
    rows = Report.objects.filter(study=study).values_list("population", "metric", "group", "value", "n")
    return sorted((p, m, sorted(g.items()), v, n) for p, m, g, v, n in rows)


def undisturbed_reports(study) -> list[tuple]:
    """The reports of the study as one undisturbed run computes them (then cleared again)."""
    compute_study_reports(study)
    reference = report_values(study)
    Report.objects.filter(study=study).delete()
    assert reference
    return reference


def run_job_and_hurt(worker, hurt, *, when: str):
    """Start the study's reports job, call ``hurt`` once its progress message begins with
    ``when``, and wait until it finished; the study and the finished job."""
    study = game_study()
    reference = undisturbed_reports(study)
    job = start_job(kind=REPORTS_JOB, study=study)
    assert wait_until(lambda: Job.objects.get(pk=job.pk).message.startswith(when), seconds=120), worker.log()
    hurt()
    assert wait_until(lambda: Job.objects.get(pk=job.pk).status in Job.FINISHED, seconds=180), worker.log()
    return study, reference, Job.objects.get(pk=job.pk)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_finding_01_a_job_whose_pool_process_is_killed_is_taken_over_and_finishes_once(tmp_path):
    with worker_process(["default"], tmp_path / "worker.log", WORKER_ENV) as worker:
        (child,) = worker.pool_children()
        study, reference, job = run_job_and_hurt(
            worker, lambda: os.kill(child, signal.SIGKILL), when="Reading the responses"
        )
        log = worker.log()
    assert "WorkerLostError" in log or "SIGKILL" in log, log[-3000:]
    assert job.status == Job.Status.DONE, (job.error, log[-3000:])
    assert job.attempts == 2  # the killed run, then the one that took it over
    assert job.result["rows"] == len(reference) and report_values(study) == reference


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_finding_01_a_job_whose_database_connection_drops_is_retried_on_a_fresh_one(tmp_path):
    def cut_the_workers_connections():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] >= 1

    with worker_process(["default"], tmp_path / "worker.log", WORKER_ENV) as worker:
        study, reference, job = run_job_and_hurt(
            worker, cut_the_workers_connections, when="Computing the figures"
        )
        log = worker.log()
    assert "OperationalError" in log, log[-3000:]  # the run saw its connection drop
    assert job.status == Job.Status.DONE, (job.error, log[-3000:])
    assert job.attempts == 2
    assert job.result["rows"] == len(reference) and report_values(study) == reference


@pytest.mark.django_db
def test_finding_01_a_stalled_reports_job_never_blocks_recompute(
    client, django_user_model, django_capture_on_commit_callbacks
):
    owner = django_user_model.objects.create_user("owner", password="pw", is_staff=True)
    study = game_study(owner=owner)
    stuck = Job.objects.create(
        kind=REPORTS_JOB,
        study=study,
        status=Job.Status.RUNNING,
        attempts=1,
        heartbeat_at=timezone.now() - timedelta(minutes=5),  # its worker died five minutes ago
    )
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(f"/research/s/{study.slug}/dashboard/recompute/", HTTP_HX_REQUEST="true")
    assert answer.status_code in (200, 202)
    stuck.refresh_from_db()
    assert stuck.status == Job.Status.DONE and stuck.attempts == 2
    assert Report.objects.filter(study=study).exists()
