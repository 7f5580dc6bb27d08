"""Pairs of raters: per-pair Cohen's kappa against scikit-learn, majorities by hand."""

import itertools
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from stats.raters import majority_codes, majority_of_others, majority_references, rating_pairs
from tests.reference_kappas import human_model_kappa, pair_kappas, pairwise_cohen_kappa


def _crowd(seed: int, raters: int = 6, units: int = 30, categories: int = 4):
    """(unit, rater, value) rows: each unit rated by a random subset of raters."""
    rng = np.random.default_rng(seed)
    rows = []
    for unit in range(units):
        truth = int(rng.integers(0, categories))
        for rater in rng.choice(raters, int(rng.integers(2, raters + 1)), replace=False):
            value = truth if rng.random() < 0.6 else int(rng.integers(0, categories))
            rows.append((unit, int(rater), value))
    unit, rater, value = (np.array(column) for column in zip(*rows, strict=True))
    return unit, rater, value


def test_rating_pairs_lists_each_pair_of_raters_of_a_unit_once():
    unit, rater, _ = _crowd(1)
    first, second = rating_pairs(unit, rater)
    expected = {
        (u, a, b)
        for u in set(unit.tolist())
        for a, b in itertools.combinations(sorted(rater[unit == u].tolist()), 2)
    }
    got = {(int(unit[i]), int(rater[i]), int(rater[j])) for i, j in zip(first, second, strict=True)}
    assert got == expected and len(first) == len(expected)
    assert (unit[first] == unit[second]).all() and (rater[first] < rater[second]).all()


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_pair_kappas_equal_sklearn_pair_by_pair(weights):
    unit, rater, value = _crowd(2)
    first, second = rating_pairs(unit, rater)
    kappas = pair_kappas(rater[first], rater[second], value[first], value[second], 4, weights)
    assert len(kappas.value) == len(set(zip(rater[first].tolist(), rater[second].tolist(), strict=True)))
    for a, b, got, n in zip(kappas.first, kappas.second, kappas.value, kappas.n, strict=True):
        shared = sorted(set(unit[rater == a].tolist()) & set(unit[rater == b].tolist()))
        x = [int(value[(unit == u) & (rater == a)][0]) for u in shared]
        y = [int(value[(unit == u) & (rater == b)][0]) for u in shared]
        assert n == len(shared)
        expected = cohen_kappa_score(x, y, labels=[0, 1, 2, 3], weights=weights)
        if np.isnan(expected):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(expected, abs=1e-12)


def test_mean_of_pair_kappas_equals_the_dense_averages():
    unit, rater, value = _crowd(3)
    table = np.full((6, 30), None, dtype=object)
    table[rater, unit] = value
    first, second = rating_pairs(unit, rater)
    for weights in (None, "quadratic"):
        kappas = pair_kappas(rater[first], rater[second], value[first], value[second], 4, weights)
        dense = pairwise_cohen_kappa(table, weights, labels=[0, 1, 2, 3])
        assert kappas.mean("none").value == pytest.approx(dense.value, abs=1e-12)
        # rater 5 as the model: the mean over the other raters of their kappa with it
        model = kappas.second == 5
        with_model = type(kappas)(*(getattr(kappas, f)[model] for f in ("first", "second", "value", "n")))
        versus = human_model_kappa(table[:5], table[5], weights, labels=[0, 1, 2, 3])
        assert with_model.mean("none").value == pytest.approx(versus.value, abs=1e-12)


def test_majority_and_majority_of_the_others():
    unit = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    value = np.array([1, 1, 2, 0, 2, 3, 3, 3])
    assert majority_codes(unit, value, 3, 4).tolist() == [1, -1, 3]
    # unit 0: without a 1 → {1, 2} tie; without the 2 → 1. unit 1: the other one. unit 2: 3.
    assert majority_of_others(unit, value, 3, 4).tolist() == [-1, -1, 1, 2, 0, 3, 3, 3]


def _majority_by_counting(unit, value, voters) -> list[int]:
    """Per rating, by hand: the one most common value among the voters' ratings of its unit,
    its own rating left out when it votes (-1: none, or a tie)."""
    votes = {u: Counter(value[(unit == u) & voters].tolist()) for u in set(unit.tolist())}
    reference = []
    for u, v, voting in zip(unit.tolist(), value.tolist(), voters.tolist(), strict=True):
        others = votes[u].copy()
        if voting:
            others[v] -= 1
        top = [(code, n) for code, n in others.most_common() if n > 0][:2]
        reference.append(top[0][0] if top and (len(top) == 1 or top[1][1] < top[0][1]) else -1)
    return reference


@pytest.mark.parametrize("seed", range(5))
def test_majority_references_leave_a_voter_out_and_give_others_the_voters_majority(seed):
    """The participants page's agreement and the reports' machine figures: voters (the
    answers that count) meet the others' majority, everyone else the voters' majority."""
    unit, _, value = _crowd(seed, units=40)
    voters = np.random.default_rng(seed).random(len(unit)) < 0.7
    reference = majority_references(unit, value, voters, 40, 4)
    assert reference.tolist() == _majority_by_counting(unit, value, voters)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_pair_kappa_measures_distance_in_scale_points(weights):
    """Values 1, 3 and 7 of a 7-point scale: weights count points, not used categories."""
    a = np.array([1, 3, 7, 7, 3, 1, 7, 3])
    b = np.array([3, 3, 7, 1, 1, 1, 7, 7])
    domain, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    x, y = codes[: len(a)], codes[len(a) :]
    kappas = pair_kappas(np.zeros(len(a)), np.ones(len(a)), x, y, len(domain), weights, domain.astype(float))
    expected = cohen_kappa_score(a, b, labels=list(range(1, 8)), weights=weights)
    assert kappas.value[0] == pytest.approx(expected, abs=1e-12)
