"""Likert, claim and simulation measures, similarity, bootstrap intervals, group means."""

import numpy as np
import pytest
from scipy import stats

from bench.answer_bootstrap import grouped_means
from stats import bootstrap, claim, likert, similarity, simulation


def test_likert_pairs_average_each_system_per_case_then_test_two_sided():
    sources = [0, 0, 0, 1, 1, 2, 2, 3]
    systems = ["ROME", "ROME", "FT", "ROME", "FT", "ROME", "FT", "FT"]
    values = [7, 5, 3, 6, 6, 5, 2, 4]
    first, second = likert.paired_by_source(sources, systems, values, "ROME", "FT")
    assert first.tolist() == [6.0, 6.0, 5.0] and second.tolist() == [3.0, 6.0, 2.0]
    rng = np.random.default_rng(0)
    a = rng.integers(1, 8, 40).astype(float)
    b = np.clip(a - rng.integers(0, 3, 40), 1, 7)
    test = likert.wilcoxon_signed_rank(a, b)
    assert test.value == pytest.approx(
        stats.wilcoxon(a, b, alternative="two-sided", method="asymptotic").pvalue
    )
    assert test.value < 0.05 and test.n == 40 and test.details["alternative"] == "two-sided"
    # two-sided: the same p either way round, the direction in the median difference
    reverse = likert.wilcoxon_signed_rank(b, a)
    assert reverse.value == pytest.approx(test.value)
    assert reverse.details["median_difference"] == -test.details["median_difference"]
    assert np.isnan(likert.wilcoxon_signed_rank([3, 4], [3, 4]).value)


def test_claim_evidence_f1_between_annotators():
    items = ["a", "a", "a", "b", "b", "c"]
    evidence = [[0, 1], [1], [2], [3], [3], [0]]
    # a: {0,1}-{1} = 2/3, {0,1}-{2} = 0, {1}-{2} = 0; b: 1; c alone
    f1, owners = claim.evidence_pair_f1(items, evidence)
    assert sorted(f1.tolist()) == pytest.approx([0, 0, 2 / 3, 1])
    assert sorted(owners.tolist()) == ["a", "a", "a", "b"]
    summary = claim.evidence_f1_between_annotators(items, evidence)
    assert summary.value == pytest.approx((2 / 3 + 1) / 4) and summary.n == 4


def test_simulation_precision_counts_only_simulatable_judgements():
    explanations = ["e1", "e1", "e1", "e2", "e2", "e2"]
    choices = ["yes", "no", "not_helpful", "response_1", "either", "response_2"]
    model = ["yes", "yes", "yes", "response_1", "response_1", "response_1"]
    ids, precision = simulation.precision_per_explanation(explanations, choices, model)
    assert ids.tolist() == ["e1", "e2"] and precision.tolist() == [0.5, 0.5]
    majority = simulation.majority_simulatable(
        [1, 1, 1, 2, 2], ["yes", "not_helpful", "no", "either", "either"]
    )
    assert majority == {1: True, 2: False}
    assert simulation.generality([0.2, np.nan, 0.4]).value == pytest.approx(0.7)


def test_similarities():
    # content words {pig, use, chopsticks} and {pigs, use, chopsticks}: 2 shared of 4
    pair = ("Can a pig use chopsticks?", "Could the pigs use the chopsticks")
    assert similarity.jaccard_similarity(*pair) == pytest.approx(2 / 4)
    assert similarity.jaccard_similarity("the", "a") == 1.0
    assert similarity.bleu_similarity(
        "can penguins fly at night", "can penguins fly at night"
    ) == pytest.approx(1.0)
    assert similarity.bleu_similarity("can penguins fly", "do whales sing loudly") < 0.05
    texts = ["a b", "b c", "c d"]
    mean = similarity.mean_pairwise_similarity(texts, lambda x, y: float(x[0] == y[-1]))
    assert mean == pytest.approx(2 / 6)
    assert similarity.mean_pairwise_cosine([[1, 0], [0, 1], [1, 1]]) == pytest.approx(
        2 * np.sqrt(0.5) * 2 / 6
    )


def test_bootstrap_is_seeded_and_covers_the_mean():
    rng = np.random.default_rng(4)
    points = rng.integers(0, 6, 500).astype(float)
    first = bootstrap.mean_ci(points, seed=7)
    assert first == bootstrap.mean_ci(points, seed=7)
    assert first.low < points.mean() < first.high and first.method == "bootstrap"
    standard_error = points.std(ddof=1) / np.sqrt(points.size)
    assert first.high - first.low == pytest.approx(2 * 1.96 * standard_error, rel=0.15)
    continuous = rng.normal(size=300)
    direct = bootstrap.mean_ci(continuous, seed=1)
    assert direct.low < continuous.mean() < direct.high
    large = rng.normal(size=200_000)
    assert bootstrap.mean_ci(large, seed=1).method == "normal"
    assert bootstrap.mean_ci([1.0]) is None
    assert (
        bootstrap.seed_for("m", ("x",)) == bootstrap.seed_for("m", ("x",)) != bootstrap.seed_for("m", ("y",))
    )


def test_grouped_means_per_key_combination():
    values = [1, 2, 3, 4, np.nan, 6]
    system = ["A", "A", "B", "B", "B", "A"]
    question = ["q1", "q1", "q1", "q2", "q2", "q2"]
    means = {g.key: (g.mean, g.n) for g in grouped_means(values, system, question, label="t")}
    assert means == {
        ("A", "q1"): (1.5, 2),
        ("A", "q2"): (6.0, 1),
        ("B", "q1"): (3.0, 1),
        ("B", "q2"): (4.0, 1),
    }


def test_wilcoxon_uses_the_exact_distribution_when_it_can():
    first = [5.0, 6.5, 7.25, 4.0, 6.0, 3.5, 6.75]
    second = [4.0, 4.0, 6.0, 4.6, 3.25, 3.0, 6.0]
    test = likert.wilcoxon_signed_rank(first, second)
    assert test.details["method"] == "exact"
    assert test.value == pytest.approx(
        stats.wilcoxon(first, second, alternative="two-sided", method="exact").pvalue
    )
