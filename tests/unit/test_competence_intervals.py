"""Competence intervals (a bootstrap over items) and the ordinal measures
(``stats/competence_intervals.py``): the resampling copies whole items (by its definition,
``tests/helpers/competence_copies.py``), the intervals keep a
random clicker from looking better than a consistent annotator, they cover the simulated
truth, and a scale is aggregated by its median (issue 37). The bigger simulation is
``bench/coverage_competence.py``."""

import numpy as np
from scipy.stats import spearmanr

from bench.coverage_competence import Tally, nominal_panel, ordinal_panel, tally_panel
from stats.competence import Answers, dawid_skene, mace
from stats.competence_intervals import (
    OrdinalAnswers,
    bootstrap_median_correlation,
    item_resamples,
    median_correlation,
    median_correlation_reasons,
    median_labels,
    percentile_bounds,
)
from stats.competence_refits import bootstrap_mace
from tests.helpers.competence_copies import bootstrap_competence, resampled
from tests.unit.test_competence import reference_answers


def test_resampling_every_unit_once_refits_the_same_model():
    answers = reference_answers()
    same = resampled(answers, np.ones(answers.units, dtype=np.int64))
    np.testing.assert_allclose(dawid_skene(same).competence, dawid_skene(answers).competence)


def test_a_unit_drawn_twice_is_two_units_with_the_same_answers():
    answers = Answers.of([0, 0, 1, 1], [0, 1, 0, 1], [2, 2, 0, 1])
    twice = resampled(answers, np.array([2, 0]))
    assert twice.units == 2
    assert sorted(zip(twice.unit.tolist(), twice.annotator.tolist(), twice.label.tolist(), strict=True)) == [
        (0, 0, 2),
        (0, 1, 2),
        (1, 0, 2),
        (1, 1, 2),
    ]


def test_item_resamples_are_seeded_and_keep_the_number_of_items():
    first, again = item_resamples(30, resamples=20, seed=4), item_resamples(30, resamples=20, seed=4)
    np.testing.assert_array_equal(first, again)
    assert (first.sum(axis=1) == 30).all()


def test_a_random_clickers_interval_overlaps_or_lies_below_a_consistent_annotators():
    """UX review 3, U14: with five pages each a random clicker came out at 0.63, above a
    consistent annotator at 0.44. In 6 seeded panels of 15 items, whatever the point
    estimates say, the clicker's interval never lies above a consistent annotator's, and by
    the lower end (the participants page's sort) the clicker is never above them all."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        items, categories = 15, 3
        truth = rng.integers(0, categories, items)
        rows = []
        for annotator, knowing in enumerate((0.0, 0.7, 0.7, 0.8)):  # 0: the clicker
            for unit in range(items):
                knows = rng.random() < knowing
                rows.append((unit, annotator, truth[unit] if knows else rng.integers(0, categories)))
        answers = Answers.of(*zip(*rows, strict=True), categories=categories)
        counts = item_resamples(items, resamples=50, seed=seed)
        bounds = percentile_bounds(bootstrap_mace(answers, counts, seed=0, restarts=2, tolerance=1e-5))
        assert all(bounds.low[0] <= bounds.high[other] for other in (1, 2, 3)), seed
        assert bounds.low[0] < max(bounds.low[1:]), seed


def test_intervals_cover_the_true_competence_in_a_small_simulation():
    """6 panels of 60 items, 3 categories, MACE's own model: Dawid–Skene's interval covers
    the probability of a right answer, MACE's the probability of knowing, and the median
    correlation's its value on 20,000 items, for the annotators other than the clicker
    (whose MACE target, 0, is a boundary no posterior mean reaches)."""
    tallies = {"mace": Tally(), "dawid_skene": Tally(), "median_correlation": Tally()}
    rng = np.random.default_rng(2)
    for number in range(6):
        panel = nominal_panel(rng, 60, 3)
        for measure in ("mace", "dawid_skene"):
            tally_panel(panel, measure, tallies[measure], seed=number, resamples=50)
        ordinal = ordinal_panel(rng, 60)
        tally_panel(ordinal, "median_correlation", tallies["median_correlation"], seed=number, resamples=50)
    coverage = {measure: tally.row()["coverage"] for measure, tally in tallies.items()}
    assert all(tally.intervals >= 20 for tally in tallies.values())
    assert coverage["dawid_skene"] >= 0.85, coverage
    assert coverage["mace"] >= 0.8, coverage
    assert coverage["median_correlation"] >= 0.85, coverage


def test_a_scale_is_aggregated_by_its_lower_median():
    answers = Answers.of([0, 0, 0, 1, 1, 1, 1, 2], [0, 1, 2, 0, 1, 2, 3, 0], [6, 1, 2, 0, 5, 3, 6, 4])
    labels, share = median_labels(Answers.of(answers.unit, answers.annotator, answers.label, units=4))
    assert labels.tolist() == [2, 3, 4, -1]  # 1 2 6 → 2; 0 3 5 6 → 3 (the lower middle); 4
    np.testing.assert_allclose(share[:3], [1 / 3, 1 / 4, 1.0])


def test_median_correlation_is_spearmans_with_the_others_median():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 7, 40)
    rows = [(u, a, int(np.clip(truth[u] + rng.integers(-1, 2), 0, 6))) for u in range(40) for a in range(4)]
    answers = Answers.of(*zip(*rows, strict=True), categories=7)
    ordinal = OrdinalAnswers.of(answers)
    found = median_correlation(ordinal)
    for annotator in range(4):
        mine = answers.annotator == annotator
        others = [np.median(answers.label[(answers.unit == u) & ~mine]) for u in answers.unit[mine]]
        expected = spearmanr(answers.label[mine], others).statistic
        assert abs(found[annotator] - expected) < 1e-12
    # a unit drawn twice counts twice, as scipy on the repeated pairs
    counts = rng.integers(0, 3, 40)
    mine = answers.annotator == 0
    repeated = spearmanr(
        np.repeat(answers.label[mine], counts), np.repeat(ordinal.others_median[mine], counts)
    )
    assert abs(median_correlation(ordinal, counts)[0] - repeated.statistic) < 1e-12


def test_weighting_the_units_gives_the_ordinal_bootstrap_of_copied_answers_to_the_last_bit():
    """The reports resample an ordinal question by weighting each unit with its multiplicity
    (``bootstrap_median_correlation``) instead of refitting on copied answers; in 4 seeded
    panels (units answered once, an annotator with eleven answers who falls below ten in many
    resamples) the 400 resamples give the same figures to the last bit, NaN where the refit
    has NaN."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        units, annotators = int(rng.integers(12, 40)), int(rng.integers(3, 7))
        truth = rng.integers(0, 7, units)
        rows = [
            (u, a, int(np.clip(truth[u] + rng.integers(-2, 3), 0, 6)))
            for u in range(units)
            for a in range(annotators)
            if rng.random() < 0.7
        ]
        # one more annotator with eleven answers: below ten in many resamples
        rows += [(u, annotators, int(truth[u])) for u in range(11)]
        answers = Answers.of(*zip(*rows, strict=True), units=units, annotators=annotators + 1, categories=7)
        counts = item_resamples(units, seed=seed)
        refit = bootstrap_competence(answers, lambda a: median_correlation(OrdinalAnswers.of(a)), counts)
        weighted = bootstrap_median_correlation(OrdinalAnswers.of(answers), counts)
        np.testing.assert_array_equal(weighted, refit)  # NaN at the same places, the rest bit for bit
        assert np.isnan(refit[:, -1]).any() and np.isfinite(refit).sum() > refit.size / 2, seed


