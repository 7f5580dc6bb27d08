"""An assignment's one composite key to its item (migration 0021) keeps what its two keys kept.

On PostgreSQL an assignment refers to its item with (item, study) instead of one foreign
key per column: the item must exist and the page's study must be the item's own (the
item's key to its study keeps the study). Deleting a study or an item still removes their
pages (Django's ``on_delete``). The keys are deferred to commit; each test asks PostgreSQL
to check them at once (``SET CONSTRAINTS ALL IMMEDIATE``).
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from annotation.models import Assignment, Item, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from tests.conftest import claim_study_file

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's composite key")


@pytest.fixture
def handed_out(enrolled) -> Assignment:
    """One page handed out (its assignment), and a second study with its own items."""
    study = load_study_file(claim_study_file(slug="page-key")).study
    assigned = assign_next_item(participant=enrolled(study), study=study)
    load_study_file(claim_study_file(slug="page-key-other"))
    return assigned


def check_keys_now() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.django_db
@pytest.mark.parametrize("column", ["study_id", "item_id"])
def test_an_assignment_must_name_an_item_of_its_own_study(handed_out, column):
    others = {
        "study_id": Study.objects.get(slug="page-key-other").pk,
        "item_id": Item.objects.filter(study__slug="page-key-other").first().pk,
    }
    with pytest.raises(IntegrityError, match="assignment_same_study_as_item"), transaction.atomic():
        Assignment.objects.filter(pk=handed_out.pk).update(**{column: others[column]})
        check_keys_now()


@pytest.mark.django_db
def test_an_assignment_must_name_an_existing_item(handed_out):
    missing = Item.objects.order_by("-pk").first().pk + 1000
    with pytest.raises(IntegrityError, match="assignment_same_study_as_item"), transaction.atomic():
        Assignment.objects.filter(pk=handed_out.pk).update(item_id=missing)
        check_keys_now()


@pytest.mark.django_db
def test_an_assignment_of_its_items_study_is_kept(handed_out):
    with transaction.atomic():
        Assignment.objects.filter(pk=handed_out.pk).update(
            item_id=handed_out.item_id, study_id=handed_out.study_id
        )
        check_keys_now()
    assert Assignment.objects.filter(pk=handed_out.pk, item=handed_out.item, study=handed_out.study).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("owner", [lambda a: a.study, lambda a: a.item], ids=["study", "item"])
def test_deleting_what_an_assignment_names_deletes_the_assignment(handed_out, owner):
    with transaction.atomic():
        owner(handed_out).delete()
        check_keys_now()
    assert not Assignment.objects.filter(pk=handed_out.pk).exists()
