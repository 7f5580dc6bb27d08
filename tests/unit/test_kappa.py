"""Kappa statistics against scikit-learn and statsmodels, with missing ratings."""

import itertools

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from stats.kappa import cohen_kappa, fleiss_kappa
from tests.reference_kappas import human_model_kappa, pairwise_cohen_kappa

WEIGHTS = (None, "linear", "quadratic")


def test_cohen_kappa_equals_sklearn_for_every_weighting():
    rng = np.random.default_rng(1)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        a = rng.integers(0, k, 40)
        b = np.where(rng.random(40) < 0.6, a, rng.integers(0, k, 40))
        if len(set(a) | set(b)) < 2:
            continue
        for weights in WEIGHTS:
            expected = cohen_kappa_score(a, b, weights=weights)
            assert cohen_kappa(list(a), list(b), weights=weights).value == pytest.approx(expected, abs=1e-12)


def test_cohen_kappa_leaves_out_items_either_rater_skipped():
    rng = np.random.default_rng(2)
    labels = ["no", "maybe", "yes"]
    for _ in range(100):
        a = [labels[i] for i in rng.integers(0, 3, 30)]
        b = [x if rng.random() < 0.5 else labels[rng.integers(0, 3)] for x in a]
        a = [None if rng.random() < 0.2 else x for x in a]
        b = [float("nan") if rng.random() < 0.2 else x for x in b]
        both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y == y]
        first, second = zip(*both, strict=True)
        for weights in WEIGHTS:
            expected = cohen_kappa_score(first, second, labels=labels, weights=weights)
            got = cohen_kappa(a, b, weights=weights, labels=labels)
            assert got.value == pytest.approx(expected, abs=1e-12)
            assert got.n == len(both)


def test_fleiss_kappa_equals_statsmodels_on_complete_tables():
    rng = np.random.default_rng(3)
    for _ in range(100):
        raters, categories = int(rng.integers(2, 8)), int(rng.integers(2, 5))
        choices = rng.integers(0, categories, size=(30, raters))
        table = np.stack([(choices == c).sum(axis=1) for c in range(categories)], axis=1)
        assert fleiss_kappa(table).value == pytest.approx(statsmodels_fleiss(table), abs=1e-12)


def test_fleiss_kappa_with_different_numbers_of_raters_per_item():
    """Each item's agreement over its own pairs; chance from the pooled category shares."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        table = rng.integers(0, 4, size=(25, 3))
        raters = table.sum(axis=1)
        used = table[raters >= 2]
        per_item = [sum(c * (c - 1) for c in row) / (row.sum() * (row.sum() - 1)) for row in used]
        shares = used.sum(axis=0) / used.sum()
        chance = float((shares**2).sum())
        expected = (np.mean(per_item) - chance) / (1 - chance)
        result = fleiss_kappa(table)
        assert result.value == pytest.approx(expected, abs=1e-12)
        assert result.n == len(used)


def test_fleiss_kappa_known_example():
    # The ten-subject, fourteen-rater, five-category example in Fleiss (1971) style.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert round(fleiss_kappa(table).value, 3) == 0.210


def test_pairwise_and_human_model_kappa_average_sklearn_over_pairs():
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 3, 40)
    humans = np.array(
        [np.where(rng.random(40) < 0.7, truth, rng.integers(0, 3, 40)) for _ in range(4)], dtype=object
    )
    humans[rng.random(humans.shape) < 0.25] = None
    model = np.where(rng.random(40) < 0.8, truth, rng.integers(0, 3, 40)).astype(object)

    def sklearn_kappa(x, y):
        keep = [i for i in range(40) if x[i] is not None and y[i] is not None]
        return cohen_kappa_score([x[i] for i in keep], [y[i] for i in keep])

    pairs = [sklearn_kappa(humans[i], humans[j]) for i, j in itertools.combinations(range(4), 2)]
    result = pairwise_cohen_kappa(humans)
    assert result.value == pytest.approx(np.mean(pairs), abs=1e-12)
    assert result.n == 6
    against_model = [sklearn_kappa(h, model) for h in humans]
    assert human_model_kappa(humans, model).value == pytest.approx(np.mean(against_model), abs=1e-12)


def test_undefined_kappas_say_why():
    same = cohen_kappa(["yes"] * 5, ["yes"] * 5, labels=["yes", "no"])
    assert np.isnan(same.value) and "same category" in same.reason
    assert "fewer than two" in cohen_kappa(["yes"] * 5, ["yes"] * 5).reason
    assert "share no" in cohen_kappa(["yes", None], [None, "no"]).reason
    assert "no item" in fleiss_kappa([[1, 0], [0, 1]]).reason
    apart = pairwise_cohen_kappa([["a", "b", None, None], [None, None, "a", "b"]])
    assert np.isnan(apart.value) and apart.reason
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")
