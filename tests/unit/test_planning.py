"""The simulated power of a design (stats/planning.py) is the power of the test the reports
run (stats/likert.py: two-sided Wilcoxon signed-rank on per-case means, Mann-Whitney on
per-item means unpaired).

Synthetic pilots with normal item means and heavy-tailed answers (Student's t, 3 degrees of
freedom: there the rank tests and the t-test the planner used before differ by 0.1 and more
in power): the power the simulation gives for designs the pilot did not have (other numbers
of items and of answers per item) must match the share of studies drawn from the true model
that the reports' own test finds significant. Tolerance 0.04: with 4000 simulations and 2000
true studies the two shares have standard errors of at most 0.008 and 0.011, and the pilot's
variances are estimates (about 2% off on 3000 cases); seeded, so the numbers never move.
"""

import numpy as np
import pytest
from statsmodels.stats.power import TTestIndPower, TTestPower

from stats.agreement import alpha_interval, krippendorff_alpha, value_counts_from_pairs
from stats.likert import mann_whitney, mann_whitney_rows, wilcoxon_rows, wilcoxon_signed_rank
from stats.planning import (
    Answers,
    DesignPower,
    cheapest,
    interval_alphas,
    narrowest_enough,
    power_table,
    width_table,
)

TOLERANCE = 0.04
ITEM_SD, ANSWER_SD, CORRELATION = 1.0, 1.5, 0.5
TAIL_FREEDOM = 3  # answers' noise: ANSWER_SD × t(3) / sqrt(3), so its sd is ANSWER_SD


def answer_noise(rng: np.random.Generator, size) -> np.ndarray:
    return ANSWER_SD * rng.standard_t(TAIL_FREEDOM, size=size) / np.sqrt(TAIL_FREEDOM / (TAIL_FREEDOM - 2))


def true_item_means(rng: np.random.Generator, cases: int, difference: float) -> np.ndarray:
    covariance = ITEM_SD**2 * np.array([[1, CORRELATION], [CORRELATION, 1]])
    return rng.multivariate_normal([4.0 + difference, 4.0], covariance, size=cases)


def synthetic_pilot(cases: int = 3000, answers: int = 3, seed: int = 1) -> tuple[Answers, Answers]:
    """Two systems' items on the same cases (item means correlated across systems) with
    ``answers`` heavy-tailed answers each; a true difference of 0.8 the simulation must ignore."""
    rng = np.random.default_rng(seed)
    means = true_item_means(rng, cases, 0.8)
    items = np.repeat(np.arange(cases), answers)
    sides = []
    for side in (0, 1):
        values = means[items, side] + answer_noise(rng, items.size)
        sides.append(Answers(values, items))
    return sides[0], sides[1]


def reports_power(
    difference: float, items: int, answers_per_item: int, *, paired: bool, studies: int = 2000
) -> float:
    """The share of studies drawn from the pilots' true model (with ``difference``) that the
    reports' test finds significant at 0.05 (its rows form: the same p as the report's, see
    ``test_the_vectorised_tests_are_the_reports_tests_row_by_row``)."""
    rng = np.random.default_rng(11)
    means = true_item_means(rng, studies * items, difference).reshape(studies, items, 2)
    if not paired:  # the second system's items are other cases
        means[:, :, 1] = true_item_means(rng, studies * items, difference)[:, 1].reshape(studies, items)
    answered = means[..., None] + answer_noise(rng, (studies, items, 2, answers_per_item))
    case_means = answered.mean(axis=3)
    test = wilcoxon_rows if paired else mann_whitney_rows
    return float(np.mean(test(case_means[..., 0], case_means[..., 1])[1] < 0.05))


@pytest.mark.parametrize("items, answers_per_item", [(60, 1), (30, 3), (15, 5)])
def test_paired_power_is_the_power_of_the_reports_wilcoxon_test(items, answers_per_item):
    first, second = synthetic_pilot()
    difference = 0.6
    (design,) = power_table(
        first,
        second,
        difference=difference,
        paired=True,
        items=[items],
        answers_per_item=[answers_per_item],
        simulations=4000,
        seed=7,
    )
    expected = reports_power(difference, items, answers_per_item, paired=True)
    assert 0.2 < expected < 0.95  # where the power curve is steep, so the check means something
    assert design.power == pytest.approx(expected, abs=TOLERANCE)


