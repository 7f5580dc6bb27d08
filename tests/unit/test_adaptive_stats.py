"""Adaptive collection's pure statistics (stats/adaptive.py): how unsettled an item is, and
the stopping rule's confidence sequence.

The sequence is looked at after every 10 answers per system, up to 400, and the rule stops at
the first look whose interval excludes 0. Under the null (both systems alike) that must
happen in fewer than ``alpha`` of the runs (with a margin: the bound is 0.03 for alpha 0.05
over 300 seeded runs, where the plain 95% interval at every look stops about half of them,
which the last test shows so that the first cannot pass by accident).
"""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stats.adaptive import (
    comparison_priorities,
    difference_sequence,
    item_priorities,
    mean_sequence,
    mixture_radius,
    nominal_uncertainty,
    pair_uncertainty,
    scale_uncertainty,
    settled,
)

RUNS, LOOK_EVERY, MOST = 150, 10, 400


def _independent(first: np.ndarray, second: np.ndarray, alpha: float, **options):
    """The difference's sequence when every answer is an item of its own (independent answers)."""
    return difference_sequence(first, np.arange(len(first)), second, np.arange(len(second)), alpha, **options)


def test_an_unanswered_item_is_unsettled_and_agreement_settles_it():
    assert nominal_uncertainty(np.zeros(3)) == pytest.approx(1.0)
    split = nominal_uncertainty(np.array([2, 2]))
    agreed = nominal_uncertainty(np.array([4, 0]))
    more_agreed = nominal_uncertainty(np.array([9, 0]))
    assert split == pytest.approx(1.0)
    assert 0 < more_agreed < agreed < split


def test_a_scale_items_uncertainty_is_its_intervals_share_of_the_range():
    assert scale_uncertainty(np.array([4.0]), 6.0) == 1.0
    spread = scale_uncertainty(np.array([1.0, 7.0, 1.0, 7.0]), 6.0)
    close = scale_uncertainty(np.array([4.0, 5.0, 4.0, 5.0]), 6.0)
    assert close < spread <= 1.0
    # t-interval: 2 * t(0.975, 3) * sd / sqrt(4), over the range
    assert close == pytest.approx(2 * 3.182446 * np.std([4, 5, 4, 5], ddof=1) / 2 / 6.0, rel=1e-5)


def test_priorities_take_each_items_least_settled_question():
    items = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    questions = np.array(["label"] * 4 + ["score"] * 4)
    values = np.array(["yes", "yes", "yes", "no", 1.0, 7.0, 4.0, 4.0], dtype=object)
    nominal = np.array([True] * 4 + [False] * 4)
    priorities = item_priorities(items, questions, values, nominal, 3)
    assert priorities[2] == 1.0  # no answers yet
    assert priorities[1] == pytest.approx(1.0)  # split label
    assert priorities[0] == pytest.approx(1.0)  # its scores span the whole range
    agreed = item_priorities(items[:4], questions[:4], values[:4], nominal[:4], 2)
    assert agreed[0] < agreed[1]


def _wins(pairs: dict[tuple[int, int], tuple[int, int]], size: int) -> np.ndarray:
    wins = np.zeros((size, size))
    for (i, j), (won, lost) in pairs.items():
        wins[i, j], wins[j, i] = won, lost
    return wins


def test_a_pair_of_systems_is_unsettled_while_close_or_unknown_and_settles_with_a_clear_order():
    # 0 beats 1 forty to ten; 1 and 2 split twenty-twenty; 3 was never compared
    uncertainty = pair_uncertainty(_wins({(0, 1): (40, 10), (1, 2): (20, 20)}, 4))
    assert np.allclose(uncertainty, uncertainty.T) and np.all(np.diag(uncertainty) == 0)
    assert uncertainty[1, 2] == pytest.approx(1.0, abs=0.01)  # equal strengths (up to the regularisation)
    assert uncertainty[0, 1] < 0.01  # z of about 4: settled
    assert uncertainty[0, 2] < 0.01  # settled through system 1, never compared directly
    assert uncertainty[0, 3] > 0.9 and uncertainty[1, 3] > 0.9  # nothing known of system 3
    assert np.all(pair_uncertainty(np.zeros((3, 3))) == 1 - np.eye(3))


