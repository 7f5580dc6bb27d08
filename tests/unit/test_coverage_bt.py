"""A seeded slice of bench/coverage_bt.py: the Bradley-Terry intervals keep their level when
items differ, where intervals that take comparisons as independent do not (best-worst
answers, whose implied pairs share one answer)."""

from bench.coverage_bt import Design, coverage


def test_item_clustered_intervals_cover_where_independent_ones_fall_short():
    found = coverage(Design(4, 30, 0.6, answer="best-worst"), studies=150, seed=1)
    assert 0.90 <= found.difference <= 0.99
    assert 0.90 <= found.strength <= 0.99
    assert found.rank >= 0.95  # simultaneous, so conservative
    assert 0.88 <= found.position <= 0.99
    assert found.difference_independent < 0.88


def test_pairwise_picks_of_four_systems_cover():
    found = coverage(Design(4, 30, 0.6), studies=150, seed=2)
    assert 0.90 <= found.difference <= 0.99 and found.rank >= 0.95
