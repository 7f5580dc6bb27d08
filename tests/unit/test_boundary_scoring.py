"""The RoFT points rule on every case, the timings, and the profile chart's geometry."""

from datetime import UTC, datetime, timedelta

import pytest

from annotation.kinds.boundary.charts import points_chart
from stats.boundary import boundary_points, seconds_per_sentence


@pytest.mark.parametrize(
    ("guess", "boundary", "points"),
    [
        (1, 4, 0),  # early, far
        (3, 4, 0),  # early by one: still nothing
        (4, 4, 5),  # exact
        (5, 4, 4),  # one late
        (6, 4, 3),
        (7, 4, 2),
        (8, 4, 1),
        (9, 4, 0),  # five late: nothing left
        (10, 4, 0),  # kept "human" to the end of a passage with a machine part
        (8, 6, 3),
        (10, 7, 2),  # "all human" on a passage whose machine part is three sentences long
        (1, 1, 5),  # the machine took over right after the first sentence
        (10, 10, 5),  # all-human passage, guessed right
        (9, 10, 0),  # all-human passage, last sentence called machine
        (1, 10, 0),  # all-human passage, called at once
    ],
)
def test_points_table(guess, boundary, points):
    assert boundary_points(guess, boundary) == points


def test_points_never_negative_and_never_above_five():
    values = {boundary_points(g, b) for b in range(1, 21) for g in range(1, 21)}
    assert min(values) == 0 and max(values) == 5


def test_seconds_per_sentence_run_from_each_reveal_to_the_next_and_the_last_to_the_guess():
    start = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    reveals = [start, start + timedelta(seconds=4), start + timedelta(seconds=10.5)]
    assert seconds_per_sentence(reveals, start + timedelta(seconds=12)) == [4.0, 6.5, 1.5]
    assert seconds_per_sentence(reveals[:1], start - timedelta(seconds=1)) == [0.0]  # skew: never negative


def test_chart_bars_scale_with_points_and_line_tracks_running_average():
    chart = points_chart([5, 0, 2.5], width=300, height=112, pad=6)
    full, empty, half = chart.bars
    assert full.height == 100 and full.y == 6  # the whole plot height
    assert empty.height < 2  # a sliver, so a 0 is still visible
    assert half.height == 50
    ys = [float(point.split(",")[1]) for point in chart.average_line.split()]
    assert ys == [6.0, 56.0, pytest.approx(6 + 100 * (1 - 2.5 / 5))]  # averages 5, 2.5, 2.5
    assert points_chart([]).bars == []