def test_a_pairs_uncertainty_is_the_two_sided_normal_share_of_its_z():
    # two systems, 30 to 20: strengths ±log(1.5)/2 (I-LSR, tiny regularisation), and the
    # Fisher information of the difference is 50 p (1 - p), p = 0.6
    uncertainty = pair_uncertainty(_wins({(0, 1): (30, 20)}, 2))
    z = math.log(1.5) * math.sqrt(50 * 0.6 * 0.4)
    assert uncertainty[0, 1] == pytest.approx(2 * (1 - 0.5 * (1 + math.erf(z / math.sqrt(2)))), abs=0.01)


def test_an_items_comparison_priority_is_its_closest_pair_of_systems():
    uncertainty = np.array([[0.0, 0.1, 0.8], [0.1, 0.0, 0.3], [0.8, 0.3, 0.0]])
    items = np.array([0, 0, 1, 2])
    shown = np.array([[0, 1, -1], [0, 1, -1], [0, 1, 2], [1, 2, -1]])
    priorities = comparison_priorities(items, shown, uncertainty, 4)
    assert priorities[:3] == pytest.approx([0.1, 0.8, 0.3])
    assert math.isnan(priorities[3])  # no answers compared anything on it
    assert np.isnan(comparison_priorities(np.array([], dtype=int), np.zeros((0, 0)), uncertainty, 2)).all()


def test_a_settled_comparison_outweighs_the_items_own_split_votes():
    """The pick's observations are left out, its closeness stands in: an item whose own two
    answers split but whose systems are far apart falls behind an unanimous item whose
    systems are still close (vote shares alone would order them the other way)."""
    items = np.array([0, 0, 1, 1])
    questions = np.array(["better"] * 4)
    values = np.array(["a", "b", "c", "c"], dtype=object)
    nominal = np.ones(4, dtype=bool)
    by_votes = item_priorities(items, questions, values, nominal, 3)
    assert by_votes[0] > by_votes[1]
    closeness = np.array([0.02, 0.9, np.nan])
    none = np.zeros(0, dtype=bool)
    by_pairs = item_priorities(items[none], questions[none], values[none], nominal[none], 3, closeness)
    assert by_pairs[0] < by_pairs[1] and by_pairs[2] == 1.0
    # a scale question on the same page still counts: the item takes its least settled
    scale = (np.array([0, 0]), np.array(["q", "q"]), np.array([1.0, 7.0]), np.zeros(2, dtype=bool))
    both = item_priorities(*scale, 3, closeness)
    assert both[0] == pytest.approx(1.0) and both[1] == pytest.approx(0.9)


def test_the_sequence_is_the_whole_line_until_it_can_say_something():
    assert math.isinf(mean_sequence(np.array([3.0]), 0.05).width)
    assert math.isinf(mean_sequence(np.array([3.0, 3.0]), 0.05).width)
    one_each = _independent(np.array([5.0]), np.array([1.0]), 0.05)
    assert not settled(one_each, excludes_zero=True, width=1)


