"""Jobs that lose their worker (docs/deploy.md).

Review finding 1 (adversarial review): a job whose worker process dies, or whose database
connection drops, never stays ``running``: it is taken over or retried on a fresh connection,
and finishes once with the result an undisturbed run gives. A stalled job never blocks
*Recompute*.

Review finding 24 (adversarial review): when a whole worker is killed mid-job, the job does
not wait out the broker's visibility timeout (an hour on Redis): the sweeper requeues it once
its heartbeat stopped, and another worker finishes it once. A job that keeps killing its
workers is failed."""

from __future__ import annotations

import os
import signal
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from annotation.models import Job
from annotation.services.jobs import STALLED_ERROR, start_job, sweep_stalled_jobs
from scoring.models import Report
from scoring.services import REPORTS_JOB, compute_study_reports
from tests.celery_worker import WorkerProcesses, tasks_sent_to_the_broker
from tests.helpers.jobs import wait_until
from tests.helpers.reports import game_study

# The shortest grace the setting takes: a pool child's killed run is taken over a second
# after its last beat, and the redelivered copy waits GRACE_S + 1 before it looks (3 s of
# each such test at 2).
GRACE_S = 1
WORKER_ENV = {"JOB_HEARTBEAT_GRACE_S": str(GRACE_S), "TEST_JOB_STEP_DELAY_S": "1.5"}


@pytest.fixture(scope="module")
def workers(tmp_path_factory, django_db_setup, django_db_blocker):
    """The worker process the module's tests share (a new one after a test killed it)."""
    with django_db_blocker.unblock():  # the worker is started on the test database
        processes = WorkerProcesses(["default"], tmp_path_factory.mktemp("workers"), WORKER_ENV)
        try:
            yield processes
        finally:
            processes.close()


@pytest.fixture
def worker(workers: WorkerProcesses):
    """The module's running worker, its log read from this test on, with tasks sent to it."""
    with tasks_sent_to_the_broker():
        running = workers.live()
        running.new_log()
        yield running


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
def test_a_job_whose_pool_process_is_killed_is_taken_over_and_finishes_once(worker):
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
def test_a_job_whose_database_connection_drops_is_retried_on_a_fresh_one(worker):
    def cut_the_workers_connections():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] >= 1

    study, reference, job = run_job_and_hurt(
        worker, cut_the_workers_connections, when="Computing the figures"
    )
    log = worker.log()
    assert "OperationalError" in log, log[-3000:]  # the run saw its connection drop
    assert job.status == Job.Status.DONE, (job.error, log[-3000:])
    assert job.attempts == 2
    assert job.result["rows"] == len(reference) and report_values(study) == reference


@pytest.mark.django_db
def test_a_stalled_reports_job_never_blocks_recompute(
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


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_killed_workers_job_is_requeued_by_the_sweeper_and_finishes_once(worker, workers, settings):
    settings.JOB_HEARTBEAT_GRACE_S = int(WORKER_ENV["JOB_HEARTBEAT_GRACE_S"])
    study = game_study()
    reference = undisturbed_reports(study)
    first = worker
    job = start_job(kind=REPORTS_JOB, study=study)
    assert wait_until(lambda: Job.objects.get(pk=job.pk).message.startswith("Reading"), seconds=120)
    first.kill()
    assert Job.objects.get(pk=job.pk).status == Job.Status.RUNNING

    second = workers.live()  # a new worker: the first one is gone
    assert second is not first
    output = StringIO()
    assert wait_until(lambda: call_command("sweepjobs", stdout=output) or f"({job.pk})" in output.getvalue())
    assert wait_until(lambda: Job.objects.get(pk=job.pk).status in Job.FINISHED, seconds=120), second.log()
    done = Job.objects.get(pk=job.pk)
    assert done.status == Job.Status.DONE and done.attempts == 2, done.error
    assert report_values(study) == reference


@pytest.mark.django_db
def test_a_job_that_stalls_every_run_is_failed_not_requeued_for_ever(settings):
    settings.JOB_MAX_ATTEMPTS = 2
    silent = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_GRACE_S + 5)
    study = game_study()
    again = Job.objects.create(
        kind=REPORTS_JOB, study=study, status="running", attempts=1, heartbeat_at=silent
    )
    spent = Job.objects.create(
        kind=REPORTS_JOB, study=study, status="running", attempts=2, heartbeat_at=silent
    )
    alive = Job.objects.create(
        kind=REPORTS_JOB, study=study, status="running", attempts=1, heartbeat_at=timezone.now()
    )
    sweep = sweep_stalled_jobs()
    assert (sweep.requeued, sweep.failed) == ([again.pk], [spent.pk])
    assert Job.objects.get(pk=again.pk).status == "queued"
    spent.refresh_from_db()
    assert spent.status == "failed" and spent.error == STALLED_ERROR.format(attempts=2)
    assert Job.objects.get(pk=alive.pk).status == "running"
    assert sweep_stalled_jobs() == type(sweep)(requeued=[], failed=[])  # acts once
