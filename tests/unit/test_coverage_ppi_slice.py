"""A seeded slice of bench/coverage_ppi.py: prediction-powered intervals cover the humans'
mean with a biased judge, are never wider than the humans-only ones, and a good judge saves
human answers while a useless one saves (almost) none."""

from bench.coverage_ppi import coverage


def test_a_good_judge_covers_and_saves_half_the_human_answers():
    found = coverage(0.9, 200, runs=150, seed=1)
    assert 0.90 <= found.mean <= 0.99 and 0.90 <= found.difference <= 0.99
    assert found.excess <= 0.0 + 1e-12  # never wider than humans only
    assert 0.3 <= found.saved_mean <= 0.6


def test_a_useless_judge_changes_little():
    found = coverage(0.5, 100, runs=150, seed=2)
    assert 0.90 <= found.mean <= 0.99
    assert found.excess <= 1e-12 and found.saved_mean < 0.1 and found.lam < 0.2


def test_prediction_powered_strengths_and_rank_sets_cover():
    from bench.coverage_ppi import strength_coverage

    found = strength_coverage(0.9, 100, runs=40, seed=3)
    assert 0.88 <= found.strength <= 1.0 and found.ranks >= 0.9
    assert found.excess <= 0.02 and found.saved > 0.1