def test_paired_power_is_not_the_t_tests_where_the_tests_differ():
    """Heavy tails, one answer per item: the t-test the planner simulated before has less
    power than the reports' Wilcoxon; the plan follows the Wilcoxon."""
    first, second = synthetic_pilot()
    (design,) = power_table(
        first, second, difference=0.6, paired=True, items=[60], answers_per_item=[1], simulations=4000, seed=7
    )
    variance = 2 * ITEM_SD**2 * (1 - CORRELATION) + 2 * ANSWER_SD**2
    t_power = TTestPower().power(effect_size=0.6 / np.sqrt(variance), nobs=60, alpha=0.05)
    assert design.power - t_power > 2 * TOLERANCE


def test_unpaired_power_is_the_power_of_the_reports_mann_whitney_test():
    first, second = synthetic_pilot()
    second = Answers(second.values, second.items[::-1].copy())  # the pairing broken: independent items
    (design,) = power_table(
        first,
        second,
        difference=0.8,
        paired=False,
        items=[40],
        answers_per_item=[1],
        simulations=4000,
        seed=3,
    )
    expected = reports_power(0.8, 40, 1, paired=False)
    assert 0.2 < expected < 0.95
    assert design.power == pytest.approx(expected, abs=TOLERANCE)
    sd = np.sqrt(ITEM_SD**2 + ANSWER_SD**2)
    t_power = TTestIndPower().power(effect_size=0.8 / sd, nobs1=40, alpha=0.05, ratio=1.0)
    assert design.power - t_power > TOLERANCE  # not Welch's t-test, which the planner used before


def test_the_vectorised_tests_are_the_reports_tests_row_by_row():
    """Rows with ties, zero differences, exact and asymptotic sizes, and no difference at all:
    the planner's vectorised p is the report's p of each row (NaN where the report's test is
    undefined)."""
    rng = np.random.default_rng(5)
    first = rng.integers(1, 6, size=(40, 12)).astype(float)
    second = rng.integers(1, 6, size=(40, 12)).astype(float)
    first[:10] = rng.normal(size=(10, 12))  # no ties: exact
    second[10] = first[10]  # no pair differs: undefined
    first[11], second[11] = 3.0, 3.0  # every value equal: Mann-Whitney undefined too
    for rows, one in ((wilcoxon_rows, wilcoxon_signed_rank), (mann_whitney_rows, mann_whitney)):
        _, p = rows(first, second)
        expected = [one(x, y).value for x, y in zip(first, second, strict=True)]
        assert p == pytest.approx(np.array(expected, dtype=float), nan_ok=True)
    assert np.isnan(wilcoxon_rows(first, second)[1][10]) and np.isnan(mann_whitney_rows(first, second)[1][11])


def test_the_same_seed_gives_the_same_table_and_costs_follow_the_price():
    first, second = synthetic_pilot(cases=40)
    run = dict(difference=0.5, paired=True, items=[10, 20], answers_per_item=[1, 3], price=0.25, seed=4)
    table = power_table(first, second, **run)
    assert table == power_table(first, second, **run)
    assert [(d.items, d.answers_per_item, d.answers) for d in table] == [
        (10, 1, 20),
        (10, 3, 60),
        (20, 1, 40),
        (20, 3, 120),
    ]
    assert [d.cost for d in table] == [5.0, 15.0, 10.0, 30.0]


def test_more_items_or_more_answers_never_cost_power_here():
    first, second = synthetic_pilot(cases=200)
    table = power_table(first, second, difference=0.5, paired=True, items=[10, 40], answers_per_item=[1, 4])
    power = {(d.items, d.answers_per_item): d.power for d in table}
    assert power[(40, 1)] > power[(10, 1)] and power[(10, 4)] > power[(10, 1)]


def test_cheapest_design_is_the_fewest_answers_that_reach_the_power():
    table = [
        DesignPower(10, 3, 0.85, 60, None),
        DesignPower(20, 1, 0.70, 40, None),
        DesignPower(30, 1, 0.82, 60, None),
        DesignPower(20, 2, 0.90, 80, None),
    ]
    assert cheapest(table, 0.8) == DesignPower(10, 3, 0.85, 60, None)
    assert cheapest(table, 0.95) is None


def test_a_pilot_with_one_answer_per_item_is_refused_with_the_reason():
    one = Answers(np.array([1.0, 2.0, 3.0]), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="two answers or more"):
        power_table(one, one, difference=1.0, paired=True, items=[10], answers_per_item=[1])


def test_vectorised_alpha_is_the_agreement_modules_interval_alpha():
    rng = np.random.default_rng(2)
    values = rng.normal(size=(3, 12, 4)) + rng.normal(size=(3, 12, 1))
    expected = [krippendorff_alpha(study.T, "interval").value for study in values]
    assert interval_alphas(values) == pytest.approx(expected)


