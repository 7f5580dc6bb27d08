"""The admin's study list: the items column is headed "items" and sorts by the count (its
display settings once sat on the wrong method, so the column had neither)."""

import pytest

from tests.factories import ItemFactory, StudyFactory

pytestmark = pytest.mark.django_db


def test_the_items_column_is_named_and_sorts_by_the_count(client, django_user_model):
    few, many = StudyFactory(slug="few-items"), StudyFactory(slug="many-items")
    ItemFactory(study=few)
    ItemFactory.create_batch(3, study=many)
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-for-tests-only"))
    column = ["slug", "title", "kind", "status", "public", "item_count"].index("item_count") + 1

    listing = client.get("/admin/annotation/study/").content.decode()
    assert 'class="sortable column-item_count' in listing
    ascending = client.get(f"/admin/annotation/study/?o={column}").content.decode()
    descending = client.get(f"/admin/annotation/study/?o=-{column}").content.decode()
    assert ascending.index("few-items") < ascending.index("many-items")
    assert descending.index("many-items") < descending.index("few-items")
