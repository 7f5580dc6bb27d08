"""The reports' hot helpers give the same figures with fewer passes over a million values:
distinct counts without per-value codes, one overall mean without grouping, agreement
observations that repeat one question object instead of a million copies."""

import numpy as np
import pytest

from bench.answer_bootstrap import grouped_means, overall_mean
from scoring.reports.base import Columns, observation_columns, stacked
from stats.counting import count_distinct, distinct_counts, integer_codes, row_numbers
from stats.groups import factorize, first_given


@pytest.mark.parametrize(
    "values",
    [
        np.array([3.0, 1.0, 3.0, 5.0, 1.0]),  # floats with a gap (no 2, no 4)
        np.array([2, 0, 1, 1, 0], dtype=np.intp),  # codes from 0, every value present
        np.array([7, 5, 5, 9], dtype=np.int16),  # whole numbers off zero
        np.array([0.5, 1.5, 0.5]),  # a whole-number grid shifted by a half
        np.array([True, False, True]),
    ],
)
def test_integer_codes_match_a_sort(values):
    distinct, counts, codes = integer_codes(values)
    expected, expected_codes, expected_counts = np.unique(values, return_inverse=True, return_counts=True)
    assert distinct.tolist() == expected.astype(distinct.dtype).tolist()
    assert counts.tolist() == expected_counts.tolist()
    assert codes.tolist() == expected_codes.ravel().tolist()
    assert integer_codes(values, codes=False)[2] is None
    assert integer_codes(values, codes=False)[1].tolist() == counts.tolist()
    assert [a.tolist() for a in distinct_counts(values)] == [distinct.tolist(), counts.tolist()]
    assert count_distinct(values) == len(expected)


def test_codes_that_are_codes_already_come_back_unchanged():
    codes = np.array([1, 0, 2, 2], dtype=np.intp)
    assert factorize(codes)[1].tolist() == [1, 0, 2, 2]
    assert codes.tolist() == [1, 0, 2, 2]
    assert integer_codes(np.array([0.3, 0.7])) is None  # not on a whole-number grid


def test_the_overall_mean_is_the_one_group_of_grouped_means():
    rng = np.random.default_rng(3)
    for values in (rng.integers(0, 6, 5000).astype(float), rng.normal(size=300)):
        values[::17] = np.nan
        (group,) = grouped_means(values, np.zeros(len(values), dtype=np.int8), label="m")
        overall = overall_mean(values, label="m")
        assert (overall.key, overall.mean, overall.sd, overall.n, overall.ci) == (
            (),
            group.mean,
            group.sd,
            group.n,
            group.ci,
        )
    assert overall_mean(np.array([np.nan])) is None
    assert overall_mean(np.array([2.0]), label="one").n == 1


def test_observations_repeat_one_question_object():
    columns = observation_columns(np.arange(1000), np.arange(1000), "guess", np.ones(1000), "interval")
    question, level = columns["question"], columns["level"]
    assert question.dtype == object and question.tolist() == ["guess"] * 1000
    assert question[0] is question[-1] and level[0] is level[-1] == "interval"


def test_a_repeated_label_is_held_once_through_factorize_take_and_stacking():
    columns = observation_columns(np.arange(6), np.arange(6), "guess", np.arange(6.0), "interval")
    assert columns["question"].strides == (0,)  # one element, not one per row
    labels, codes = factorize(columns["question"])
    assert labels.tolist() == ["guess"] and codes.tolist() == [0] * 6
    for selector in (np.array([True, False, True, True, False, False]), np.array([5, 0])):
        taken = columns.take(selector)
        assert taken["question"].strides == (0,) and taken["level"].strides == (0,)
        assert taken["question"].tolist() == ["guess"] * len(taken["response"])
        assert taken["value"].tolist() == np.arange(6.0)[selector].tolist()
    assert stacked([columns]) is columns  # one question: nothing copied
    two = stacked([columns, observation_columns([1], [1], "reason", [7.0], "nominal")])
    assert two["question"].tolist() == ["guess"] * 6 + ["reason"] and two["value"].tolist()[-1] == 7.0
    plain = Columns({"a": np.array(["x", "x"], dtype=object)}).take(np.array([1]))
    assert plain["a"].tolist() == ["x"]


def test_first_given_is_the_factorisation_of_the_first_non_empty_text():
    first = np.array(["", "gpt2", "", "ctrl", "gpt2", ""], dtype=object)
    second = np.array(["grover", "x", "human", "y", "", ""], dtype=object)
    labels, codes = first_given(factorize(first), factorize(second))
    expected_labels, expected_codes = factorize(np.where(first != "", first, second))
    assert labels.tolist() == expected_labels.tolist() == ["", "ctrl", "gpt2", "grover", "human"]
    assert codes.tolist() == expected_codes.tolist()
    none = np.zeros(0, dtype=object)
    labels, codes = first_given(factorize(none), factorize(none))
    assert len(labels) == 0 and len(codes) == 0


