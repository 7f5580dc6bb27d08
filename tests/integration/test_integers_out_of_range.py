"""An integer its column cannot hold is refused by the ORM, never stored as another number.

Under psycopg 3's server-side binding Django sends integer fields as ``Int4``/``Int8``, and
those keep only the value's low bits: 4,294,967,297 cents were stored as 1 cent with no
error (red-team round 4, T3). ``roft_site/postgresql`` checks each value against its
column's range first; these tests write through ``save()``, ``QuerySet.update()`` and an
expression, for each integer type, and expect an error and the old value kept."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction
from django.db.models import IntegerField, Value

from annotation.models import PlatformStudy, Study
from scoring.models import ItemColumns
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def refused(write) -> str:
    """Run ``write`` in a savepoint; the message of the error it must raise."""
    with pytest.raises(DataError) as error, transaction.atomic():
        write()
    return str(error.value)


@pytest.mark.parametrize("value", [2**31, 2**32 + 1, -1])
def test_a_positive_integer_field_out_of_range_is_refused_by_save_and_update(value):
    study = StudyFactory(items_per_session=7)
    study.items_per_session = value
    assert "PositiveIntegerField" in refused(study.save)
    update = Study.objects.filter(pk=study.pk).update
    assert "out of range" in refused(lambda: update(items_per_session=value))
    assert Study.objects.get(pk=study.pk).items_per_session == 7


def test_the_bonus_cap_of_the_report_is_refused_not_stored_as_one_cent():
    record = PlatformStudy.objects.create(study=StudyFactory(), bonus_cap_cents=200)
    refused(lambda: PlatformStudy.objects.filter(pk=record.pk).update(bonus_cap_cents=4294967297))
    record.bonus_cap_cents = 99999999999
    refused(record.save)
    assert PlatformStudy.objects.get(pk=record.pk).bonus_cap_cents == 200


def test_a_big_integer_field_out_of_range_is_refused():
    study = StudyFactory()
    columns, _ = ItemColumns.objects.get_or_create(study=study)
    before = columns.version
    assert "BigIntegerField" in refused(lambda: ItemColumns.objects.filter(pk=study.pk).update(version=2**63))
    columns.version = -(2**63) - 1
    refused(columns.save)
    assert ItemColumns.objects.get(pk=study.pk).version == before


def test_an_integer_field_expression_out_of_range_is_refused():
    record = PlatformStudy.objects.create(study=StudyFactory(), bonus_cap_cents=5)
    message = refused(
        lambda: PlatformStudy.objects.filter(pk=record.pk).update(
            bonus_cap_cents=Value(2**31, output_field=IntegerField())
        )
    )
    assert "IntegerField" in message
    assert PlatformStudy.objects.get(pk=record.pk).bonus_cap_cents == 5


def test_values_at_the_edges_of_each_range_are_stored_as_they_are():
    study = StudyFactory()
    Study.objects.filter(pk=study.pk).update(items_per_session=2**31 - 1)
    assert Study.objects.get(pk=study.pk).items_per_session == 2**31 - 1
    ItemColumns.objects.get_or_create(study=study)
    ItemColumns.objects.filter(pk=study.pk).update(version=2**63 - 1)
    assert ItemColumns.objects.get(pk=study.pk).version == 2**63 - 1


def test_a_filter_on_an_out_of_range_value_still_matches_nothing():
    """Django's lookups turn an impossible value into an empty result before any adaptation."""
    StudyFactory()
    assert not Study.objects.filter(items_per_session=2**40).exists()
    assert connection.vendor == "postgresql"
