"""Finding 24: when a whole worker is killed mid-job, the job does not wait out the broker's
visibility timeout (an hour on Redis): the sweeper requeues it once its heartbeat stopped,
and another worker finishes it once. A job that keeps killing its workers is failed."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Job
from annotation.services.jobs import STALLED_ERROR, sweep_stalled_jobs
from scoring.services import REPORTS_JOB
from tests.adversarial.test_finding_01_stuck_jobs import WORKER_ENV, report_values, undisturbed_reports
from tests.celery_worker import worker_process
from tests.helpers.jobs import wait_until
from tests.helpers.reports import game_study


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_finding_24_a_killed_workers_job_is_requeued_by_the_sweeper_and_finishes_once(tmp_path, settings):
    settings.JOB_HEARTBEAT_GRACE_S = int(WORKER_ENV["JOB_HEARTBEAT_GRACE_S"])
    study = game_study()
    reference = undisturbed_reports(study)
    with worker_process(["default"], tmp_path / "first.log", WORKER_ENV) as first:
        from annotation.services.jobs import start_job

        job = start_job(kind=REPORTS_JOB, study=study)
        assert wait_until(lambda: Job.objects.get(pk=job.pk).message.startswith("Reading"), seconds=120)
        first.kill()
    assert Job.objects.get(pk=job.pk).status == Job.Status.RUNNING

    with worker_process(["default"], tmp_path / "second.log", WORKER_ENV) as second:
        output = StringIO()
        assert wait_until(
            lambda: call_command("sweepjobs", stdout=output) or f"({job.pk})" in output.getvalue()
        )
        assert wait_until(lambda: Job.objects.get(pk=job.pk).status in Job.FINISHED, seconds=120), (
            second.log()
        )
    done = Job.objects.get(pk=job.pk)
    assert done.status == Job.Status.DONE and done.attempts == 2, done.error
    assert report_values(study) == reference


@pytest.mark.django_db
def test_finding_24_a_job_that_stalls_every_run_is_failed_not_requeued_for_ever(settings):
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
