"""Rows written once for a module (tests/helpers/module_data.py): each test sees them as
written, whatever an earlier test changed, and no row outlives the module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from annotation.models import Study
from tests.factories import StudyFactory
from tests.helpers.module_data import rows_for_the_module

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def shared(django_db_setup, django_db_blocker) -> Iterator[int]:
    with rows_for_the_module(django_db_blocker):
        yield StudyFactory(slug="shared", title="As written").pk
    with django_db_blocker.unblock():
        assert not Study.objects.filter(slug="shared").exists()  # rolled back with the module


def test_a_test_changes_and_deletes_the_modules_rows(shared):
    Study.objects.filter(pk=shared).update(title="Changed")
    StudyFactory(slug="mine")
    Study.objects.filter(pk=shared).delete()
    assert not Study.objects.filter(pk=shared).exists()


def test_the_next_test_sees_them_as_written_and_none_of_the_last_ones(shared):
    assert Study.objects.get(pk=shared).title == "As written"
    assert not Study.objects.filter(slug="mine").exists()
