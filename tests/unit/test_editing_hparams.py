"""Editing hyperparameters: typed per method, so a file's mistake is an error at load time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lm_fixtures import HPARAMS_DIR
from workers.editing import METHODS
from workers.editing.hparams import (
    BUNDLED,
    HPARAMS,
    HparamsError,
    MemitHparams,
    RomeHparams,
    load_hparams,
    read_hparams_file,
)

SHIPPED = sorted([*BUNDLED.glob("*/*.json"), *HPARAMS_DIR.glob("*/*.json")])


def rome_values(**changes) -> dict:
    """The bundled ROME defaults with ``changes`` (a key set to ``...`` is removed)."""
    values = json.loads((BUNDLED / "rome" / "default.json").read_text())
    values.update(changes)
    return {key: value for key, value in values.items() if value is not ...}


def write(directory: Path, method: str, name: str, values: dict) -> None:
    (directory / method).mkdir(exist_ok=True)
    (directory / method / f"{name}.json").write_text(json.dumps(values))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_every_shipped_file_loads_as_its_methods_dataclass(path):
    hparams = read_hparams_file(path.parent.name, path).for_model(num_layers=48)
    assert type(hparams) is HPARAMS[path.parent.name] and hparams.file == path.name


def test_every_method_has_a_hyperparameter_class():
    assert set(HPARAMS) == set(METHODS)


def test_a_misspelled_key_is_refused_naming_the_key_and_the_method(tmp_path, settings):
    settings.EDITING_HPARAMS_DIR = str(tmp_path)
    write(tmp_path, "rome", "small", rome_values(layer=1, v_lrr=0.1))
    with pytest.raises(
        HparamsError, match=r"small\.json: Unknown rome hyperparameter 'v_lrr' \(did you mean 'v_lr'\?\)"
    ):
        load_hparams("rome", keys=["small"], num_layers=4)
    write(tmp_path, "memit", "small", {"version": 1, "demonstrations": 2})
    with pytest.raises(HparamsError, match="Unknown memit hyperparameter 'demonstrations'"):
        load_hparams("memit", keys=["small"], num_layers=4)


def test_missing_keys_and_wrong_types_are_refused_naming_the_key():
    with pytest.raises(HparamsError, match="Missing rome hyperparameter 'v_steps'"):
        RomeHparams.from_dict(rome_values(v_steps=...))
    with pytest.raises(HparamsError, match="rome hyperparameter 'v_steps' must be an int, not '20'"):
        RomeHparams.from_dict(rome_values(v_steps="20"))
    with pytest.raises(HparamsError, match="rome hyperparameter 'fact_token' must be one of"):
        RomeHparams.from_dict(rome_values(fact_token="subject"))
    with pytest.raises(HparamsError, match="rome hyperparameter 'context_templates' must have 2 values"):
        RomeHparams.from_dict(rome_values(context_templates=[[5, 10, 1]]))


def test_values_are_typed_and_immutable():
    hparams = RomeHparams.from_dict(rome_values(v_lr=1, layer=3))
    assert hparams.v_lr == 1.0 and isinstance(hparams.v_lr, float)
    assert hparams.context_templates == ((5, 10), (10, 10))
    with pytest.raises(AttributeError):
        hparams.v_lr = 2.0  # type: ignore[misc]
    assert hparams.as_dict()["context_templates"] == [[5, 10], [10, 10]]
    assert hparams.as_dict()["method"] == "rome"


def test_a_hyperparameter_file_naming_a_missing_layer_is_refused(tmp_path, settings):
    settings.EDITING_HPARAMS_DIR = str(tmp_path)
    write(tmp_path, "rome", "small", rome_values(version=2, layer=9))
    with pytest.raises(HparamsError, match="layers 0 to 3"):
        load_hparams("rome", keys=["small"], num_layers=4)
    write(tmp_path, "rome", "small", rome_values(version=2, layer=2))
    loaded = load_hparams("rome", keys=["small"], num_layers=4)
    assert (loaded.layer, loaded.version, loaded.file) == (2, 2, "small.json")


def test_memit_layers_default_to_five_ending_at_a_third_of_the_depth():
    values = json.loads((BUNDLED / "memit" / "default.json").read_text())
    assert MemitHparams.from_dict(values).for_model(12).layers == (0, 1, 2, 3, 4)
    with pytest.raises(HparamsError, match="at least one layer"):
        MemitHparams.from_dict({**values, "layers": []}).for_model(12)


def test_the_edited_layers_are_read_only_once_chosen_for_a_model():
    rome = RomeHparams.from_dict(rome_values(layer=None))
    memit = MemitHparams.from_dict(json.loads((BUNDLED / "memit" / "default.json").read_text()))
    for unchosen in (lambda: rome.edited_layer, lambda: memit.edited_layers):
        with pytest.raises(HparamsError, match="chosen for a model"):
            unchosen()
    assert rome.for_model(12).edited_layer == 4
    assert memit.for_model(12).edited_layers == (0, 1, 2, 3, 4)
