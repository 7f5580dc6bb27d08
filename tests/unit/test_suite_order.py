"""The order the suite runs in: slow model-free modules first, tests waiting for a model
the cache lacks last (``tests/conftest.py``)."""

from __future__ import annotations

from types import SimpleNamespace

import tests.conftest as suite

ITEMS = [
    ("tests/integration/test_simulation_pipeline.py::a", ["sim_settings", "tiny_sim_registry"]),
    ("tests/unit/test_editing.py::b", ["tiny_registry", "tiny_lm_dir"]),
    ("tests/integration/test_web_only_install.py::c", []),
    ("tests/api/test_studies.py::d", ["client"]),
]


def ordered(monkeypatch, built) -> list[str]:
    monkeypatch.setattr(suite, "is_built", built)
    items = [SimpleNamespace(nodeid=nodeid, fixturenames=names) for nodeid, names in ITEMS]
    suite.pytest_collection_modifyitems(items)
    return [item.nodeid.rsplit("::", 1)[1] for item in items]


def test_a_test_waiting_for_a_model_not_built_yet_goes_last(monkeypatch):
    assert ordered(monkeypatch, lambda model: model != "tiny-sim-gpt2") == ["c", "b", "d", "a"]


def test_with_every_model_built_only_the_slow_modules_move(monkeypatch):
    assert ordered(monkeypatch, lambda model: True) == ["c", "a", "b", "d"]
