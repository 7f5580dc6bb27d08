"""RoFT measures and MOST/LEAST measures on small tables worked out by hand."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from stats import boundary as roft
from stats import ranking

# item, true boundary, guess (1-based sentences; C has 10 sentences and is all human)
GAME = [
    ("A", 3, 3),
    ("A", 3, 5),
    ("A", 3, 2),
    ("B", 6, 10),
    ("B", 6, 6),
    ("B", 6, 6),
    ("C", 10, 10),
    ("C", 10, 4),
    ("D", 2, 9),
]
ITEMS = np.array([{"A": 0, "B": 1, "C": 2, "D": 3}[i] for i, _, _ in GAME])
BOUNDARY = np.array([b for _, b, _ in GAME])
GUESS = np.array([g for _, _, g in GAME])


def test_points_follow_the_game_rules():
    assert roft.points_for_guesses(GUESS, BOUNDARY).tolist() == [5, 3, 0, 1, 5, 5, 5, 0, 0]


def test_distances_exact_rate_histogram_and_lateness():
    distance = GUESS - BOUNDARY
    assert roft.exact_rate(distance).value == pytest.approx(4 / 9)
    assert roft.distance_histogram(distance) == {-6: 1, -1: 1, 0: 4, 2: 1, 4: 1, 7: 1}
    late = roft.mean_distance_after(distance)
    assert late.value == pytest.approx((0 + 2 + 4 + 0 + 0 + 0 + 7) / 7) and late.n == 7


def test_pairwise_agreement_between_players_on_the_same_item():
    # A: (3,5) (3,2)* (5,2); B: (10,6) (10,6) (6,6)=; C: (10,4); D alone.  * within one, = same
    same, within_one = roft.pairwise_agreement(ITEMS, GUESS)
    assert same.n == within_one.n == 7
    assert same.value == pytest.approx(1 / 7)
    assert within_one.value == pytest.approx(2 / 7)
    assert same.details["items"] == 3


@pytest.mark.parametrize("offset", [0, -(10**9), 10**7])  # counted per key; sorted keys (ids, a wide range)
def test_pairwise_agreement_is_the_same_counted_or_sorted(offset):
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 40))
        items = rng.integers(0, int(rng.integers(1, 8)), n)
        guess = rng.integers(-2, 11, n).astype(float)
        guess[rng.random(n) < 0.1] = np.nan
        pairs = [(i, g) for i, g in zip(items.tolist(), guess.tolist(), strict=True) if not np.isnan(g)]
        together = [(a, b) for k, a in enumerate(pairs) for b in pairs[k + 1 :] if a[0] == b[0]]
        same, within_one = roft.pairwise_agreement(items + offset, guess)
        if not together:
            assert np.isnan(same.value) and np.isnan(within_one.value)
            continue
        assert same.n == within_one.n == len(together)
        assert same.value == sum(a[1] == b[1] for a, b in together) / len(together)
        assert within_one.value == sum(abs(a[1] - b[1]) <= 1 for a, b in together) / len(together)


def test_player_skill_tails():
    players = np.repeat(np.arange(20), 3)
    points = np.repeat(np.arange(20, dtype=float), 3)
    skill = roft.player_skill(players, points)
    assert skill["median"].value == pytest.approx(9.5)
    assert skill["top"].value == 19 and skill["bottom"].value == 0
    assert skill["top"].n == 1 and skill["median"].n == 20


X, Y, Z, W = 0, 1, 2, 3
SHOWN = [[X, Y, Z], [Z, X, Y], [Y, Z, X]]
MOST = [X, X, Y]
LEAST = [Z, Y, X]


def test_counts_scores_and_wins_of_three_rankings():
    flat = ranking.appearances(SHOWN, MOST, LEAST)
    counts = ranking.choice_counts(flat, 3)
    assert counts["shown"].tolist() == [3, 3, 3]
    assert counts["most"].tolist() == [2, 1, 0]
    assert counts["least"].tolist() == [1, 1, 1]
    assert counts["middle"].tolist() == [0, 1, 2]
    wins = ranking.win_matrix(flat, 3)
    assert wins.tolist() == [[0, 2, 2], [1, 0, 2], [1, 1, 0]]
    by_system = {s: flat.score[flat.system == s].mean() for s in (X, Y, Z)}
    assert by_system == pytest.approx({X: 1 / 3, Y: 0.0, Z: -1 / 3})


def test_four_shown_systems_tie_the_middle():
    flat = ranking.appearances([[X, Y, Z, W]], [W], [X])
    ranks = dict(zip(flat.system.tolist(), flat.rank.tolist(), strict=True))
    assert ranks == {W: 1.0, X: 4.0, Y: 2.5, Z: 2.5}
    wins = ranking.win_matrix(flat, 4)
    assert wins[Y, Z] == wins[Z, Y] == 0
    assert wins[W].sum() == 3 and wins[:, X].sum() == 3


def test_unanswered_or_contradictory_responses_are_left_out():
    flat = ranking.appearances([[X, Y, Z], [X, Y, Z]], [X, -1], [X, Z])
    assert flat.system.size == 0


def test_holm_correction_as_statsmodels():
    """(The win tests Holm adjusts: tests/unit/test_clustered_shares.py.)"""
    assert ranking.holm([0.01, 0.04, 0.03]).tolist() == pytest.approx(
        multipletests([0.01, 0.04, 0.03], method="holm")[1]
    )


def test_bradley_terry_orders_systems_by_wins():
    wins = np.array([[0, 30, 40], [10, 0, 25], [0, 15, 0]])
    strengths = ranking.bradley_terry(wins)
    assert strengths[0] > strengths[1] > strengths[2]
    assert strengths.sum() == pytest.approx(0.0, abs=1e-9)
    assert ranking.bradley_terry(np.zeros((3, 3))) is None


def _simulated_rankings(rng, informative: bool):
    items, per_item = 150, 6
    quality = rng.normal(size=(items, 3))
    item_of, shown, most, least = [], [], [], []
    for item in range(items):
        for _ in range(per_item):
            noisy = quality[item] + rng.normal(scale=0.5, size=3) if informative else rng.normal(size=3)
            order = np.argsort(-noisy)
            item_of.append(item)
            shown.append(list(rng.permutation(3)))
            most.append(order[0])
            least.append(order[-1])
    return np.array(item_of), ranking.appearances(shown, most, least)


def test_split_half_reliability_separates_signal_from_noise():
    rng = np.random.default_rng(9)
    items, flat = _simulated_rankings(rng, informative=True)
    reliable = ranking.split_half_reliability(items, flat, 3, splits=20, seed=1)
    noise_items, noise = _simulated_rankings(rng, informative=False)
    unreliable = ranking.split_half_reliability(noise_items, noise, 3, splits=20, seed=1)
    assert reliable.value > 0.5 > 0.2 > unreliable.value
    assert reliable.details["spearman_brown"] > reliable.value
    again = ranking.split_half_reliability(items, flat, 3, splits=20, seed=1)
    assert again.value == reliable.value
