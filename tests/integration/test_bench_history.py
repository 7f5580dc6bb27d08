"""The bench's used site (``bench.load.make_history``), written by COPY, holds the rows the
ORM would have written: every column of a page and an enrollment as ``save()`` prepares it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.forms.models import model_to_dict

from annotation.models import Assignment, Enrollment, Item, Participant, Study
from bench.load import make_history

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="COPY is PostgreSQL's"),
]

PEOPLE, PAGES = 30, 4


def columns_of(row, *left_out: str) -> dict:
    """A row's editable columns as the ORM reads them back, without its id and ``left_out``
    (``auto_now_add`` times differ by when each row was written)."""
    return model_to_dict(row, exclude=["id", *left_out])


def test_a_used_site_has_each_participant_enrolled_with_their_answered_pages():
    make_history("history", PEOPLE, PAGES)
    study = Study.objects.get(slug="history")
    items = list(Item.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))
    enrollments = Enrollment.objects.filter(study=study).order_by("participant_id")
    assert enrollments.count() == Participant.objects.count() == PEOPLE
    assert {(e.status, e.answered_count) for e in enrollments} == {(Enrollment.Status.COMPLETED, PAGES)}
    pages = list(Assignment.objects.filter(study=study).order_by("participant_id", "position"))
    assert len(pages) == PEOPLE * PAGES
    people = [e.participant_id for e in enrollments]
    expected = [
        (person, items[(n * PAGES + position) % len(items)], position + 1)
        for n, person in enumerate(people)
        for position in range(PAGES)
    ]
    assert [(p.participant_id, p.item_id, p.position) for p in pages] == expected

    # Every other column as the ORM writes it (defaults, JSON, NULLs, times).
    when = pages[0].assigned_at
    saved = Assignment.objects.create(
        study=study,
        item_id=items[0],
        participant=Participant.objects.create(),
        position=PAGES + 1,
        status=Assignment.Status.ANSWERED,
        assigned_at=when,
        expires_at=when,
        answered_at=when,
    )
    saved.refresh_from_db()
    varying = ("participant", "item", "position")
    assert all(columns_of(page, *varying) == columns_of(saved, *varying) for page in pages)
    enrolled = Enrollment.objects.create(
        participant=saved.participant, study=study, status=Enrollment.Status.COMPLETED, answered_count=PAGES
    )
    enrolled.refresh_from_db()
    assert all(columns_of(e, "participant") == columns_of(enrolled, "participant") for e in enrollments)
