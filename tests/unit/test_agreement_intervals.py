"""Agreement intervals from a bootstrap over units (stats.agreement, stats.kappa,
stats.reliability): every resample's figure equals an independent implementation run on the
resampled units (the krippendorff package, scikit-learn, statsmodels, counting pairs), and
the interval is the percentile interval of those figures under the same draws."""

import itertools

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from stats.agreement import (
    alpha_interval,
    alphas_of_multiplicities,
    percent_interval,
    value_counts_from_pairs,
)
from stats.bootstrap import MIN_UNIT_RESAMPLES, UNIT_RESAMPLES, resampled_interval, unit_resamples
from stats.kappa import (
    SharedUnits,
    fleiss_kappa_interval,
    fleiss_kappas_of_multiplicities,
    kappas_of_multiplicities,
    resampled_kappas,
)
from stats.reliability import icc_2k, icc_2k_interval, icc_2k_of_multiplicities, within_points_interval

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def expanded_levels(units: int) -> list[float]:
    """The expanded percentile interval's levels for ``units`` draws (Hesterberg 2015),
    from scipy.stats: Φ(√(n/(n−1)) · t_{0.025, n−1})."""
    tail = 100 * stats.norm.cdf(np.sqrt(units / (units - 1)) * stats.t.ppf(0.025, units - 1))
    return [tail, 100 - tail]


def _reliability_data(rng, coders=5, units=24, values=7, missing=0.3):
    """Coders × units ratings near a per-unit truth, some missing."""
    truth = rng.integers(1, values + 1, units)
    data = np.clip(truth[None, :] + rng.integers(-1, 2, (coders, units)), 1, values).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    return data


def _counts(data):
    units = np.broadcast_to(np.arange(data.shape[1]), data.shape)
    present = ~np.isnan(data)
    return value_counts_from_pairs(units[present], data[present])


def _draws(rng, units, resamples):
    return rng.multinomial(units, np.full(units, 1 / units), size=resamples).astype(float)


def _columns(weights):
    return np.repeat(np.arange(len(weights)), weights.astype(int))


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("values", [7, 40])  # a rating scale; many distinct values (the other paths)
def test_each_resample_alpha_equals_the_krippendorff_package(level, values):
    rng = np.random.default_rng(values)
    data = _reliability_data(rng, values=values)
    counts, domain = _counts(data)
    weights = _draws(rng, data.shape[1], 6)
    found = alphas_of_multiplicities(counts, level, weights, value_domain=domain)
    for alpha, w in zip(found, weights, strict=True):
        expected = krippendorff.alpha(data[:, _columns(w)], level_of_measurement=level, value_domain=domain)
        assert alpha == pytest.approx(expected, abs=1e-9)


def test_the_alpha_interval_is_the_percentile_interval_of_the_resamples_alphas():
    """Same seed, same draws (indices drawn as ``stats.bootstrap.unit_multiplicities`` does)."""
    rng = np.random.default_rng(3)
    data = _reliability_data(rng, coders=3, units=15, missing=0.0)
    counts, domain = _counts(data)
    interval = alpha_interval(counts, "ordinal", value_domain=domain, seed=11, resamples=300)
    drawn = np.random.default_rng(11).integers(0, 15, (300, 15))
    reference = [krippendorff.alpha(data[:, row], level_of_measurement="ordinal") for row in drawn]
    low, high = np.percentile(reference, expanded_levels(15))
    assert (interval.low, interval.high) == (pytest.approx(low), pytest.approx(high))
    assert interval == alpha_interval(counts, "ordinal", value_domain=domain, seed=11, resamples=300)
    assert interval.method == "unit bootstrap"


