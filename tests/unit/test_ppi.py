"""Prediction-powered means and differences (``stats.ppi``) against independent references:
the authors' own code (``ppi_py``, PyPI ppi-python) on unclustered data, and
``stats.clustered``'s humans-only intervals (λ = 0) on clustered data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stats.clustered import clustered_mean, unpaired_difference
from stats.ppi import HUMANS_ONLY, PPI, Side, humans_needed, ppi_contrast, ppi_mean, target_se


@pytest.fixture(scope="module")
def ppi_py():
    # imported here, not at the top: it sets a global warnings filter when imported, which
    # pytest's per-test warning capture then undoes
    import ppi_py

    return ppi_py


def _judged(rng, n, big_n, noise=0.5, bias=0.3):
    y = rng.normal(size=n)
    return y, y + rng.normal(0, noise, n) + bias, rng.normal(size=big_n) + bias


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0, None])
def test_the_large_sample_figures_equal_ppi_py_at_the_same_lambda(ppi_py, lam):
    rng = np.random.default_rng(11)
    y, f, f_unlabeled = _judged(rng, 150, 1500)
    fit = ppi_mean(y, f, f_unlabeled, lam=lam, small_sample=False)
    low, high = ppi_py.ppi_mean_ci(y, f, f_unlabeled, alpha=0.05, lam=fit.lam)
    interval = fit.interval()
    assert interval.low == pytest.approx(float(low[0]), abs=1e-6)
    assert interval.high == pytest.approx(float(high[0]), abs=1e-6)
    point = ppi_py.ppi_mean_pointestimate(y, f, f_unlabeled, lam=fit.lam)
    assert fit.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-6)
    if lam is None:  # power-tuned, by ppi_py's own rule: λ strictly inside (0, 1) here
        assert 0.2 < fit.lam < 1.0
        tuned_low, tuned_high = ppi_py.ppi_mean_ci(y, f, f_unlabeled, alpha=0.05)
        assert (interval.low, interval.high) == pytest.approx(
            (float(tuned_low[0]), float(tuned_high[0])), abs=1e-6
        )


def test_lambda_zero_is_the_clustered_humans_only_mean_one_and_two_ways():
    rng = np.random.default_rng(5)
    y, f, f_unlabeled = _judged(rng, 240, 900)
    items, people = rng.integers(0, 50, y.size), rng.integers(0, 12, y.size)
    for participants in (None, people):
        reference = clustered_mean(y, items, participants).ci
        fit = ppi_mean(y, f, f_unlabeled, units=items, participants=participants, lam=0.0)
        for interval in (fit.interval(), fit.humans_interval()):
            assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high), abs=1e-9)
        assert fit.humans_interval().method == HUMANS_ONLY
        assert fit.effective_n == pytest.approx(y.size)


def test_the_tuned_interval_is_never_wider_than_the_humans_only_one():
    rng = np.random.default_rng(8)
    for trial in range(30):
        noise = [0.1, 1.0, 5.0][trial % 3]
        y, f, f_unlabeled = _judged(rng, 60, 600, noise=noise, bias=rng.normal())
        items = rng.integers(0, 25, y.size)
        fit = ppi_mean(y, f, f_unlabeled, units=items, units_unlabeled=np.arange(600))
        ppi, humans = fit.interval(), fit.humans_interval()
        assert ppi.method == PPI
        assert ppi.high - ppi.low <= humans.high - humans.low + 1e-12
        assert fit.effective_n >= y.size - 1e-9


def test_a_good_judge_is_worth_many_human_answers_and_a_useless_one_none():
    rng = np.random.default_rng(2)
    y, f, f_unlabeled = _judged(rng, 100, 1000, noise=0.2, bias=1.0)
    good = ppi_mean(y, f, f_unlabeled)
    assert good.lam > 0.8 and good.effective_n > 4 * y.size
    assert good.rectifier == pytest.approx(-1.0, abs=0.1)  # the judge's bias, measured
    useless = ppi_mean(y, rng.normal(size=y.size), rng.normal(size=1000))
    assert useless.no_gain and useless.effective_n < 1.1 * y.size


def test_a_difference_at_lambda_zero_is_the_clustered_difference_of_means():
    rng = np.random.default_rng(4)
    size = 300
    system = rng.integers(0, 2, size)
    units = rng.integers(0, 80, size) * 2 + system  # every unit shows one system
    y = rng.normal(size=size) + 0.5 * system
    f = y + rng.normal(0, 0.4, size)
    labeled = Side.of(y, units, groups=1 - system)  # group 0: system 1
    judge = Side.of(f, units, groups=1 - system)
    unlabeled_system = rng.integers(0, 2, 2000)
    unlabeled = Side.of(
        rng.normal(size=2000) + 0.5 * unlabeled_system, np.arange(2000), groups=1 - unlabeled_system
    )
    fit = ppi_contrast(labeled, judge, unlabeled, np.array([1.0, -1.0]), lam=0.0)
    reference, _ = unpaired_difference(y, system == 1, units)
    assert fit.estimate == pytest.approx(reference.estimate, abs=1e-9)
    # OLS's CR1 factor has (N − 1)/(N − 2) for its two coefficients; a difference of means, none
    assert fit.se == pytest.approx(reference.se * math.sqrt((size - 2) / (size - 1)), rel=1e-9)
    tuned = ppi_contrast(labeled, judge, unlabeled, np.array([1.0, -1.0]))
    assert tuned.se < fit.se and tuned.lam > 0.5


def test_inclusion_weights_undo_a_stratified_subset():
    # humans saw system 1's items four times as often as system 0's; the pooled mean over
    # both systems weighs each answer by 1 / π (labeled) and 1 / (1 − π) (unlabeled)
    rng = np.random.default_rng(9)
    items = 40_000
    system = rng.integers(0, 2, items)
    truth = np.where(system == 1, 1.0, 0.0) + rng.normal(0, 0.3, items)
    judge = truth + 0.2 + rng.normal(0, 0.3, items)
    inclusion = np.where(system == 1, 0.2, 0.05)
    chosen = rng.random(items) < inclusion
    weighted = ppi_mean(
        truth[chosen],
        judge[chosen],
        judge[~chosen],
        weights=1 / inclusion[chosen],
        weights_unlabeled=1 / (1 - inclusion[~chosen]),
    )
    plain = ppi_mean(truth[chosen], judge[chosen], judge[~chosen])
    assert weighted.estimate == pytest.approx(truth.mean(), abs=0.01)
    assert abs(plain.estimate - truth.mean()) > 0.05  # the oversampled system pulls it up


def test_too_little_to_estimate_gives_none():
    assert ppi_mean([1.0], [1.0], [0.0, 1.0], units=[0]) is None
    assert ppi_mean([1.0, 0.0], [1.0, 0.0], []) is None


def test_the_hybrid_plan_reaches_its_target_standard_error():
    """Plan from a pilot, then simulate studies of the planned size: their PPI++ standard
    error is the target's (within 5%), with fewer human answers than humans alone need."""
    rng = np.random.default_rng(21)

    def draw(n, big_n):
        y = rng.normal(size=n)
        return (
            y,
            0.8 * y + rng.normal(0, 0.4, n) + 0.5,
            0.8 * rng.normal(size=big_n) + rng.normal(0, 0.4, big_n) + 0.5,
        )

    # a large pilot: its own noise (the residual variance a(1 − ρ²) is a difference of
    # close terms, so a pilot of n answers misses it by several √(2/n)) is not under test
    pilot = ppi_mean(*draw(20_000, 20_000))
    needed = humans_needed(pilot, judge=6000, target_se=0.02)
    assert needed.humans_only == pytest.approx(1 / 0.02**2, rel=0.15)  # σ² = 1
    assert needed.hybrid < 0.5 * needed.humans_only and 0.8 < needed.correlation < 0.95
    errors = [ppi_mean(*draw(needed.hybrid, 6000)).se for _ in range(40)]
    assert np.mean(errors) == pytest.approx(0.02, rel=0.05)


def test_the_target_standard_error_of_a_width_and_of_a_power():
    assert target_se(width=0.2) == pytest.approx(0.1 / 1.959964, rel=1e-6)
    assert target_se(difference=0.5, power=0.8) == pytest.approx(0.5 / (1.959964 + 0.841621), rel=1e-6)
