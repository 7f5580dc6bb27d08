"""MEND on the tiny model: a trained editor edits facts it never saw edited, and is undone exactly.

The editor is trained once per recipe (``tests/tiny_mend.py``, cached with the tiny models).
Assertions are on log-probability leads in nats, with room for another machine's rounding.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from tests import tiny_mend
from tests.tiny_model import LANDMARKS
from workers.editing.base import edit_applied
from workers.editing.hparams import HparamsError, MendHparams, load_hparams, read_hparams_file
from workers.editing.mend import fingerprint, load_editor
from workers.editing.mend_training import file_digest
from workers.editing.requests import parse_edit_request
from workers.lm.scoring import score_targets


def lead(lm, prompts: list[str], first: str, second: str) -> list[float]:
    """Per prompt: mean log-probability per token of ``first`` minus that of ``second``."""
    scored = score_targets(lm, [(p, [first, second]) for p in prompts], batch_size=16, padding_side="right")
    return [a - b for a, b in (r.means() for r in scored)]


def other_city_facts(request) -> list[tuple[str, str]]:
    """Landmarks in neither the edit's true city nor its new one: facts the edit must leave alone."""
    return [
        (f"{subject} is located in", city)
        for subject, city in LANDMARKS.items()
        if city not in (request.target_true, request.target_new)
    ]


@pytest.fixture
def mend_hp(tiny_mend_dir):
    return read_hparams_file("mend", tiny_mend_dir)


@pytest.fixture(scope="module")
def reserved():
    return [parse_edit_request(r) for r in tiny_mend.reserved_records()]


FLIP_MARGIN = 1.0  # nats: the new city leads the true one by this much after the edit
KEEP_MARGIN = 1.0  # nats: an other city's landmark keeps its city this far ahead of the new one


def test_a_trained_editor_flips_landmarks_never_edited_in_training_and_keeps_other_cities(
    tiny_lm, tiny_mend_dir, mend_hp, reserved
):
    """The cached editor (this machine's kernels pinned) flips three of the four by 2.8 nats or
    more, every paraphrase by 2.3 or more, and 45 of the 48 other-city facts keep their city by
    1.6 nats or more (median 7); the asserts leave about half of that room. MEND's change is
    not as narrow as ROME's: one landmark resists, and a few facts elsewhere lose ground."""
    definition = json.loads((tiny_mend_dir / "definition.json").read_text())
    seen = definition["data"]["train"] + definition["data"]["held_out"]
    assert not [c for c in seen for r in reserved if c.startswith(r.subject.lower().replace(" ", "-"))]
    flipped, kept = 0, []
    for request in reserved:
        prompts = [request.filled_prompt, *request.paraphrase_prompts]
        assert max(lead(tiny_lm, prompts, request.target_new, request.target_true)) < 0  # unedited: true wins
        with edit_applied(tiny_lm, "mend", [request], mend_hp):
            leads = lead(tiny_lm, prompts, request.target_new, request.target_true)
            kept += [
                lead(tiny_lm, [prompt], city, request.target_new)[0]
                for prompt, city in other_city_facts(request)
            ]
        flipped += min(leads) > FLIP_MARGIN
    assert flipped >= 3
    assert sum(k > KEEP_MARGIN for k in kept) >= 0.85 * len(kept) and sorted(kept)[len(kept) // 2] > 3.5


def test_mend_changes_only_its_weights_and_is_undone_bit_for_bit(tiny_lm, mend_hp, reserved):
    saved = {name: p.detach().clone() for name, p in tiny_lm.model.named_parameters()}
    with edit_applied(tiny_lm, "mend", reserved[:2], mend_hp) as applied:
        changed = {n for n, p in tiny_lm.model.named_parameters() if not torch.equal(p, saved[n])}
    assert (
        changed
        == set(applied.details["delta_norms"])
        == {
            f"transformer.h.{layer}.mlp.{module}.weight"
            for layer in tiny_mend.LAYERS
            for module in ("c_fc", "c_proj")
        }
    )
    assert applied.system == "MEND" and applied.details["edits"] == 2
    assert all(torch.equal(p, saved[n]) for n, p in tiny_lm.model.named_parameters())


def test_the_definition_records_model_layers_data_settings_and_held_out_figures(
    tiny_lm, tiny_mend_dir, tmp_path
):
    definition = json.loads((tiny_mend_dir / "definition.json").read_text())
    data = tiny_mend.write_requests(tmp_path / "requests.jsonl", tiny_mend.training_records())
    assert (definition["method"], definition["model"], definition["layers"]) == (
        "mend",
        "tiny-gpt2",
        tiny_mend.LAYERS,
    )
    assert definition["data"]["sha256"] == file_digest(data)
    assert definition["data"]["requests"] == len(definition["data"]["train"]) + len(
        definition["data"]["held_out"]
    )
    assert definition["settings"] == {**tiny_mend.SETTINGS, "modules": list(tiny_mend.SETTINGS["modules"])}
    assert definition["weights"][0]["fingerprint"] == fingerprint(tiny_lm, definition["weights"][0]["name"])
    held_out = definition["held_out"]
    assert held_out["requests"] == len(definition["data"]["held_out"]) > 0
    assert set(held_out) >= {"efficacy", "paraphrase_success", "locality"}
    assert held_out["efficacy"] > 0.5  # the unedited model prefers the true city on every one


def test_an_editor_is_named_by_its_directory_or_by_a_file_beside_it(tiny_lm, tiny_mend_dir, tmp_path):
    direct = read_hparams_file("mend", tiny_mend_dir)
    assert (direct.editor, direct.version, direct.file) == (str(tiny_mend_dir), 1, tiny_mend_dir.name)
    (tmp_path / "mend").mkdir()
    (tmp_path / "mend" / "editor").symlink_to(tiny_mend_dir)
    (tmp_path / "mend" / "tiny-gpt2.json").write_text('{"version": 3, "editor": "editor"}')
    found = load_hparams("mend", keys=["tiny-gpt2"], num_layers=4, extra_dir=tmp_path)
    assert found == MendHparams(version=3, editor=str(tmp_path / "mend" / "editor"), file="tiny-gpt2.json")


@pytest.mark.parametrize("editor", ["../elsewhere", "/models/other/editor", ""])
def test_a_file_cannot_send_mend_outside_its_folder(tmp_path, editor):
    path = tmp_path / "tiny-gpt2.json"
    path.write_text(json.dumps({"version": 1, "editor": editor}))
    with pytest.raises(HparamsError, match="'editor' must be a folder beside the file"):
        read_hparams_file("mend", path)


def test_without_an_editor_mend_says_to_train_one(tiny_lm, tmp_path):
    with pytest.raises(HparamsError, match="train_mend"):
        load_hparams("mend", keys=["tiny-gpt2"], num_layers=4)
    with pytest.raises(HparamsError, match="not a trained MEND editor"):
        read_hparams_file("mend", tmp_path)


def test_an_editor_trained_for_other_weights_is_refused(tiny_lm, subject_lm, tiny_mend_dir, tmp_path):
    with pytest.raises(HparamsError, match=r"trained for 'tiny-gpt2'.*tiny-subject-gpt2"):
        load_editor(subject_lm, tiny_mend_dir)  # the same shapes, other weights
    copy = tmp_path / "editor"
    shutil.copytree(tiny_mend_dir, copy)
    definition = json.loads((copy / "definition.json").read_text())
    definition["layers"] = [0, 1, 2]
    (copy / "definition.json").write_text(json.dumps(definition))
    with pytest.raises(HparamsError, match="other weights"):
        load_editor(tiny_lm, copy)
