"""Prediction-powered Bradley-Terry strengths (``stats.ppi_ranking``): λ = 0 is the reports'
own fit (``bradley_terry.rank_systems``) exactly; at a fixed λ the strengths equal ppi_py's
PPI++ logistic regression (the authors' code) on the same comparisons; a good judge narrows
the intervals and the rank sets."""

from __future__ import annotations

import numpy as np
import pytest

from stats import bradley_terry as bt
from stats.ppi_ranking import ppi_strengths

SYSTEMS = 4
TRUTH = np.array([0.8, 0.2, -0.3, -0.7])


def _comparisons(rng, items, per_item, offset=0):
    first = rng.integers(0, SYSTEMS, items * per_item)
    second = (first + rng.integers(1, SYSTEMS, first.size)) % SYSTEMS
    item = np.repeat(np.arange(items), per_item)
    p = 1 / (1 + np.exp(-(TRUTH[first] - TRUTH[second] + rng.normal(0, 0.3, items)[item])))
    return first, second, (rng.random(first.size) < p).astype(float), item + offset


def _study(seed, accuracy=0.85):
    rng = np.random.default_rng(seed)
    first, second, outcome, item = _comparisons(rng, 60, 3)
    judge = np.where(rng.random(outcome.size) < accuracy, outcome, 1 - outcome)
    f_u, s_u, y_u, item_u = _comparisons(rng, 600, 1, offset=1000)
    judged = np.where(rng.random(y_u.size) < accuracy, y_u, 1 - y_u)
    return bt.comparisons(first, second, outcome, item), judge, bt.comparisons(f_u, s_u, judged, item_u)


def _design(data):
    x = np.zeros((len(data), SYSTEMS))
    x[np.arange(len(data)), data.first] += 1
    x[np.arange(len(data)), data.second] -= 1
    return x[:, : SYSTEMS - 1]  # the last system the reference (strength 0)


def test_lambda_zero_is_the_reports_bradley_terry_fit():
    labeled, judge, unlabeled = _study(1)
    found = ppi_strengths(labeled, judge, unlabeled, SYSTEMS, lam=0.0)
    reference = bt.rank_systems(labeled, SYSTEMS)
    assert found.strengths == pytest.approx(reference.strengths, abs=1e-9)
    assert found.low == pytest.approx(reference.low, abs=1e-9)
    assert found.rank_low.tolist() == reference.rank_low.tolist()


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
@pytest.mark.filterwarnings("ignore:.*penalty:FutureWarning")  # scikit-learn, inside ppi_py
def test_the_strengths_equal_ppi_py_logistic_regression_at_the_same_lambda(lam):
    from ppi_py import ppi_logistic_pointestimate  # imported on use: see tests/unit/test_ppi.py

    labeled, judge, unlabeled = _study(2)
    found = ppi_strengths(labeled, judge, unlabeled, SYSTEMS, lam=lam, ridge=0.0)
    reference = ppi_logistic_pointestimate(
        _design(labeled), labeled.outcome, judge, _design(unlabeled), unlabeled.outcome, lam=lam
    )
    mine = found.strengths[: SYSTEMS - 1] - found.strengths[SYSTEMS - 1]
    assert mine == pytest.approx(reference, abs=1e-6)


def test_a_good_judge_narrows_strengths_and_rank_sets():
    labeled, judge, unlabeled = _study(3, accuracy=0.9)
    found = ppi_strengths(labeled, judge, unlabeled, SYSTEMS)
    assert 0.2 < found.lam <= 1 and found.effective_n > len(labeled)
    assert np.all(found.high - found.low < found.humans_high - found.humans_low)
    assert np.all(found.rank_high - found.rank_low <= found.humans_rank_high - found.humans_rank_low)
    assert np.all(found.rank_low <= [1, 2, 3, 4]) and np.all(found.rank_high >= [1, 2, 3, 4])


def test_a_useless_judge_leaves_the_humans_figures():
    labeled, judge, unlabeled = _study(4, accuracy=0.5)
    found = ppi_strengths(labeled, judge, unlabeled, SYSTEMS)
    assert found.lam < 0.15
    assert found.high - found.low == pytest.approx(found.humans_high - found.humans_low, rel=0.05)


def test_weights_count_a_comparison_as_often_as_its_weight():
    """Whole-number weights (a design's 1/π, 1/(1 − π)) give the strengths of the same
    comparisons each repeated that many times, at a fixed λ; equal weights change nothing."""
    labeled, judge, unlabeled = _study(3)
    rng = np.random.default_rng(4)
    w_l, w_u = rng.integers(1, 4, len(labeled)), rng.integers(1, 3, len(unlabeled))

    def repeated(data, w):
        return bt.comparisons(
            *(np.repeat(a, w) for a in (data.first, data.second, data.outcome, data.cluster))
        )

    weighted = ppi_strengths(labeled, judge, unlabeled, SYSTEMS, lam=0.6, ridge=0.0, weights=(w_l, w_u))
    copies = ppi_strengths(
        repeated(labeled, w_l), np.repeat(judge, w_l), repeated(unlabeled, w_u), SYSTEMS, lam=0.6, ridge=0.0
    )
    assert weighted.strengths == pytest.approx(copies.strengths, abs=1e-8)
    equal = ppi_strengths(
        labeled, judge, unlabeled, SYSTEMS, weights=(np.full(len(labeled), 5.0), np.ones(len(unlabeled)))
    )
    plain = ppi_strengths(labeled, judge, unlabeled, SYSTEMS)
    assert (equal.strengths, equal.low, equal.lam) == (
        pytest.approx(plain.strengths),
        pytest.approx(plain.low),
        plain.lam,
    )
