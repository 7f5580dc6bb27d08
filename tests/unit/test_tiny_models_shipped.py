"""The committed tiny models (``tests/data/tiny-models``) are the builds of the current recipes:
a recipe changed without ``python -m tests.tiny_models --ship`` fails here, by name, rather
than quietly training its model in every run."""

from __future__ import annotations

import pytest

from tests.tiny_models import RECIPES, built_model, shipped_builds, shipped_model


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_current_recipe_of_every_tiny_model_is_shipped_and_read_from_the_repository(name):
    assert (shipped_model(name) / RECIPES[name].marker).is_file(), (
        f"{name}'s recipe changed: run `python -m tests.tiny_models --ship` and commit tests/data/tiny-models"
    )
    assert built_model(name) == shipped_model(name)
    assert shipped_builds(name) == [shipped_model(name)], f"{name}: an older build is still shipped"
