"""A response's one composite key (migration 0019) keeps what its four keys kept.

On PostgreSQL a response refers to its assignment with (assignment, study, item,
participant) instead of one foreign key per column: the assignment must exist and the
copies must be its own. Deleting a study, an item, a participant or an assignment still
removes their responses (Django's ``on_delete``). The keys are deferred to commit; each
test asks PostgreSQL to check them at once (``SET CONSTRAINTS ALL IMMEDIATE``).
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from annotation.models import Assignment, Item, Participant, Response, Study
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.helpers.flow import answer_pages
from tests.integration.test_query_counts import SUPPORTS

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's composite key")


@pytest.fixture
def stored_answer(enrolled) -> Response:
    """One stored answer, and a second study with its own item and participant."""
    study = load_study_file(claim_study_file(slug="key")).study
    answer_pages(study, enrolled(study), SUPPORTS, 1)
    other = load_study_file(claim_study_file(slug="key-other")).study
    enrolled(other)
    return Response.objects.get(study=study)


def check_keys_now() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def copy_of(response: Response, **changes) -> None:
    """Write a second response to the same assignment's columns, with ``changes``."""
    Response.objects.filter(pk=response.pk).delete()
    fields = {
        "assignment_id": response.assignment_id,
        "study_id": response.study_id,
        "item_id": response.item_id,
        "participant_id": response.participant_id,
        "answer": response.answer,
        "answered_at": response.answered_at,
    }
    Response.objects.create(**{**fields, **changes})


@pytest.mark.django_db
@pytest.mark.parametrize("column", ["study_id", "item_id", "participant_id", "assignment_id"])
def test_a_response_must_copy_its_assignments_study_item_and_participant(stored_answer, column):
    others = {
        "study_id": Study.objects.get(slug="key-other").pk,
        "item_id": Item.objects.filter(study__slug="key-other").first().pk,
        "participant_id": Participant.objects.filter(enrollments__study__slug="key-other").get().pk,
        "assignment_id": Assignment.objects.order_by("-pk").first().pk + 1000,  # none such
    }
    with pytest.raises(IntegrityError, match="response_same_as_assignment"), transaction.atomic():
        copy_of(stored_answer, **{column: others[column]})
        check_keys_now()


@pytest.mark.django_db
def test_a_response_with_its_assignments_columns_is_kept(stored_answer):
    with transaction.atomic():
        copy_of(stored_answer)
        check_keys_now()
    assert Response.objects.filter(assignment_id=stored_answer.assignment_id).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "owner",
    [
        lambda response: response.study,
        lambda response: response.item,
        lambda response: response.participant,
        lambda response: response.assignment,
    ],
    ids=["study", "item", "participant", "assignment"],
)
def test_deleting_what_a_response_names_deletes_the_response(stored_answer, owner):
    with transaction.atomic():
        owner(stored_answer).delete()
        check_keys_now()
    assert not Response.objects.filter(pk=stored_answer.pk).exists()
