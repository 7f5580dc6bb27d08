"""Bradley-Terry strengths, intervals, rank intervals and position bias (stats.bradley_terry)
against independent references: arena-rank (LMArena's implementation; its figures computed
by bench/arena_rank_reference.py in a separate environment, see there why) and statsmodels'
logistic regression with cluster-robust covariance."""

import json
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm

from stats import bradley_terry as bt

REFERENCE = json.loads((Path(__file__).parent.parent / "data" / "arena_rank_reference.json").read_text())


@pytest.mark.parametrize("case", sorted(REFERENCE["cases"]))
def test_strengths_and_sandwich_intervals_equal_arena_rank(case):
    """Point estimates equal arena-rank's up to its Elo scale and offset; with every
    comparison its own cluster and no small-sample factor our sandwich is arena-rank's."""
    data = REFERENCE["cases"][case]
    arena = data["arena_rank"]
    size = len(data["first"])
    compared = bt.comparisons(data["first"], data["second"], data["outcome"], np.arange(size))
    fitted = bt.fit(compared, data["systems"], ridge=0.0)
    ratings = (np.array(arena["ratings"]) - arena["offset"]) / arena["scale"]
    assert fitted.strengths == pytest.approx(ratings - ratings.mean(), abs=1e-5)
    independent_variance = np.diag(fitted.covariance) * (size - 1) / size  # without CR1's G/(G-1)
    assert independent_variance == pytest.approx(np.array(arena["variances"]) / arena["scale"] ** 2, rel=2e-3)
    # With the default ridge the strengths move by far less than their standard errors.
    ridged = bt.fit(compared, data["systems"]).strengths
    assert np.abs(ridged - fitted.strengths).max() < 1e-3


