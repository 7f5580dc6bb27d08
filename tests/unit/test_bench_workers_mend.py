"""``bench/workers.py``'s MEND path on the tiny model: an editor trained and timed, then timed
per edit beside the other methods. A few training steps only: the figures' values are the
bench's business, these tests hold what it trains with and what it reports."""

from __future__ import annotations

import json

from bench.workers import MEND, mend_recipe, report_mend_training, time_edits, train_mend_editor
from tests import tiny_mend


def test_the_bench_trains_the_tiny_models_editor_with_the_tests_recipe_and_times_mend_edits(
    tiny_lm, tmp_path, capsys
):
    training = train_mend_editor(tiny_lm, None, 3, tmp_path)

    definition = json.loads((training.editor / "definition.json").read_text(encoding="utf-8"))
    assert definition["settings"] == {**tiny_mend.SETTINGS, "modules": ["mlp_in", "mlp_out"], "steps": 3}
    assert training.layers == tiny_mend.LAYERS == definition["layers"]
    assert (training.steps, training.requests, training.held_out["requests"]) == (3, 84, 17)
    assert 0 < training.training_seconds <= training.total_seconds
    report_mend_training(training)
    printed = capsys.readouterr().out
    assert "MEND editor trained: 3 steps on 84 requests (17 held out), layers 2, 3" in printed
    assert " s a step" in printed and "load average after training MEND" in printed

    seconds, steps = time_edits(tiny_lm, 2, methods=["none"], mend_editor=training.editor)
    assert list(seconds) == ["none", MEND]
    assert len(seconds[MEND]) == 2 and all(s > 0 for s in seconds[MEND])
    assert steps[MEND] == []  # no optimisation per edit: one forward and backward pass


def test_on_any_other_model_the_bench_trains_with_the_train_mend_jobs_defaults(tmp_path):
    settings, layers = mend_recipe("gpt2-xl", tmp_path / "data.jsonl", tmp_path / "editor", 50)

    assert layers is None  # the job's default: the model's last three layers
    assert settings.steps == 50
    assert (settings.lr, settings.rank, settings.hidden, settings.modules) == (
        1e-6,
        1920,
        1,
        ("mlp_in", "mlp_out"),
    )
