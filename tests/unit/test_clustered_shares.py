"""Shares, the test of system × answer and the pick questions' win tests, clustered by unit
and participant (``stats.clustered``, ``stats.ranking.win_tests``), against statsmodels'
cluster-robust OLS and Wald test, SciPy and a hand count."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from stats import bradley_terry as bt
from stats.clustered import (
    AT_BOUND,
    PERMUTATION_UNITS,
    WALD,
    WALD_PERMUTATION,
    clustered_group_means,
    clustered_mean,
    independence_test,
    share_test,
)
from stats.ranking import pick_win_matrix, win_tests
from tests.helpers.clustered_reference import cluster_se, permutation_p, wald_reference, win_rate_t


def _shares(rng, units: int, per_unit: int, people: int, p: float):
    unit = np.repeat(np.arange(units), per_unit)
    leaning = rng.normal(0, 1.0, units)[unit]
    hit = (rng.random(unit.size) < 1 / (1 + np.exp(-(np.log(p / (1 - p)) + leaning)))).astype(float)
    return hit, unit, rng.integers(0, people, unit.size)


def test_a_share_s_interval_is_statsmodels_cluster_robust_one_and_two_ways():
    rng = np.random.default_rng(3)
    hit, unit, person = _shares(rng, 25, 6, 12, 0.4)
    for participants in (None, person):
        found = clustered_mean(hit, unit, participants, bounds=(0.0, 1.0))
        unbounded = clustered_mean(hit, unit, participants)
        assert found.ci == unbounded.ci  # nowhere near a bound: nothing cut
        se = cluster_se(hit, unit, participants)
        half = (found.ci.high - found.ci.low) / 2
        df = 24 if participants is None else None
        if df is not None:
            assert half == pytest.approx(stats.t.ppf(0.975, df) * se)
        else:  # Satterthwaite's df lies between min(G) − 1 and max(G) − 1
            assert stats.t.ppf(0.975, 24) * se <= half + 1e-12 <= stats.t.ppf(0.975, 11) * se + 1e-12
        assert found.mean == pytest.approx(hit.mean())


def test_a_share_near_zero_is_clipped_and_says_so():
    hit = np.array([0.0] * 20 + [1.0, 1.0, 0.0, 0.0])
    unit = np.array([0] * 4 + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4)
    found = clustered_mean(hit, unit, bounds=(0.0, 1.0))
    raw = clustered_mean(hit, unit)
    assert raw.ci.low < 0 and found.ci.low == 0.0 and found.ci.high == raw.ci.high
    assert found.ci.method == "cluster-robust t (items), clipped to [0, 1]"


def test_every_answer_at_a_bound_gets_clopper_pearson_over_the_units():
    unit = np.repeat(np.arange(8), 5)
    none = clustered_mean(np.zeros(unit.size), unit, bounds=(0.0, 1.0))
    low, high = proportion_confint(0, 8, alpha=0.05, method="beta")
    assert (none.ci.low, none.ci.high) == pytest.approx((low, high))
    every = clustered_mean(np.ones(unit.size), unit, bounds=(0.0, 1.0))
    assert (every.ci.low, every.ci.high) == pytest.approx((1 - high, 1.0))
    assert none.ci.method == every.ci.method == AT_BOUND
    # a best-worst score (−1 … 1) that is always −1: the same reach, scaled to the range
    worst = clustered_mean(-np.ones(unit.size), unit, bounds=(-1.0, 1.0))
    assert (worst.ci.low, worst.ci.high) == pytest.approx((-1.0, -1.0 + 2 * high))
    # one unit: nothing tells its own effect from the share, so no interval
    assert clustered_mean(np.zeros(5), np.zeros(5), bounds=(0.0, 1.0)).ci is None


def test_grouped_shares_by_two_keys_are_each_group_s_own():
    rng = np.random.default_rng(4)
    hit, unit, person = _shares(rng, 40, 4, 10, 0.3)
    system = np.where(unit % 2 == 0, "a", "b")
    kind = np.where(unit % 4 < 2, "x", "y")
    found = clustered_group_means(hit, (system, kind), unit, person, bounds=(0.0, 1.0))
    assert [g.key for g in found] == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]
    for group in found:
        mask = (system == group.key[0]) & (kind == group.key[1])
        alone = clustered_mean(hit[mask], unit[mask], person[mask], bounds=(0.0, 1.0))
        assert (group.mean, group.ci) == (alone.mean, alone.ci)


def test_the_test_of_system_by_answer_is_statsmodels_wald_with_hotelling_s_f():
    """Beyond ``PERMUTATION_UNITS`` units: statsmodels' W, Hotelling's F on (q, G − S − q + 1)."""
    rng = np.random.default_rng(5)
    units = PERMUTATION_UNITS + 20
    unit = np.repeat(np.arange(units), 4)
    system = np.array(["A", "B", "C"])[unit % 3]
    answer = np.array(["yes", "no", "partly"])[rng.integers(0, 3, unit.size)]
    found = independence_test(answer, system, unit)
    wald, p = wald_reference(answer, system, unit)
    assert found.details["wald"] == pytest.approx(wald, rel=1e-9)
    assert found.value == pytest.approx(p, rel=1e-9)
    assert found.details["dof"] == [4, units - 3 - 4 + 1] and found.details["method"] == WALD
    assert np.array(found.details["table"]).sum() == unit.size
    # a binary answer (a multi's option): one equation, the system dummies
    chosen = np.where(rng.random(unit.size) < 0.3, "yes", "no")
    binary = independence_test(chosen, system, unit)
    assert binary.details["wald"] == pytest.approx(wald_reference(chosen, system, unit)[0], rel=1e-9)


def test_with_few_units_the_p_is_the_exact_permutation_p_of_a_direct_loop():
    """Up to ``PERMUTATION_UNITS`` units the p is the share of relabellings of the systems
    with a Wald statistic at least the observed one: checked against every relabelling,
    counted one by one (statsmodels' W is checked above), for systems on different items
    (shuffled across items) and for cases shown with both systems (swapped within a case).
    The observed W stays statsmodels'; 999 random relabellings put the p within 0.025 of the
    exact one (3 Monte-Carlo standard errors at p = 0.5: 0.016 each)."""
    rng = np.random.default_rng(11)
    for _ in range(3):
        unit = np.repeat(np.arange(8), 4)
        system = np.where(unit < 4, "A", "B")
        lean = rng.random(8)[unit]
        answer = np.where(
            rng.random(unit.size) < lean, "yes", np.where(rng.random(unit.size) < 0.5, "no", "partly")
        )
        found = independence_test(answer, system, unit)
        assert found.details["method"] == WALD_PERMUTATION
        assert found.details["wald"] == pytest.approx(wald_reference(answer, system, unit)[0], rel=1e-9)
        assert found.value == pytest.approx(permutation_p(answer, system, unit), abs=0.025)
    for _ in range(3):
        unit = np.repeat(np.arange(6), 6)
        system = np.tile(np.repeat(["A", "B"], 3), 6)
        answer = np.where(
            rng.random(unit.size) < rng.random(6)[unit] * 0.6 + 0.2 * (system == "A"), "yes", "no"
        )
        found = independence_test(answer, system, unit)
        assert found.value == pytest.approx(permutation_p(answer, system, unit), abs=0.025)
    # the same data give the same p (seeded by the table)
    assert independence_test(answer, system, unit).value == found.value


def test_with_ten_items_per_system_the_test_keeps_its_level():
    """Four equal systems, 10 items each answered 3 times, items that lean to an answer: the
    test says "p < 0.05" in about 5% of studies (Hotelling's F on the same W said it in 8%,
    12 of these 150)."""
    rng = np.random.default_rng(8)
    rejections = 0
    for _ in range(150):
        unit = np.repeat(np.arange(40), 3)
        utility = rng.normal(0, 1.0, (40, 3))[unit] + rng.gumbel(size=(unit.size, 3))
        answer = np.argmax(utility + np.array([0.5, 0.0, -0.5]), axis=1)
        rejections += independence_test(answer, unit % 4, unit).value < 0.05
    assert rejections <= 9, rejections


def test_the_test_is_undefined_without_a_comparison_or_with_too_few_units():
    unit = np.arange(6)
    assert not independence_test(["a", "b"] * 3, ["S"] * 6, unit).defined
    assert not independence_test(["a"] * 6, ["S", "T"] * 3, unit).defined
    # three systems on three units: the system means use every unit's degree of freedom
    few = independence_test(["a", "b", "c", "a", "b", "c"], ["S", "T", "U"] * 2, [0, 1, 2] * 2)
    assert not few.defined and few.reason


def test_items_that_differ_make_pearson_reject_and_the_clustered_test_not():
    """Equal systems on different items that each lean to one answer: Pearson's test counts
    30 answers per item as independent; the clustered test does not."""
    rng = np.random.default_rng(6)
    rejections_pearson = rejections = 0
    for _ in range(40):
        unit = np.repeat(np.arange(12), 30)
        leaning = rng.random(12)[unit]
        answer = np.where(rng.random(unit.size) < leaning, "yes", "no")
        system = np.where(unit < 6, "A", "B")
        table = [[np.sum((system == s) & (answer == a)) for a in ("yes", "no")] for s in ("A", "B")]
        rejections_pearson += stats.chi2_contingency(table, correction=False).pvalue < 0.05
        rejections += independence_test(answer, system, unit).value < 0.05
    assert rejections_pearson >= 20 and rejections <= 6


def test_win_tests_are_statsmodels_cluster_robust_t_and_holm_over_pairs():
    rng = np.random.default_rng(7)
    items, per_item = 30, 5
    item = np.repeat(np.arange(items), per_item)
    shown = np.array([rng.permutation(3)[:2] for _ in range(items)])[item]
    lean = rng.normal(0, 1, items)[item]
    picked = np.where(rng.random(item.size) < 1 / (1 + np.exp(-lean)), shown[:, 0], shown[:, 1])
    compared = bt.from_picks(shown, picked, np.zeros(item.size, dtype=bool), item)
    found = win_tests(compared.first, compared.second, compared.outcome, compared.cluster, n_systems=3)
    raw, adjusted = found.p, found.p_holm
    assert found.wins.tolist() == pick_win_matrix(shown, picked, 3).tolist()
    family = []
    for i, j in ((0, 1), (0, 2), (1, 2)):
        pair = ((compared.first == i) & (compared.second == j)) | (
            (compared.first == j) & (compared.second == i)
        )
        won = np.where(compared.first[pair] == i, compared.outcome[pair], 1 - compared.outcome[pair])
        t = win_rate_t(won, compared.cluster[pair])
        g = len(np.unique(compared.cluster[pair]))
        assert raw[i, j] == raw[j, i] == pytest.approx(2 * stats.t.sf(abs(t), g - 1))
        family.append(raw[i, j])
    expected = multipletests(family, method="holm")[1]
    assert [adjusted[0, 1], adjusted[0, 2], adjusted[1, 2]] == pytest.approx(list(expected))


def test_a_two_way_variance_below_a_one_way_one_is_floored():
    """Few participants: V_items + V_participants − V_both can undershoot; the test takes the
    larger one-way variance (with its G − 1 degrees of freedom)."""
    rng = np.random.default_rng(11)
    unit = np.repeat(np.arange(40), 3)
    person = rng.integers(0, 3, unit.size)
    floored = 0
    for _ in range(30):
        won = (rng.random(unit.size) < 0.5).astype(float)
        found = share_test(won, 0.5, unit, person)
        assert found.details["statistic"] == pytest.approx(win_rate_t(won, unit, person))
        floored += found.details["df"] in (39.0, 2.0)
    assert floored > 0  # the floor was met in this seeded sample


def test_a_pair_one_side_always_won_gets_the_sign_test_over_units():
    won = np.ones(12)
    unit = np.repeat(np.arange(4), 3)
    found = share_test(won, 0.5, unit)
    assert found.value == pytest.approx(stats.binomtest(4, 4, 0.5).pvalue)
    assert not share_test(won, 0.5, np.zeros(12)).defined  # one item: nothing to generalise from


@pytest.mark.parametrize("table_limit", [1 << 22, 1])
def test_many_groups_at_once_equal_the_sandwich_of_each_group(monkeypatch, table_limit):
    """``clustered_group_means`` sums per cluster for every group at once: groups that hold
    whole items (a generator), groups that cut across items and participants (a round), and,
    with the table limit at 1, the (group, cluster) pairs sorted; each equals statsmodels'
    covariance as ``sandwich`` computes it for the group alone."""
    import stats.clustered as clustered

    monkeypatch.setattr(clustered, "MAX_GROUP_CLUSTERS", table_limit)
    rng = np.random.default_rng(12)
    unit = np.repeat(np.arange(60), 5)
    person = rng.integers(0, 15, unit.size)
    x = rng.integers(0, 6, unit.size).astype(float) + rng.normal(0, 1, 60)[unit]
    x[::17] = np.nan
    by_item = rng.integers(0, 3, 60)[unit]
    by_answer = rng.integers(0, 4, unit.size)
    for keys in (by_item, by_answer):
        for found in clustered_group_means(x, keys, unit, person):
            mask = (keys == found.key[0]) & ~np.isnan(x)
            groups = [unit[mask], person[mask]]
            fit = clustered._coefficient(x[mask], np.ones((mask.sum(), 1)), groups, 0)
            expected = fit.interval(found.ci.method)
            assert found.mean == pytest.approx(np.mean(x[mask]))
            assert found.sd == pytest.approx(np.std(x[mask], ddof=1))
            assert (found.ci.low, found.ci.high) == pytest.approx((expected.low, expected.high), rel=1e-9)
            assert found.ci.method == "cluster-robust t (items x participants)"
