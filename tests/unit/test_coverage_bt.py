"""A seeded slice of bench/coverage_bt.py: the Bradley-Terry intervals keep their level when
items differ, where intervals that take comparisons as independent do not (best-worst
answers, whose implied pairs share one answer), and when raters with their own taste answer
many items, where intervals clustered by item only do not."""

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


def test_raters_with_taste_need_the_participant_clustering():
    """Each rater answers ~30 items with their own taste for each system: clustered by item
    only the intervals fall short; by item and participant they cover."""
    found = coverage(Design(4, 30, 0.3, taste=0.8), studies=100, seed=3)
    assert 0.90 <= found.difference <= 0.99 and 0.90 <= found.strength <= 0.99
    assert found.difference_items < 0.88 and found.strength_items < 0.88
    assert found.two_way > 0.9
