"""Reports jobs on a real Celery worker consuming from Redis, started by the periodic check."""

import pytest
from django.conf import settings

from annotation.models import Job
from annotation.services.jobs import start_job
from roft_site.celery import app
from scoring.models import Report
from tests.helpers.jobs import wait_for_done, wait_until
from tests.helpers.reports import game_study
from workers.tasks.reports import compute_study_reports_task, refresh_live_study_reports_task


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_reports_job_runs_on_a_real_worker(redis_worker):
    study = game_study()
    job = start_job(kind="reports", study=study)
    done = wait_for_done(job, 60)
    assert done.result["rows"] == Report.objects.filter(study=study).count() > 0
    assert done.progress_done == done.progress_total > 0  # the bar ends full
    # the periodic check finds nothing to do now, then a live study with new answers
    assert refresh_live_study_reports_task() == 0
    study.responses.filter(participant__platform_worker_id="dan").delete()
    assert refresh_live_study_reports_task() == 1
    assert refresh_live_study_reports_task() == 0  # its job is already queued or running
    assert wait_until(lambda: not Job.objects.exclude(status=Job.Status.DONE).exists(), seconds=60)
    assert Report.objects.get(study=study, population="all", metric="progress.responses", group={}).value == 8


def test_beat_schedules_the_refresh_on_the_default_queue():
    app.loader.import_default_modules()
    entry = app.conf.beat_schedule["refresh-study-reports"]
    assert entry["task"] == refresh_live_study_reports_task.name
    assert entry["schedule"] == settings.REPORTS_REFRESH_SECONDS
    route = app.amqp.router.route({}, compute_study_reports_task.name, task_type=compute_study_reports_task)
    assert route["queue"].name == "default"