@pytest.mark.parametrize("n", [2, 10, 40, 5000])
def test_answers_that_all_agree_give_a_finite_interval_on_a_known_scale(n):
    """Every rating of A a 7 and of B a 1 (a 6-point-wide scale): the sample variance is 0,
    which used to leave the interval the whole line for ever; the floor keeps it finite,
    around the difference, and narrowing as answers come in."""
    look = _independent(np.full(n, 7.0), np.full(n, 1.0), 0.05, span=6.0)
    assert math.isfinite(look.low) and math.isfinite(look.high)
    assert look.low < 6.0 < look.high
    if n >= 10:
        assert look.excludes_zero()
    wider = _independent(np.full(n // 2 + 1, 7.0), np.full(n // 2 + 1, 1.0), 0.05, span=6.0)
    assert wider.width >= look.width


def test_the_floor_leaves_answers_that_vary_as_they_were_and_an_unknown_span_as_before():
    rng = np.random.default_rng(11)
    values = rng.integers(1, 8, 100).astype(float)
    assert mean_sequence(values, 0.05, span=6.0) == mean_sequence(values, 0.05)
    assert math.isinf(mean_sequence(np.full(40, 7.0), 0.05).width)  # no span: nothing known


def _false_stops_on_a_skewed_scale(runs: int = 150) -> float:
    """Answers that are mostly one value (95% 7s, else uniform on 1..7), the same for both
    systems, looked at every 10 answers per system: runs of agreeing answers are common
    early, where the floor decides."""
    rng = np.random.default_rng(20261129)
    stops = 0
    for _ in range(runs):
        draws = [np.where(rng.random(MOST) < 0.95, 7.0, rng.integers(1, 8, MOST)) for _ in range(2)]
        for n in range(LOOK_EVERY, MOST + 1, LOOK_EVERY):
            if _independent(draws[0][:n], draws[1][:n], 0.05, span=6.0).excludes_zero():
                stops += 1
                break
    return stops / runs


def test_mostly_agreeing_answers_under_the_null_stop_less_often_than_alpha():
    assert _false_stops_on_a_skewed_scale() < 0.05


def _false_stops(interval) -> float:
    rng = np.random.default_rng(20261126)
    stops = 0
    for _ in range(RUNS):
        first, second = rng.integers(1, 8, MOST).astype(float), rng.integers(1, 8, MOST).astype(float)
        for n in range(LOOK_EVERY, MOST + 1, LOOK_EVERY):
            low, high = interval(first[:n], second[:n])
            if low > 0 or high < 0:
                stops += 1
                break
    return stops / RUNS


def _sequence(first, second):
    look = _independent(first, second, 0.05)
    return look.low, look.high


def _plain_interval(first, second):
    difference = first.mean() - second.mean()
    half = 1.96 * math.sqrt(first.var(ddof=1) / len(first) + second.var(ddof=1) / len(second))
    return difference - half, difference + half


def test_looking_after_every_answer_stops_under_the_null_less_often_than_alpha():
    assert _false_stops(_sequence) < 0.03


def test_a_plain_interval_looked_at_as_often_would_stop_far_too_often():
    assert _false_stops(_plain_interval) > 0.2


def test_a_real_difference_stops_and_a_narrow_enough_interval_stops():
    rng = np.random.default_rng(7)
    first, second = rng.normal(0.5, 1, 400), rng.normal(0.0, 1, 400)
    look = _independent(first, second, 0.05)
    assert look.excludes_zero() and settled(look, excludes_zero=True, width=None)
    assert look.low < 0.5 < look.high
    assert settled(look, excludes_zero=False, width=look.width + 0.01)
    assert not settled(look, excludes_zero=False, width=look.width - 0.01)


def _papers_radius(t: float, sigma: float, alpha: float, t_star: float) -> float:
    """Waudby-Smith, Arnold, Ramdas et al. (2021), the two-sided asymptotic confidence
    sequence (Robbins' normal mixture) for the mean of ``t`` observations of standard
    deviation ``sigma``: sqrt(2 (t ρ² σ² ... written out here as in the paper, with ρ chosen
    by their rule for tightness at ``t_star`` observations."""
    rho = math.sqrt((-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / t_star)
    return sigma * math.sqrt(
        2 * (t * rho**2 + 1) / (t**2 * rho**2) * math.log(math.sqrt(t * rho**2 + 1) / alpha)
    )


def _on_students_scale(radius: float, standard_error: float, freedom: float) -> float:
    """A normal boundary of ``radius`` moved to Student's t of ``freedom`` degrees of freedom
    at the same tail share (the sequence's small-sample correction)."""
    multiplier = radius / standard_error
    return standard_error * scipy_stats.t.ppf(scipy_stats.norm.cdf(multiplier), freedom)


def test_with_independent_answers_the_interval_is_the_papers_sequence_on_the_difference_at_alpha():
    """One sequence at alpha on the difference, not one per system at alpha / 2: with n
    independent answers per system the radius is the paper's for n observations of the
    paired difference's spread sqrt(s_A² + s_B²), on Student's t scale with Welch's degrees
    of freedom (scipy's Welch test gives them)."""
    rng = np.random.default_rng(3)
    first, second = rng.normal(0.4, 1.0, 150), rng.normal(0.0, 1.5, 150)
    look = _independent(first, second, 0.05)
    sigma = math.sqrt(first.var(ddof=1) + second.var(ddof=1))
    welch = scipy_stats.ttest_ind(first, second, equal_var=False)
    radius = _on_students_scale(_papers_radius(150, sigma, 0.05, 200), sigma / math.sqrt(150), welch.df)
    assert radius == pytest.approx(_papers_radius(150, sigma, 0.05, 200), rel=0.03)  # 298 df: nearly normal
    assert look.estimate == pytest.approx(first.mean() - second.mean())
    assert look.high - look.estimate == pytest.approx(radius, rel=1e-9)
    assert look.estimate - look.low == pytest.approx(radius, rel=1e-9)
    two_halves = mean_sequence(first, 0.025).width + mean_sequence(second, 0.025).width
    assert look.width < 0.8 * two_halves  # the rule before this one: narrower by a fifth at least


def test_items_answered_many_times_count_once_each():
    """Four items per system, each answered 30 times: the estimate is the mean of item means,
    and the interval is the paper's sequence with the items' spread over four items (worked
    out here by hand), far wider than if the 120 answers were independent."""
    rng = np.random.default_rng(5)
    item_means = {"A": [5.0, 6.0, 6.5, 4.0], "B": [4.0, 5.5, 3.0, 5.0]}
    values, items = {}, {}
    for system, means in item_means.items():
        items[system] = np.repeat(np.arange(4), [30, 20, 40, 30])
        values[system] = np.array(means)[items[system]] + rng.normal(0, 1, items[system].size)
    look = difference_sequence(values["A"], items["A"], values["B"], items["B"], 0.05, span=6.0)
    by_item = {
        system: [values[system][items[system] == item].mean() for item in range(4)] for system in ("A", "B")
    }
    estimate = sum(by_item["A"]) / 4 - sum(by_item["B"]) / 4
    variance = (np.var(by_item["A"], ddof=1) + np.var(by_item["B"], ddof=1)) / 4
    answers_spread = math.sqrt(values["A"].var(ddof=1) + values["B"].var(ddof=1))
    # the information 1 / variance, as many independent answers per system as give it
    equivalent = answers_spread**2 / variance
    freedom = scipy_stats.ttest_ind(by_item["A"], by_item["B"], equal_var=False).df
    normal = _papers_radius(equivalent, answers_spread, 0.05, 200)
    radius = _on_students_scale(normal, math.sqrt(variance), freedom)
    assert radius > 2 * normal  # four items per system: a variance of six degrees of freedom
    assert look.estimate == pytest.approx(estimate)
    assert look.high - look.estimate == pytest.approx(radius, rel=1e-9)
    assert (look.counts, look.items) == ((120, 120), (4, 4))
    as_if_independent = _independent(values["A"], values["B"], 0.05, span=6.0)
    assert look.width > 2 * as_if_independent.width


def test_the_mixture_boundary_holds_at_every_step_of_a_random_walk_at_most_alpha_of_the_time():
    """A Monte Carlo check of ``mixture_radius`` on its own: 4,000 standard normal random
    walks of 2,000 steps (information t at step t); the share that ever leaves ±t·radius(t)
    is at most alpha (plus three Monte Carlo standard errors)."""
    rng = np.random.default_rng(2026)
    steps = np.arange(1, 2001)
    bound = steps * np.array([mixture_radius(float(t), 200.0, 0.05) for t in steps])
    crossed = 0
    for _ in range(4):
        walks = np.cumsum(rng.standard_normal((1000, steps.size)), axis=1)
        crossed += int(np.any(np.abs(walks) >= bound, axis=1).sum())
    assert crossed / 4000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000)
    assert crossed > 0  # a boundary that is never reached would pass for any alpha


def test_items_answered_many_times_that_all_agree_still_stop():
    """T10 with clusters: five items per system, each answered 8 times, every rating of A a 7
    and of B a 1: the item means do not vary, the floor keeps the interval finite and it stops."""
    items = np.repeat(np.arange(5), 8)
    look = difference_sequence(np.full(40, 7.0), items, np.full(40, 1.0), items, 0.05, span=6.0)
    assert look.excludes_zero() and look.low < 6.0 < look.high
    one_item_each = difference_sequence(
        np.full(8, 7.0), np.zeros(8), np.full(8, 1.0), np.zeros(8), 0.05, span=6.0
    )
    assert math.isinf(one_item_each.width)  # one item per system: nothing known of the items