def test_clusters_draw_their_units_together():
    """A machine's pairs with each human of an item are units of alpha; the item is the draw."""
    rng = np.random.default_rng(5)
    item = np.repeat(np.arange(12), 3)  # three pairs per item
    values = np.column_stack([rng.integers(1, 6, 36), rng.integers(1, 6, 36)])
    values[:, 1] = np.where(rng.random(36) < 0.6, values[:, 0], values[:, 1])
    counts, domain = value_counts_from_pairs(np.repeat(np.arange(36), 2), values.ravel().astype(float))
    interval = alpha_interval(counts, "interval", value_domain=domain, clusters=item, seed=2, resamples=200)
    drawn = np.random.default_rng(2).integers(0, 12, (200, 12))
    reference = []
    for row in drawn:
        pairs = np.concatenate([np.flatnonzero(item == i) for i in row])
        reference.append(krippendorff.alpha(values[pairs].T.astype(float), level_of_measurement="interval"))
    low, high = np.percentile(reference, expanded_levels(12))
    assert (interval.low, interval.high) == (pytest.approx(low), pytest.approx(high))


def test_percent_and_within_k_resample_units_with_all_their_pairs():
    rng = np.random.default_rng(8)
    data = _reliability_data(rng, coders=4, units=20, missing=0.2)
    counts, domain = _counts(data)
    drawn = np.random.default_rng(4).integers(0, 20, (250, 20))

    def share(columns, points):
        close = pairs = 0
        for unit in columns:
            present = data[:, unit][~np.isnan(data[:, unit])]
            for a, b in itertools.combinations(present, 2):
                pairs += 1
                close += abs(a - b) <= points
        return close / pairs

    pairable = [u for u in range(20) if (~np.isnan(data[:, u])).sum() >= 2]
    assert len(pairable) == 20  # then the draws are over the same units
    for points, interval in (
        (0, percent_interval(counts, seed=4, resamples=250)),
        (1, within_points_interval(counts, domain, 1, seed=4, resamples=250)),
    ):
        low, high = np.percentile([share(row, points) for row in drawn], expanded_levels(20))
        assert (interval.low, interval.high) == (pytest.approx(low), pytest.approx(high))


def _team(rng, raters=4, units=30, categories=5):
    truth = rng.integers(0, categories, units)
    ratings = np.where(rng.random((raters, units)) < 0.6, truth, rng.integers(0, categories, (raters, units)))
    rows = [(a, b, u) for a, b in itertools.combinations(range(raters), 2) for u in range(units)]
    first, second, unit = np.array(rows).T
    shared = SharedUnits.of(
        first, second, ratings[first, unit], ratings[second, unit], min_shared=2, unit=unit + 50
    )
    return ratings, shared


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_each_resample_kappa_equals_scikit_learn(weights):
    rng = np.random.default_rng(1)
    ratings, shared = _team(rng)
    multiplicities = _draws(rng, 30, 4)
    found = kappas_of_multiplicities(shared, 5, multiplicities, weights)
    for b, w in enumerate(multiplicities):
        columns = _columns(w)
        expected = [
            cohen_kappa_score(ratings[a][columns], ratings[c][columns], weights=weights, labels=range(5))
            for a, c in zip(shared.first, shared.second, strict=True)
        ]
        assert found[b] == pytest.approx(expected, abs=1e-9)
    assert kappas_of_multiplicities(shared, 5, np.ones((1, 30)), weights)[0] == pytest.approx(
        shared.kappas(5, weights).value
    )


def test_the_mean_kappa_interval_resamples_units_not_pairs_of_raters():
    rng = np.random.default_rng(2)
    ratings, shared = _team(rng)
    resampled = resampled_kappas(shared, 5, None, seed=9, resamples=60)
    drawn = np.random.default_rng(9).integers(0, 30, (60, 30))
    means = [
        np.mean(
            [
                cohen_kappa_score(ratings[a][row], ratings[c][row])
                for a, c in itertools.combinations(range(4), 2)
            ]
        )
        for row in drawn
    ]
    low, high = np.percentile(means, expanded_levels(30))
    interval = resampled.mean_interval()
    assert (interval.low, interval.high) == (pytest.approx(low), pytest.approx(high))
    one = resampled.pair_interval(0)
    low, high = np.percentile(
        [cohen_kappa_score(ratings[0][row], ratings[1][row]) for row in drawn], expanded_levels(30)
    )
    assert (one.low, one.high) == (pytest.approx(low), pytest.approx(high))


