"""A real Celery worker consuming from Redis runs the periodic release of assignments."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from annotation.models import Assignment, Item
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from roft_site.celery import app
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory
from tests.helpers.jobs import wait_until
from workers.tasks.assignments import release_expired_assignments_task


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_release_task_runs_on_a_real_worker(redis_worker):
    study = load_study_file(claim_study_file(items=1, annotations_per_item=1)).study
    participant = ParticipantFactory(enrolled_in=study)
    assignment = assign_next_item(participant=participant, study=study)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=5))

    release_expired_assignments_task.apply_async()

    assert wait_until(lambda: Assignment.objects.get(pk=assignment.pk).status == "expired")
    assert Item.objects.get().slots_taken == 0


def test_beat_schedules_the_release_on_the_default_queue():
    app.loader.import_default_modules()
    entry = app.conf.beat_schedule["release-expired-assignments"]
    assert entry["task"] == release_expired_assignments_task.name
    assert entry["schedule"] == settings.RELEASE_EXPIRED_EVERY_SECONDS
    route = app.amqp.router.route(
        {}, release_expired_assignments_task.name, task_type=release_expired_assignments_task
    )
    assert route["queue"].name == "default"


def test_gpu_tasks_route_to_the_gpu_queue():
    from roft_site.celery import route_task

    class GpuTask:
        uses_gpu = True

    assert route_task("x", (), {}, {}, task=GpuTask()) == {"queue": "gpu"}
    assert route_task("x", (), {}, {}, task=object()) == {"queue": "default"}
