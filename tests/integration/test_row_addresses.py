"""A step's later statements look for its rows where the gate read them, and by key when
the rows have moved since (``annotation.services.row_addresses``): the address saves an
index look-up, never decides which row a statement acts on."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import F

from annotation.models import Assignment, Enrollment, Item, Response
from annotation.services import row_addresses
from annotation.services.access import require_live_step
from annotation.services.assignment import assign_next_item
from annotation.services.capacity import _slots_taken
from annotation.services.participants import count_answers
from annotation.services.studies import load_study_file
from annotation.services.submission import submit_response
from tests.conftest import claim_study_file
from tests.integration.test_query_counts import SUPPORTS

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's row addresses"),
]


@pytest.fixture
def step(enrolled):
    """A participant's page handed out, then read by the gate as the answer's request reads it."""
    study = load_study_file(claim_study_file(slug="addresses", items=4, annotations_per_item=2)).study
    participant = enrolled(study)
    page = assign_next_item(participant=participant, study=study)
    return require_live_step(
        slug=study.slug, user=AnonymousUser(), participant_id=participant.pk, assignment_id=page.pk
    )


def _address_now(model, pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT ctid::text FROM {model._meta.db_table} WHERE id = %s", [pk])  # noqa: S608
        return cursor.fetchone()[0]


def test_the_gate_reads_where_each_row_lies(step):
    assert row_addresses.address_of(step.enrollment) == _address_now(Enrollment, step.enrollment.pk)
    assert row_addresses.address_of(step.assignment) == _address_now(Assignment, step.assignment.pk)
    assert row_addresses.address_of(step.assignment.item) == _address_now(Item, step.assignment.item_id)


def test_rows_changed_after_the_gate_read_them_are_answered_by_key(step):
    """Another request moves the page, its item and the enrollment between the gate and
    the answer: the answer still claims the page, counts on the enrollment and reads the
    item's slots as they are now."""
    enrollment, page = step.enrollment, step.assignment
    Enrollment.objects.filter(pk=enrollment.pk).update(points_total=F("points_total") + 1)
    Assignment.objects.filter(pk=page.pk).update(attempt=F("attempt") + 0)
    Item.objects.filter(pk=page.item_id).update(slots_taken=F("slots_taken") + 1)
    assert row_addresses.address_of(enrollment) != _address_now(Enrollment, enrollment.pk)
    assert row_addresses.address_of(page) != _address_now(Assignment, page.pk)

    result = submit_response(assignment=page, answer=SUPPORTS, enrollment=enrollment)

    assert result.created
    assert Assignment.objects.get(pk=page.pk).status == Assignment.Status.ANSWERED
    assert Response.objects.filter(assignment=page).count() == 1
    counted = Enrollment.objects.get(pk=enrollment.pk)
    assert (counted.answered_count, counted.points_total) == (1, 1)
    assert _slots_taken(page.item) == 2  # the moved item's count, not the gate's 1


def test_an_address_that_now_holds_another_row_changes_nothing_of_it(step, enrolled):
    """An address is only ever a place to look: the key conditions stay, so a statement
    sent to another row's address acts on its own row, found by key."""
    other = Enrollment.objects.get(participant=enrolled(step.study), study=step.study)
    before = other.answered_count
    count_answers(
        participant_id=step.enrollment.participant_id,
        study_id=step.study.pk,
        answers=1,
        points=0,
        address=_address_now(Enrollment, other.pk),
    )
    assert Enrollment.objects.get(pk=other.pk).answered_count == before
    assert Enrollment.objects.get(pk=step.enrollment.pk).answered_count == 1


def test_a_second_submit_of_an_answered_page_stores_nothing_more(step):
    page, enrollment = step.assignment, step.enrollment
    first = submit_response(assignment=page, answer=SUPPORTS, enrollment=enrollment)
    again = submit_response(assignment=page, answer=SUPPORTS, enrollment=enrollment)
    assert first.created and not again.created and again.response.pk == first.response.pk
    assert Enrollment.objects.get(pk=enrollment.pk).answered_count == 1


def test_a_fetch_whose_enrollment_moved_after_the_gate_locks_it_by_key(enrolled):
    """The fetch's lock and the read of pages it serialises go again, together, when the
    enrollment has a new version since the gate read it."""
    study = load_study_file(claim_study_file(slug="moved", items=4, annotations_per_item=2)).study
    participant = enrolled(study)
    step = require_live_step(slug=study.slug, user=AnonymousUser(), participant_id=participant.pk)
    Enrollment.objects.filter(pk=step.enrollment.pk).update(points_total=F("points_total") + 1)
    assert row_addresses.address_of(step.enrollment) != _address_now(Enrollment, step.enrollment.pk)

    page = assign_next_item(participant=participant, study=study, enrollment=step.enrollment)

    assert page is not None and page.position == 1
    again = assign_next_item(participant=participant, study=study, enrollment=step.enrollment)
    assert again.pk == page.pk  # the page read after the lock: resumed, not a second one
