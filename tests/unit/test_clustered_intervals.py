"""Cluster-robust means and paired differences (``stats.clustered``) and the system pairs of
a scale question (``stats.likert.system_comparisons``) against independent references:
statsmodels' OLS with cluster-robust covariance, fitted another way (dummies instead of
centring), scipy's t intervals on item means, and statsmodels' Holm."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests

from stats import likert
from stats.bootstrap import mean_ci
from stats.clustered import (
    ITEMS,
    ITEMS_AND_PARTICIPANTS,
    SOURCES_AND_PARTICIPANTS,
    case_codes,
    clustered_mean,
    crossed,
    design_units,
    paired_difference,
    sandwich,
    t_quantile,
)


def _ratings(rng, items, participants, answers, item_sd=0.9, person_sd=0.4):
    item = rng.integers(0, items, answers)
    person = rng.integers(0, participants, answers)
    latent = 4 + rng.normal(0, item_sd, items)[item] + rng.normal(0, person_sd, participants)[person]
    return np.clip(np.round(latent + rng.normal(0, 1.2, answers)), 1, 7), item, person


@pytest.mark.parametrize("two_way", [False, True])
def test_the_sandwich_equals_statsmodels_cluster_robust_ols(two_way):
    rng = np.random.default_rng(3)
    y, item, person = _ratings(rng, 25, 9, 400)
    design = np.column_stack([np.ones(y.size), rng.integers(0, 2, y.size)])
    groups = [item, person] if two_way else [item]
    fit = sandwich(y, design, groups)
    beta, covariance = fit.beta, fit.covariance
    df = min(size for _, size, _ in fit.parts[:2]) - 1  # statsmodels' choice: min(G) − 1
    reference = sm.OLS(y, design).fit(
        cov_type="cluster", cov_kwds={"groups": np.column_stack(groups) if two_way else item}, use_t=True
    )
    assert beta == pytest.approx(reference.params, abs=1e-12)
    assert covariance == pytest.approx(reference.cov_params(), abs=1e-12)
    assert df == reference.df_resid_inference == (8 if two_way else 24)


def test_the_mean_interval_is_statsmodels_and_on_balanced_items_the_t_interval_of_item_means():
    rng = np.random.default_rng(5)
    items, per_item = 30, 4
    item = np.repeat(np.arange(items), per_item)
    y = np.clip(np.round(4 + rng.normal(0, 0.9, items)[item] + rng.normal(0, 1.2, item.size)), 1, 7)
    found = clustered_mean(y, item)
    assert found.ci.method == ITEMS and found.mean == pytest.approx(y.mean()) and found.n == y.size
    reference = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster", cov_kwds={"groups": item}, use_t=True)
    assert (found.ci.low, found.ci.high) == pytest.approx(tuple(reference.conf_int()[0]), abs=1e-12)
    # every item answered equally often: the t interval of the item means, up to CR1's (N-1)/(N-K)=1
    means = y.reshape(items, per_item).mean(axis=1)
    low, high = stats.t.interval(0.95, items - 1, means.mean(), means.std(ddof=1) / np.sqrt(items))
    assert (found.ci.low, found.ci.high) == pytest.approx((low, high), abs=1e-9)


def test_with_items_that_differ_the_clustered_interval_is_wider_than_resampling_answers():
    rng = np.random.default_rng(11)
    item = np.repeat(np.arange(40), 5)
    y = np.clip(np.round(4 + rng.normal(0, 0.9, 40)[item] + rng.normal(0, 1.2, item.size)), 1, 7)
    naive = mean_ci(y, seed=1)
    clustered = clustered_mean(y, item).ci
    assert clustered.high - clustered.low > 1.3 * (naive.high - naive.low)


def test_participants_count_as_a_second_clustering_only_where_they_cross_items():
    rng = np.random.default_rng(2)
    y, item, person = _ratings(rng, 20, 6, 300)
    assert crossed(item, person)
    both = clustered_mean(y, item, person)
    assert both.ci.method == ITEMS_AND_PARTICIPANTS
    reference = sm.OLS(y, np.ones(y.size)).fit(
        cov_type="cluster", cov_kwds={"groups": np.column_stack([item, person])}, use_t=True
    )
    # statsmodels' standard error; the t quantile from Satterthwaite's degrees of freedom,
    # between statsmodels' min(G) - 1 = 5 and max(G) - 1 = 19
    fit = sandwich(y, np.ones((y.size, 1)), [item, person])
    assert math.sqrt(fit.covariance[0, 0]) == pytest.approx(reference.bse[0], rel=1e-12)
    df = fit.df(0)
    assert reference.df_resid_inference == 5 <= df <= 19
    half = stats.t.ppf(0.975, df) * reference.bse[0]
    assert (both.ci.low, both.ci.high) == pytest.approx((y.mean() - half, y.mean() + half), abs=1e-12)
    # each participant answered one item: participants are answer-level noise
    own = np.arange(y.size)
    assert not crossed(item, own) and clustered_mean(y, item, own).ci.method == ITEMS
    # one item: nothing tells its effect from the mean, so no interval
    assert clustered_mean([3.0, 4.0, 5.0], [0, 0, 0]).ci is None


def test_design_units_are_the_source_where_items_have_one():
    cases = case_codes(np.array(["b", "", "b", "a", ""], dtype=object))
    assert cases.tolist() == [1, -1, 1, 0, -1]
    units = design_units(cases, np.arange(5))
    assert units[0] == units[2] and len({units[0], units[1], units[3], units[4]}) == 4


def _paired_study(rng, sources=24, participants=8, shift=0.5):
    source = np.repeat(np.arange(sources), 6)
    first = np.tile([True, True, True, False, False, False], sources)
    person = rng.integers(0, participants, source.size)
    latent = (
        4 + rng.normal(0, 0.8, sources)[source] + shift * first + rng.normal(0, 0.3, participants)[person]
    )
    return np.clip(np.round(latent + rng.normal(0, 1.2, source.size)), 1, 7), first, source, person


def test_the_paired_difference_is_the_system_coefficient_with_source_dummies():
    rng = np.random.default_rng(8)
    y, first, source, person = _paired_study(rng)
    dropped = np.arange(y.size) % 7 == 0  # unequal answers per source and system
    y, first, source, person = y[~dropped], first[~dropped], source[~dropped], person[~dropped]
    fit, interval = paired_difference(y, first, source)
    dummies = (source[:, None] == np.arange(24)).astype(float)
    design = np.column_stack([first.astype(float), dummies])
    reference = sm.OLS(y, design).fit(cov_type="cluster", cov_kwds={"groups": source}, use_t=True)
    assert fit.estimate == pytest.approx(reference.params[0], abs=1e-10)
    # statsmodels counts the 24 source dummies in CR1's (N-1)/(N-K); with the effects
    # centred out (nested in the clusters) they are no parameters of the sandwich: K = 1
    n, k = design.shape
    assert fit.se**2 == pytest.approx(reference.cov_params()[0, 0] * (n - k) / (n - 1), rel=1e-10)
    assert fit.df == 23 and interval.low < fit.estimate < interval.high
    two_way, crossed_interval = paired_difference(y, first, source, person)
    assert crossed_interval.method == SOURCES_AND_PARTICIPANTS and two_way.clusters == (24, 8)


def test_balanced_paired_difference_is_the_paired_t_interval_on_source_means():
    rng = np.random.default_rng(9)
    y, first, source, _ = _paired_study(rng)
    fit, interval = paired_difference(y, first, source)
    a = y[first].reshape(24, 3).mean(axis=1)
    b = y[~first].reshape(24, 3).mean(axis=1)
    reference = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert fit.estimate == pytest.approx(np.mean(a - b))
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high), abs=1e-9)


def test_system_pairs_are_two_sided_and_holm_adjusted_over_the_questions_pairs():
    rng = np.random.default_rng(4)
    sources = np.repeat(np.arange(30), 4 * 2)
    systems = np.tile(np.repeat(["A", "B", "C", "D"], 2), 30)
    shift = {"A": 0.8, "B": 0.0, "C": 0.0, "D": -0.3}
    y = np.clip(np.round(4 + np.vectorize(shift.get)(systems) + rng.normal(0, 1.2, systems.size)), 1, 7)
    pairs = likert.system_comparisons(y, systems, sources.astype(str))
    assert [(p.system, p.over) for p in pairs] == [
        ("A", "B"),
        ("A", "C"),
        ("A", "D"),
        ("B", "C"),
        ("B", "D"),
        ("C", "D"),
    ]
    raw = []
    for pair in pairs:
        a, b = likert.paired_by_source(sources, systems, y, pair.system, pair.over)
        reference = stats.wilcoxon(a, b, alternative="two-sided", method=pair.test.details["method"])
        assert pair.test.value == pytest.approx(reference.pvalue)
        raw.append(reference.pvalue)
    adjusted = multipletests(raw, method="holm")[1]
    assert [p.p_holm for p in pairs] == pytest.approx(list(adjusted))
    first = pairs[0]
    assert first.difference.estimate > 0 and first.interval.low > 0
    back = first.mirrored()
    assert (back.system, back.over, back.p_holm) == ("B", "A", first.p_holm)
    assert (back.interval.low, back.interval.high) == pytest.approx(
        (-first.interval.high, -first.interval.low)
    )


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99, 1 - 0.05 / 6])
def test_the_t_quantile_is_scipys_t_ppf_with_at_least_one_degree_of_freedom(level):
    df = np.array([0.2, 1.0, 1.5, 3.0, 7.4, 30.0, 1e6, np.inf])
    assert np.array_equal(t_quantile(level, df), stats.t.ppf(0.5 + level / 2, np.maximum(df, 1.0)))
    assert t_quantile(level, 4) == stats.t.ppf(0.5 + level / 2, 4.0)


def test_satterthwaite_follows_the_clustering_that_carries_the_variance():
    """Participants who add nothing: the interval's t has far more degrees of freedom than
    the 3 of four participants (not all 59 of the items: the participants' part of the
    variance is itself estimated from four clusters); participants who carry it all: 3."""
    rng = np.random.default_rng(6)
    item = np.repeat(np.arange(60), 3)
    person = rng.integers(0, 4, item.size)
    items_vary = 4 + rng.normal(0, 1.0, 60)[item] + rng.normal(0, 0.3, item.size)
    assert sandwich(items_vary, np.ones((item.size, 1)), [item, person]).df(0) > 10
    people_vary = 4 + rng.normal(0, 1.0, 4)[person] + rng.normal(0, 0.3, item.size)
    assert sandwich(people_vary, np.ones((item.size, 1)), [item, person]).df(0) < 6


def test_systems_on_different_items_are_compared_unpaired_against_statsmodels_and_scipy():
    """No case in common: the difference of means with statsmodels' cluster-robust
    covariance (items × participants), a two-sided Mann-Whitney U test on the item means."""
    rng = np.random.default_rng(21)
    item = np.repeat(np.arange(30), 4)
    system = np.where(item < 15, "A", "B")
    person = rng.integers(0, 6, item.size)
    latent = 4 + 0.8 * (system == "A") + rng.normal(0, 0.9, 30)[item] + rng.normal(0, 0.3, 6)[person]
    y = np.clip(np.round(latent + rng.normal(0, 1.2, item.size)), 1, 7)
    no_case = np.full(item.size, "", dtype=object)
    (pair,) = likert.system_comparisons(y, system, no_case, person, units=item)
    assert pair.design == "unpaired" and (pair.system, pair.over) == ("A", "B")
    design = np.column_stack([np.ones(y.size), (system == "A").astype(float)])
    reference = sm.OLS(y, design).fit(
        cov_type="cluster", cov_kwds={"groups": np.column_stack([item, person])}, use_t=True
    )
    assert pair.difference.estimate == pytest.approx(reference.params[1])
    assert pair.difference.se == pytest.approx(reference.bse[1], rel=1e-12)
    assert pair.interval.method == ITEMS_AND_PARTICIPANTS
    means = y.reshape(30, 4).mean(axis=1)
    expected = stats.mannwhitneyu(means[:15], means[15:], alternative="two-sided", method="asymptotic")
    assert pair.test.value == pytest.approx(expected.pvalue) and pair.test.n == 30
    assert pair.p_holm == pytest.approx(pair.test.value)
    # without the items, nothing tells the two designs apart: no comparison
    assert likert.system_comparisons(y, system, no_case, person) == []
