"""The Bradley-Terry report rows (scoring/reports/strengths.py) without a database."""

from scoring.reports.strengths import strength_rows
from stats import bradley_terry as bt


def test_a_system_never_compared_gets_no_row_and_counts_in_no_rank_interval():
    first = [0, 1, 0, 1, 0, 1, 0, 1]
    second = [1, 0, 1, 0, 1, 0, 1, 0]
    outcome = [1, 1, 1, 0, 1, 0, 0.5, 1]
    compared = bt.comparisons(first, second, outcome, [0, 0, 1, 1, 2, 2, 3, 3])
    rows = strength_rows("questionnaire", {"question": "q"}, ["a", "b", "c"], compared)
    ranks = [r for r in rows if r.metric == "questionnaire.rank"]
    assert {r.group["system"] for r in ranks} == {"a", "b"}
    assert all(1 <= r.ci_low <= r.ci_high <= 2 for r in ranks)
    strengths = [r for r in rows if r.metric == "questionnaire.strength"]
    assert [r.group["system"] for r in strengths] == ["a", "b"]  # strongest first
    assert strengths[0].details["ties"] == "halves" and strengths[0].ci_low < strengths[0].value


def test_comparisons_on_one_item_give_strengths_without_intervals():
    compared = bt.comparisons([0, 1, 0], [1, 0, 1], [1, 0, 0], [4, 4, 4])
    rows = strength_rows("ranking", {"criterion": "c"}, ["a", "b"], compared)
    assert [r.metric for r in rows] == ["ranking.strength", "ranking.strength"]
    assert all(r.ci_low is None and "two or more items" in r.details["note"] for r in rows)
