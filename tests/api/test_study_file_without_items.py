"""Review finding 13 (adversarial review): ``/research/studies/new/`` answered 500 for a study
file with no ``items`` or an empty list: the template looped over ``errors.items``, which
Django resolved to the error under the key "items" instead of the dict's method. Now a 400 that
names ``items``, on the page as in the API (both through ``load_study_file``)."""

from __future__ import annotations

import pytest

from tests.conftest import claim_study_file
from tests.helpers.uploads import error_cells, row_counts, upload_page

pytestmark = pytest.mark.django_db
MESSAGE = "A study file needs a non-empty list of items."


def without_items() -> dict:
    data = claim_study_file(slug="no-items")
    del data["items"]
    return data


@pytest.mark.parametrize("data", [without_items(), {**claim_study_file(slug="no-items"), "items": []}])
def test_a_study_file_without_items_is_a_400_naming_items(client, client_for, users, data):
    before = row_counts()
    client.force_login(users["owner"])
    page = upload_page(client, data)
    assert page.status_code == 400
    assert f"<td>items</td><td>{MESSAGE}</td>" in error_cells(page)
    api = client_for("owner").post("/api/v1/studies/", data, format="json")
    assert api.status_code == 400 and api.json() == {"items": [MESSAGE]}
    assert row_counts() == before