def test_icc_and_fleiss_of_resamples_equal_the_figures_of_the_repeated_tables():
    rng = np.random.default_rng(6)
    table = rng.normal(size=(25, 1)) + rng.normal(size=(25, 4)) + rng.normal(size=4)
    multiplicities = _draws(rng, 25, 5)
    found = icc_2k_of_multiplicities(table, multiplicities)
    assert found == pytest.approx([icc_2k(table[_columns(w)]).value for w in multiplicities], abs=1e-12)
    counts = rng.multinomial(4, [0.5, 0.3, 0.2], size=25)
    found = fleiss_kappas_of_multiplicities(counts, multiplicities)
    assert found == pytest.approx(
        [statsmodels_fleiss(counts[_columns(w)]) for w in multiplicities], abs=1e-12
    )
    for interval in (icc_2k_interval(table, seed=1), fleiss_kappa_interval(counts, seed=1)):
        assert interval.low < interval.high and interval.method == "unit bootstrap"


def test_few_units_widen_the_percentiles_as_the_expanded_bootstrap_does():
    """With few units the plain percentile interval is too narrow; the expanded one takes
    wider percentiles (1.6% and 98.4% at 20 units), and the plain ones without ``draws``."""
    values = np.linspace(0, 1, 1001)
    plain = resampled_interval(values)
    wide = resampled_interval(values, draws=20)
    assert (plain.low, plain.high) == (pytest.approx(0.025), pytest.approx(0.975))
    low, high = np.array(expanded_levels(20)) / 100
    assert (wide.low, wide.high) == (pytest.approx(low), pytest.approx(high)) and low < 0.017


def test_the_cost_rule_gives_huge_studies_fewer_resamples_never_below_the_floor():
    assert unit_resamples(1_000) == UNIT_RESAMPLES
    assert MIN_UNIT_RESAMPLES < unit_resamples(100_000) < UNIT_RESAMPLES
    assert unit_resamples(10**9) == MIN_UNIT_RESAMPLES


def test_undefined_or_single_unit_data_has_no_interval():
    counts = np.array([[2, 1, 0]])
    assert alpha_interval(counts, "nominal") is None
    assert percent_interval(counts) is None


def test_a_large_study_is_bootstrapped_over_random_groups_of_its_units(monkeypatch):
    """Past ``MAX_UNIT_DRAWS`` units, groups of units are drawn (their sums are independent
    draws as the units are): the interval is the units' own, to Monte-Carlo error."""
    from stats import bootstrap

    rng = np.random.default_rng(12)
    truth = rng.integers(1, 8, 6000)
    units = np.repeat(np.arange(6000), 3)
    values = np.clip(truth[units] + rng.integers(-2, 3, units.size), 1, 7).astype(float)
    counts, domain = value_counts_from_pairs(units, values)
    grouped = alpha_interval(counts, "ordinal", value_domain=domain, seed=3)
    within = within_points_interval(counts, domain, 1, seed=3)
    monkeypatch.setattr(bootstrap, "MAX_UNIT_DRAWS", 10**6)
    whole = alpha_interval(counts, "ordinal", value_domain=domain, seed=3)
    assert grouped != whole  # the groups were drawn, not the units
    assert grouped.high - grouped.low == pytest.approx(whole.high - whole.low, rel=0.1)
    assert (grouped.low + grouped.high) / 2 == pytest.approx((whole.low + whole.high) / 2, abs=0.002)
    whole_within = within_points_interval(counts, domain, 1, seed=3)
    assert within.high - within.low == pytest.approx(whole_within.high - whole_within.low, rel=0.1)