def test_median_correlation_reasons_reuse_the_figures_given():
    rows = [(u, a, (u + a) % 7) for u in range(12) for a in range(3)] + [(u, 3, 4) for u in range(12)]
    ordinal = OrdinalAnswers.of(Answers.of(*zip(*rows, strict=True)))
    found = median_correlation(ordinal)
    assert median_correlation_reasons(ordinal, found) == median_correlation_reasons(ordinal)
    found[0] = np.nan  # a figure the caller found undefined has its reason
    assert median_correlation_reasons(ordinal, found)[0].startswith("no variation")


def test_median_correlation_says_why_it_has_no_figure():
    rows = [(u, a, (u + a) % 7) for u in range(12) for a in range(3)]
    rows += [(u, 3, 4) for u in range(12)]  # always 4: no variation
    rows += [(u, 4, u % 7) for u in range(5)]  # five answers: too few
    reasons = median_correlation_reasons(OrdinalAnswers.of(Answers.of(*zip(*rows, strict=True))))
    assert reasons[:3] == (None, None, None)
    assert reasons[3].startswith("no variation")
    assert reasons[4] == "too few answers: 5 on items others also answered, at least 10 are needed"


def test_on_a_seven_point_scale_the_median_is_closer_to_the_truth_than_the_nominal_models():
    """Why ordinal questions get the median (science review, check 1): the nominal models
    treat the points as unrelated categories. The review's reproduction, seeded."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 7, 1000)
    spread = rng.uniform(0.4, 2.0, 20)
    rows = [
        (u, a, int(np.clip(np.round(truth[u] + rng.normal(0, spread[a])), 0, 6)))
        for u in range(1000)
        for a in rng.choice(20, 5, replace=False)
    ]
    answers = Answers.of(*zip(*rows, strict=True), units=1000, annotators=20, categories=7)
    error = {
        "median": np.mean(np.abs(median_labels(answers)[0] - truth)),
        "dawid_skene": np.mean(np.abs(dawid_skene(answers).labels - truth)),
        "mace": np.mean(np.abs(mace(answers).labels - truth)),
    }
    assert error["median"] < min(error["dawid_skene"], error["mace"]), error