def simulated(seed, *, systems=4, items=40, per_item=8, item_sd=0.5, position=0.0, ties=0.1):
    """Pairwise comparisons on items that shift the systems' strengths (item × system effect)."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(0, 1, systems)
    item = np.repeat(np.arange(items), per_item)
    shift = rng.normal(0, item_sd, (items, systems))
    first = rng.integers(0, systems, item.size)
    second = (first + rng.integers(1, systems, item.size)) % systems
    logit = theta[first] - theta[second] + shift[item, first] - shift[item, second] + position
    outcome = (rng.random(item.size) < 1 / (1 + np.exp(-logit))).astype(float)
    outcome[rng.random(item.size) < ties] = 0.5
    return bt.comparisons(first, second, outcome, item)


def test_cluster_robust_covariance_equals_statsmodels_glm_clustered_by_item():
    compared = simulated(3)
    fitted = bt.fit(compared, 4, ridge=0.0)
    design = np.zeros((len(compared), 4))
    design[np.arange(len(compared)), compared.first] += 1
    design[np.arange(len(compared)), compared.second] -= 1
    model = sm.GLM(compared.outcome, design[:, 1:], family=sm.families.Binomial())
    result = model.fit(cov_type="cluster", cov_kwds={"groups": compared.cluster, "use_correction": False})
    reference = np.r_[0.0, result.params]
    assert fitted.strengths == pytest.approx(reference - reference.mean(), abs=1e-8)
    centre = np.eye(4) - 0.25
    full = np.zeros((4, 4))
    full[1:, 1:] = result.cov_params()
    clusters = np.unique(compared.cluster).size
    expected = centre @ full @ centre.T * clusters / (clusters - 1)
    assert fitted.covariance == pytest.approx(expected, abs=1e-10)


def test_position_bias_equals_statsmodels_and_finds_a_first_shown_advantage():
    compared = simulated(5, items=120, position=0.6)
    bias = bt.position_bias(compared, 4)
    design = np.zeros((len(compared), 4))
    design[np.arange(len(compared)), compared.first] += 1
    design[np.arange(len(compared)), compared.second] -= 1
    design[:, 0] = 1.0  # the intercept is γ (system 0 is the reference)
    result = sm.GLM(compared.outcome, design, family=sm.families.Binomial()).fit()
    assert bias.gamma == pytest.approx(result.params[0], abs=1e-3)  # the ridge's 1e-2 moves it a little
    assert bias.low > 0 and bias.low < 0.6 < bias.high
    assert bias.first_share > 0.55


def test_ties_count_half_a_win_and_unpicked_pairs_say_nothing():
    shown = np.array([[0, 1, -1], [1, 0, -1], [0, 1, 2], [2, 0, 1]])
    picked = np.array([1, -1, 2, -1])
    ties = np.array([False, True, False, False])
    compared = bt.from_picks(shown, picked, ties, [0, 1, 2, 3])
    found = sorted(zip(compared.first, compared.second, compared.outcome, compared.cluster, strict=True))
    assert found == [(0, 1, 0.0, 0), (0, 2, 0.0, 2), (1, 0, 0.5, 1), (1, 2, 0.0, 2)]


def test_best_worst_breaks_into_the_pairs_it_orders():
    shown = np.array([[0, 1, 2, 3], [3, 2, 1, 0]])
    most, least = np.array([2, -1]), np.array([0, 1])  # the second response lacks MOST
    compared = bt.from_best_worst(shown, most, least, [7, 8])
    found = sorted(zip(compared.first, compared.second, compared.outcome, strict=True))
    # 2 over 0, 1, 3; 1 and 3 over 0; 1 and 3 (both in the middle) are not compared.
    assert found == [(0, 1, 0.0), (0, 2, 0.0), (0, 3, 0.0), (1, 2, 0.0), (2, 3, 1.0)]


def test_rank_intervals_are_exact_for_clear_gaps_and_wide_for_equals():
    rng = np.random.default_rng(11)
    items = np.repeat(np.arange(60), 10)
    first = rng.integers(0, 3, items.size)
    second = (first + rng.integers(1, 3, items.size)) % 3
    theta = np.array([3.0, 0.0, 0.02])  # 0 far above; 1 and 2 nearly equal
    outcome = (rng.random(items.size) < 1 / (1 + np.exp(-(theta[first] - theta[second])))).astype(float)
    ranking = bt.rank_systems(bt.comparisons(first, second, outcome, items), 3)
    assert (ranking.rank_low[0], ranking.rank_high[0]) == (1, 1)
    assert (ranking.rank_low[1], ranking.rank_high[1]) == (2, 3)
    assert (ranking.rank_low[2], ranking.rank_high[2]) == (2, 3)
    assert np.all(ranking.low < ranking.strengths) and np.all(ranking.strengths < ranking.high)


def test_a_system_that_never_loses_is_named_and_one_item_gives_no_intervals():
    compared = bt.comparisons([0, 0, 1, 1], [1, 2, 2, 2], [1.0, 1.0, 1.0, 0.0], [0, 1, 2, 3])
    assert bt.rank_systems(compared, 3).unbounded == (0,)
    assert bt.rank_systems(bt.comparisons([0, 1], [1, 0], [1.0, 1.0], [5, 5]), 2) is None


def tasteful(seed, *, systems=4, items=60, raters=12, per_item=4, taste=0.6, item_sd=0.3):
    """Pairwise comparisons on items answered by ``per_item`` raters of a pool of ``raters``,
    each rater with a taste: their own N(0, taste²) shift of every system's strength, the
    same on every item they answer (participant × system effect)."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(0, 1, systems)
    item = np.repeat(np.arange(items), per_item)
    rater = np.concatenate([rng.choice(raters, per_item, replace=False) for _ in range(items)])
    shift = rng.normal(0, item_sd, (items, systems))
    like = rng.normal(0, taste, (raters, systems))
    first = rng.integers(0, systems, item.size)
    second = (first + rng.integers(1, systems, item.size)) % systems
    logit = theta[first] - theta[second] + shift[item, first] - shift[item, second]
    logit += like[rater, first] - like[rater, second]
    outcome = (rng.random(item.size) < 1 / (1 + np.exp(-logit))).astype(float)
    return bt.comparisons(first, second, outcome, item, [f"rater {r}" for r in rater])


