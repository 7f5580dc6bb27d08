"""Recompute never holds the web request: in the embedded runtime the reports job runs in a
background thread and the button's fragment polls its moving progress."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from annotation.models import Job
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.helpers.jobs import wait_for_done
from tests.helpers.reports import game_study

pytestmark = pytest.mark.django_db(transaction=True)


def hold_the_reports(study, locked: threading.Event, release: threading.Event) -> None:
    """Lock the study's report rows from another connection: the job waits on them to replace
    them, the request that starts the job never touches them."""
    try:
        with transaction.atomic():
            list(Report.objects.select_for_update(of=("self",)).filter(study=study))
            locked.set()
            release.wait(60)
    finally:
        connection.close()


def test_recompute_answers_while_the_job_runs_in_a_thread(client, django_user_model, settings):
    settings.JOBS_IN_BACKGROUND_THREAD = True
    owner = django_user_model.objects.create_user("owner", password="pw", is_staff=True)
    client.force_login(owner)
    study = game_study(owner=owner)
    compute_study_reports(study)
    locked, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=hold_the_reports, args=(study, locked, release))
    holder.start()
    try:
        assert locked.wait(30)
        answer = client.post(f"/research/s/{study.slug}/dashboard/recompute/", HTTP_HX_REQUEST="true")
        assert answer.status_code == 202
        job = Job.objects.get(kind="reports")
        assert job.status in (Job.Status.QUEUED, Job.Status.RUNNING)  # the request did not wait for it
        fragment = answer.content.decode()
        assert 'hx-trigger="every 2s"' in fragment and "<progress" in fragment
    finally:
        release.set()
        holder.join()
    wait_for_done(job, 60)
    polled = client.get(f"/research/s/{study.slug}/dashboard/job/", HTTP_HX_REQUEST="true")
    assert polled["HX-Refresh"] == "true"