def test_columns_factorise_a_column_once_and_again_once_it_is_replaced():
    columns = Columns({"system": np.array(["b", "a", "b"], dtype=object)})
    labels, codes = columns.factorized("system")
    assert labels.tolist() == ["a", "b"] and codes.tolist() == [1, 0, 1]
    assert columns.factorized("system")[1] is codes  # remembered
    columns.data["system"] = np.array(["c", "c", "a"], dtype=object)
    labels, codes = columns.factorized("system")
    assert labels.tolist() == ["a", "c"] and codes.tolist() == [1, 1, 0]


def test_one_repeated_label_is_factorised_in_one_pass():
    one = np.empty(5000, dtype=object)
    one.fill("guess")
    labels, codes = factorize(one)
    assert labels.tolist() == ["guess"] and not codes.any() and len(codes) == 5000
    one[-1] = "other"  # a label the probe did not see
    labels, codes = factorize(one)
    assert labels.tolist() == ["guess", "other"] and codes[-1] == 1 and not codes[:-1].any()


def test_groups_given_as_codes_of_numbers_are_the_groups_of_the_numbers():
    rng = np.random.default_rng(5)
    labels = np.array([0.1, 0.4, 0.9])
    codes = rng.integers(0, 3, 2000)
    values = rng.integers(0, 6, 2000).astype(float)
    by_value = grouped_means(values, labels[codes], label="p")
    by_code = grouped_means(values, codes, label="p", key_labels=labels)
    assert by_code == by_value
    assert [g.key for g in by_code] == [(0.1,), (0.4,), (0.9,)]


def test_means_of_few_whole_numbers_come_from_counts_in_any_order():
    """Points and 0/1 shares per group: the means and intervals are those of the values, the
    sd equal to the last bits, and the figures no longer depend on the rows' order."""
    from stats import bootstrap

    rng = np.random.default_rng(8)
    values = rng.integers(0, 6, 30000).astype(float)
    groups = rng.integers(0, 7, 30000)
    counted = grouped_means(values, groups, label="points")
    for group in counted:
        part = values[groups == group.key[0]]
        assert group.mean == part.mean() and group.n == part.size
        assert group.sd == pytest.approx(part.std(ddof=1), rel=1e-12)
        assert group.ci == bootstrap.mean_ci(part, seed=bootstrap.seed_for("points", group.key))
    shuffled = rng.permutation(len(values))
    assert grouped_means(values[shuffled], groups[shuffled], label="points") == counted
    assert bootstrap.mean_ci_from_counts(np.array([3.0]), np.array([1])) is None
    assert bootstrap.mean_ci_from_counts(np.array([3.0]), np.array([4])).low == 3.0


def test_other_values_are_still_grouped_one_group_at_a_time():
    values = np.array([0.25, 0.5, 0.75, 1.5, 2.0, 0.1])
    groups = np.array([0, 0, 0, 1, 1, 1])
    means = grouped_means(values, groups, label="x")
    assert [m.mean for m in means] == [values[:3].mean(), values[3:].mean()]
    assert [m.sd for m in means] == [values[:3].std(ddof=1), values[3:].std(ddof=1)]


@pytest.mark.parametrize(
    ("ids", "values"),
    [
        (np.array([10, 11, 13, 14]), np.array([14.0, 10.0, 13.0, 13.0, 11.0])),  # floats for ints
        (np.array([10.0, 11.0, 13.0]), np.array([13.0, 10.0])),  # float ids (the item cache's)
        (np.array([10, 11, 13]), np.array([12.0, 13.0])),  # 12 is no id: the search's insertion point
        (np.array([10, 11, 13]), np.array([9.0, 20.0])),  # outside the ids
        (np.array([10, 11, 13]), np.array([10.5, np.nan])),  # not whole numbers
        (np.array([10, 10, 11]), np.array([10.0, 11.0])),  # a repeated id: the first, as searched
        (np.array([1, 10**9]), np.array([10.0**9, 1.0])),  # a wide span: searched
        (np.array([], dtype=np.int64), np.array([1.0])),
        (np.array([3, 4]), np.array([], dtype=np.float64)),
    ],
)
def test_row_numbers_are_the_sorted_search(ids, values):
    rows = row_numbers(ids, values)
    assert rows.dtype == np.intp
    assert rows.tolist() == np.searchsorted(ids, values).tolist()