def test_alpha_width_matches_studies_drawn_from_the_true_model():
    """Items with true sd 1 and answers with sd 1 (alpha 0.5): the width the planner gives
    from a pilot of that model matches the 95% range of alphas of studies drawn from the
    model itself, within 10% (both seeded; 2000 studies each)."""
    rng = np.random.default_rng(8)
    pilot_means = rng.normal(size=3000)
    items = np.repeat(np.arange(3000), 3)
    pilot = Answers(pilot_means[items] + rng.normal(size=items.size), items)
    (design,) = width_table(pilot, items=[30], answers_per_item=[3], simulations=2000, seed=5)
    true = rng.normal(size=(2000, 30, 1)) + rng.normal(size=(2000, 30, 3))
    low, high = np.percentile(interval_alphas(true), [2.5, 97.5])
    assert design.width == pytest.approx(high - low, rel=0.10)
    assert design.alpha == pytest.approx(0.5, abs=0.05)
    assert (design.answers, design.cost) == (90, None)


def test_the_planned_alpha_width_is_the_width_of_the_interval_the_reports_show():
    """The reports' alpha interval is a bootstrap over items (``alpha_interval``); on studies
    of the planned design drawn from the pilot's model its mean width is the planned width,
    within 15% (60 studies, 300 resamples each: the mean width's own error is about 3%)."""
    rng = np.random.default_rng(8)
    pilot_means = rng.normal(size=3000)
    items = np.repeat(np.arange(3000), 3)
    pilot = Answers(pilot_means[items] + rng.normal(size=items.size), items)
    (design,) = width_table(pilot, items=[40], answers_per_item=[3], simulations=1000, seed=5)
    widths = []
    for study in range(60):
        values = (rng.normal(size=(40, 1)) + rng.normal(size=(40, 3))).ravel()
        counts, domain = value_counts_from_pairs(np.repeat(np.arange(40), 3), values)
        interval = alpha_interval(counts, "interval", value_domain=domain, seed=study, resamples=300)
        widths.append(interval.high - interval.low)
    assert np.mean(widths) == pytest.approx(design.width, rel=0.15)


def test_more_items_narrow_the_alpha_interval_and_the_cheapest_narrow_one_is_chosen():
    first, _ = synthetic_pilot(cases=300)
    table = width_table(first, items=[20, 80], answers_per_item=[2, 3], price=1.0, simulations=400)
    width = {(d.items, d.answers_per_item): d.width for d in table}
    assert width[(80, 2)] < width[(20, 2)] and width[(80, 3)] < width[(20, 3)]
    best = narrowest_enough(table, width[(80, 2)])
    assert best is not None and best.answers <= 160 and best.width <= width[(80, 2)]
    assert narrowest_enough(table, 0.0) is None


def test_simulation_chunks_bound_every_run_and_keep_small_designs_whole():
    """A design's arrays never hold more than CHUNK_VALUES values, whatever its size (the
    command's 200,000 items × 50 answers tried to allocate 74.5 GiB at once); the defaults
    stay one run, so their seeded draws are the same as before."""
    from stats.planning import CHUNK_VALUES, simulation_chunks

    assert simulation_chunks(1000, 300 * 5) == [1000]
    chunks = simulation_chunks(10_000, 10_000 * 100)
    assert sum(chunks) == 10_000 and max(chunks) * 10_000 * 100 <= CHUNK_VALUES
    assert simulation_chunks(3, CHUNK_VALUES * 4) == [1, 1, 1]  # one study past the bound: one at a time


def test_a_design_simulated_in_runs_matches_the_reports_power_and_the_width(monkeypatch):
    """With runs of a few studies (CHUNK_VALUES made small), the power and the alpha width
    are those of one run: chunking bounds memory without changing what is simulated."""
    import stats.planning

    monkeypatch.setattr(stats.planning, "CHUNK_VALUES", 30 * 3 * 70)
    assert len(stats.planning.simulation_chunks(4000, 30 * 3)) > 50
    first, second = synthetic_pilot()
    (design,) = power_table(
        first, second, difference=0.6, paired=True, items=[30], answers_per_item=[3], simulations=4000, seed=7
    )
    assert design.power == pytest.approx(reports_power(0.6, 30, 3, paired=True), abs=TOLERANCE)
    (width,) = width_table(first, items=[30], answers_per_item=[3], simulations=2000, seed=5)
    monkeypatch.undo()
    (whole,) = width_table(first, items=[30], answers_per_item=[3], simulations=2000, seed=5)
    assert width.width == pytest.approx(whole.width, rel=0.10)
