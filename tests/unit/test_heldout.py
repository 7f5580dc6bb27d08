"""Held-out figures of a trained rater (``stats.heldout``) against scikit-learn, and the
item split (``workers.trained_raters.training.split_items``): seeded, never an item on both sides."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, mean_absolute_error

from stats.agreement import krippendorff_alpha
from stats.heldout import HeldOutItem, heldout_metrics, majority_answer, most_common_training_answer
from workers.trained_raters.training import split_items

LABELS = ["supports", "contradicts", "neutral"]


def test_a_tie_has_no_majority_and_the_baseline_breaks_ties_by_order():
    assert majority_answer(["a", "b", "a"]) == "a"
    assert majority_answer(["a", "b"]) is None and majority_answer([]) is None
    assert most_common_training_answer(["neutral", "supports", "supports", "neutral"]) == "neutral"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_label_figures_equal_scikit_learns_on_the_items_with_a_majority(seed):
    rng = random.Random(seed)
    items = [
        HeldOutItem(f"i{n}", rng.choice(LABELS), [rng.choice(LABELS) for _ in range(rng.choice([1, 2, 3]))])
        for n in range(40)
    ]
    training = [rng.choice(LABELS) for _ in range(90)]

    metrics = heldout_metrics(items, training, level="nominal")

    kept = [(i.prediction, majority_answer(i.humans)) for i in items if majority_answer(i.humans) is not None]
    said, truth = zip(*kept, strict=True)
    assert (
        metrics["n_test"] == 40 and metrics["n_scored"] == len(kept) and metrics["n_tied"] == 40 - len(kept)
    )
    assert metrics["accuracy"] == pytest.approx(accuracy_score(truth, said))
    assert metrics["macro_f1"] == pytest.approx(f1_score(truth, said, average="macro"))
    assert metrics["kappa_majority"] == pytest.approx(cohen_kappa_score(said, truth))
    baseline = most_common_training_answer(training)
    assert metrics["majority_baseline"] == pytest.approx(accuracy_score(truth, [baseline] * len(truth)))
    alpha = krippendorff_alpha([list(said), list(truth)], "nominal")
    assert metrics["alpha_majority"] == pytest.approx(alpha.value)


def test_rating_figures_equal_scikit_learns_and_undefined_ones_are_null():
    rng = np.random.default_rng(3)
    items = [
        HeldOutItem(f"i{n}", int(rng.integers(1, 8)), list(rng.integers(1, 8, size=3))) for n in range(30)
    ]
    metrics = heldout_metrics(items, [6, 4, 4, 5], level="ordinal", scale=list(range(1, 8)))
    means = [float(np.mean(i.humans)) for i in items]
    assert metrics["mae"] == pytest.approx(mean_absolute_error(means, [i.prediction for i in items]))
    assert metrics["mae_baseline"] == pytest.approx(mean_absolute_error(means, [4] * 30))
    kept = [(i.prediction, majority_answer(list(i.humans))) for i in items]
    said, truth = zip(*[(p, t) for p, t in kept if t is not None], strict=True)
    weighted = cohen_kappa_score(said, truth, weights="quadratic", labels=list(range(1, 8)))
    assert metrics["kappa_majority"] == pytest.approx(weighted) and metrics["kappa_weights"] == "quadratic"

    alone = heldout_metrics([HeldOutItem("x", 3, [2, 5])], [3], level="ordinal", scale=list(range(1, 8)))
    assert alone["n_scored"] == 0 and alone["accuracy"] is None and alone["kappa_majority"] is None


def test_the_split_is_seeded_disjoint_and_independent_of_the_rows_order():
    items = [f"item-{n}" for n in range(23)]
    split = split_items(items, seed=5, test_share=0.2)
    assert not set(split.train) & set(split.test) and sorted(split.train + split.test) == sorted(items)
    assert len(split.test) == 5
    assert split_items(list(reversed(items)) + items[:3], seed=5, test_share=0.2) == split
    assert split_items(items, seed=6, test_share=0.2) != split
    assert len(split_items(items[:2], seed=0, test_share=0.2).train) == 1
