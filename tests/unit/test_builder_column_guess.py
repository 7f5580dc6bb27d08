"""U24: the builder's column table recognises a spreadsheet's common id column names."""

import pytest

from annotation.research.views.builder_form import guessed_role


@pytest.mark.parametrize("name", ["id", "item_id", "ID", "Item_ID", " item_id ", "external_id"])
def test_common_id_column_names_are_the_id(name):
    assert guessed_role(name) == ("id", "")


@pytest.mark.parametrize("name", ["prompt", "items", "identity"])
def test_other_names_are_not_the_id(name):
    assert guessed_role(name)[0] != "id"