def test_two_way_covariance_equals_statsmodels_glm_clustered_by_item_and_participant():
    """statsmodels' two-column groups give V_item + V_participant − V_cell, each part with
    G/(G−1)·(N−1)/(N−K); ours has G/(G−1) only, so its common (N−1)/(N−K) is taken out."""
    compared = tasteful(7)
    fitted = bt.fit(compared, 4, ridge=0.0)
    assert fitted.method == bt.ITEMS_AND_PARTICIPANTS
    assert (fitted.clusters, fitted.participants) == (60, 12)
    design = np.zeros((len(compared), 4))
    design[np.arange(len(compared)), compared.first] += 1
    design[np.arange(len(compared)), compared.second] -= 1
    model = sm.GLM(compared.outcome, design[:, 1:], family=sm.families.Binomial())
    groups = np.column_stack([compared.cluster, compared.participant])
    result = model.fit(cov_type="cluster", cov_kwds={"groups": groups})
    centre = np.eye(4) - 0.25
    full = np.zeros((4, 4))
    full[1:, 1:] = result.cov_params()
    n, k = len(compared), 3
    expected = centre @ full @ centre.T * (n - k) / (n - 1)
    assert fitted.covariance == pytest.approx(expected, abs=1e-10)
    one_way = bt.fit(bt.comparisons(compared.first, compared.second, compared.outcome, compared.cluster), 4)
    assert np.trace(fitted.covariance) > np.trace(one_way.covariance)  # the raters' taste adds variance


def test_rank_intervals_and_position_bias_use_the_two_way_degrees_of_freedom():
    from scipy import stats

    compared = tasteful(8)
    ranking = bt.rank_systems(compared, 4)
    assert ranking.method == bt.ITEMS_AND_PARTICIPANTS and ranking.participants == 12
    assert np.all((ranking.df >= 11) & (ranking.df <= 59))  # between min(G) − 1 and max(G) − 1
    half = stats.t.ppf(0.975, ranking.df) * ranking.se
    assert ranking.high - ranking.strengths == pytest.approx(half, rel=1e-9)
    bias = bt.position_bias(compared, 4)
    assert bias.method == bt.ITEMS_AND_PARTICIPANTS and 11 <= bias.df <= 59


def test_participants_who_do_not_cross_items_leave_the_one_way_figures_unchanged():
    """Each participant answers one item: their effects are answer-level noise the item
    clustering already covers, so the figures are the item-clustered ones, unchanged."""
    compared = simulated(3)
    alone = bt.comparisons(
        compared.first, compared.second, compared.outcome, compared.cluster, compared.cluster
    )
    for data in (alone, compared):
        fitted = bt.fit(data, 4)
        assert fitted.method == bt.ITEMS and fitted.participants == 0
    assert bt.fit(alone, 4).covariance == pytest.approx(bt.fit(compared, 4).covariance, abs=0)
    assert bt.rank_systems(alone, 4).low == pytest.approx(bt.rank_systems(compared, 4).low, abs=0)


@pytest.mark.parametrize(
    ("seed", "method", "by"), [(0, bt.PARTICIPANTS, "participant"), (4, bt.ITEMS, "item")]
)
def test_a_two_way_variance_that_is_not_positive_falls_back_to_the_larger_one_way_one(seed, method, by):
    """Three raters without taste on 20 items: V_item + V_participant − V_cell can be ≤ 0;
    the covariance is then the larger one-way one (here by participant, or by item)."""
    compared = tasteful(seed, systems=3, items=20, raters=3, per_item=2, taste=0.0, item_sd=0.0)
    fitted = bt.fit(compared, 3)
    assert fitted.method == method and len(fitted.sandwich.parts) == 1
    cluster = compared.participant if by == "participant" else compared.cluster
    one_way = bt.fit(bt.comparisons(compared.first, compared.second, compared.outcome, cluster), 3)
    assert fitted.covariance == pytest.approx(one_way.covariance, abs=1e-12)
    assert bt.rank_systems(compared, 3).df[0] == one_way.sandwich.parts[0][1] - 1


def test_picks_and_best_worst_answers_carry_their_participant():
    shown = np.array([[0, 1, 2], [2, 1, 0]])
    compared = bt.from_best_worst(shown, np.array([0, 2]), np.array([2, 0]), [3, 4], ["ann", "bob"])
    assert sorted(zip(compared.cluster, compared.participant, strict=True)) == [(3, 0)] * 3 + [(4, 1)] * 3
    picked = bt.from_picks(shown, np.array([1, 0]), np.array([False, False]), [3, 4], ["bob", "ann"])
    assert sorted(zip(picked.cluster, picked.participant, strict=True)) == [(3, 1)] * 2 + [(4, 0)] * 2
