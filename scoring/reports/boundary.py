"""RoFT boundary game: points, exact hits, distances, agreement between players, skill."""

from __future__ import annotations

import numpy as np

from stats import boundary as roft
from stats.clustered import clustered_group_means, clustered_mean, unit_cells
from stats.estimate import Estimate
from stats.groups import factorize, first_given, plain

from .base import (
    Columns,
    Field,
    KindReport,
    PlotSpec,
    ReportRow,
    StudyData,
    TableSpec,
    mean_row,
    row,
)

# Orders (rounds in a player's history) beyond this are not reported one by one.
MAX_ORDER = 50
# Decoding p is grouped to two decimals, or one when that still leaves too many groups.
MAX_P_GROUPS = 25
# What each mean's interval is clipped to: points 0-5 and the exact rate 0-1 (distances are
# not bounded in advance).
BOUNDS = {"boundary.mean_points": (0.0, 5.0), "boundary.exact_rate": (0.0, 1.0)}


class BoundaryReport(KindReport):
    response_fields = {"guess": Field("answer__guess"), "order": Field("score_details__order")}
    item_fields = {
        "boundary": Field("payload__boundary"),
        "p": Field("payload__p"),
        "category": Field("payload__category", "text"),
        "model": Field("payload__model", "text"),
        "system": Field("provenance__system", "text"),
    }
    tables = (
        TableSpec(
            "The game at a glance",
            (
                "boundary.mean_points",
                "boundary.exact_rate",
                "boundary.mean_distance",
                "boundary.mean_distance_after",
                "boundary.pairwise_same",
                "boundary.pairwise_within_one",
            ),
            (),
        ),
        TableSpec("By generator", ("boundary.mean_points", "boundary.exact_rate"), ("generator",)),
        TableSpec("By category", ("boundary.mean_points", "boundary.exact_rate"), ("category",)),
        TableSpec(
            "Player skill (mean points per player)",
            (
                "boundary.player_median_points",
                "boundary.player_top5_points",
                "boundary.player_bottom5_points",
            ),
            (),
        ),
    )
    plots = (
        PlotSpec(
            "distance",
            "Guess − boundary (sentences)",
            "boundary.distance_histogram",
            "distance",
            style="histogram",
            ylabel="guesses",
        ),
        PlotSpec(
            "points-by-order",
            "Mean points by round in the player's history",
            "boundary.mean_points",
            "order",
            style="line",
            ylabel="points",
        ),
        PlotSpec(
            "points-by-p",
            "Mean points by nucleus-sampling p",
            "boundary.mean_points",
            "p",
            style="line",
            ylabel="points",
        ),
    )

    def rows(self, data: StudyData, *, embed=None) -> list[ReportRow]:
        responses, items = data.responses, data.items
        item = responses["item"]
        boundary = items["boundary"][item]
        guess = responses["guess"]
        distance = guess - boundary
        points, unscored = responses["points"], np.isnan(responses["points"])
        if unscored.any():  # scored by the rule where the stored points are missing
            points = np.where(unscored, roft.points_for_guesses(guess, boundary), points)
        exact = (distance == 0).astype(float)
        # every mean's interval clusters by passage and player (players play many passages);
        # their cells found once for every grouping
        player = responses["participant"]
        design = (item, player, unit_cells(item, player))
        rows = _summary_rows(points, distance, exact, design)
        # per item (cheaper than per response), from the items' codes
        for key, (labels, codes) in (
            ("generator", _generator(items)),
            ("category", items.factorized("category")),
        ):
            groups = codes[item]
            rows += _grouped("boundary.mean_points", key, points, groups, design, labels)
            rows += _grouped("boundary.exact_rate", key, exact, groups, design, labels)
        # p per item (a few values), then looked up per response
        p_labels, p_codes = factorize(_p_groups(items["p"], np.bincount(item, minlength=len(items)) > 0))
        rows += _grouped_by_value("boundary.mean_points", "p", points, p_codes[item], p_labels, design)
        order = responses["order"]
        known = ~np.isnan(order) & (order <= MAX_ORDER)
        rows += _grouped(
            "boundary.mean_points",
            "order",
            points[known],
            order[known].astype(np.int64),
            tuple(column[known] for column in design),
        )
        rows += _histogram_rows(distance)
        rows += _pairwise_rows(item, guess)
        rows += _skill_rows(responses["participant"], points)
        return rows


def _summary_rows(
    points: np.ndarray, distance: np.ndarray, exact: np.ndarray, design: tuple[np.ndarray, ...]
) -> list[ReportRow]:
    rows = []
    figures = {
        "boundary.mean_points": points,
        "boundary.exact_rate": exact,
        "boundary.mean_distance": distance,
        "boundary.mean_distance_after": np.where(distance >= 0, distance, np.nan),
    }
    for metric, values in figures.items():
        units, players, cells = design
        mean = clustered_mean(values, units, players, bounds=BOUNDS.get(metric), cells=cells)
        if mean is None:
            rows.append(row(metric, {}, Estimate.undefined("no guesses")))
        else:
            rows.append(mean_row(metric, {}, mean))
    return rows


def _grouped(
    metric: str,
    key: str,
    values: np.ndarray,
    groups: np.ndarray,
    design: tuple[np.ndarray, ...],
    labels: np.ndarray | None = None,
) -> list[ReportRow]:
    """A mean (with a CI clustered by ``design``: each response's passage and player) per
    group; ``groups`` are values, or codes into ``labels``. Responses without a group value
    (NaN, empty label) are left out."""
    keep = ~np.isnan(values)
    if labels is not None:
        keep &= (labels != "")[groups]  # per label, then looked up: no string compared per response
    elif groups.dtype.kind == "f":
        keep &= ~np.isnan(groups)
    units, players, cells = design
    if not keep.all():  # else no copy of a million values and groups
        values, groups, units, players, cells = (a[keep] for a in (values, groups, units, players, cells))
    means = clustered_group_means(values, groups, units, players, bounds=BOUNDS.get(metric), cells=cells)
    name = (lambda code: labels[code]) if labels is not None else (lambda value: value)
    return [mean_row(metric, {key: name(mean.key[0])}, mean) for mean in means]


def _grouped_by_value(
    metric: str,
    key: str,
    values: np.ndarray,
    codes: np.ndarray,
    labels: np.ndarray,
    design: tuple[np.ndarray, ...],
) -> list[ReportRow]:
    """``_grouped`` by numbers given as ``codes`` into their sorted distinct ``labels``: each
    group keyed by its number, as if the numbers had been given; NaN is no group."""
    units, players, cells = design
    keep = ~np.isnan(values) & ~np.isnan(labels)[codes]
    if not keep.all():
        values, codes, units, players, cells = (a[keep] for a in (values, codes, units, players, cells))
    means = clustered_group_means(values, codes, units, players, bounds=BOUNDS.get(metric), cells=cells)
    return [mean_row(metric, {key: plain(labels[mean.key[0]])}, mean) for mean in means]


def _histogram_rows(distance: np.ndarray) -> list[ReportRow]:
    histogram = roft.distance_histogram(distance)
    total = sum(histogram.values())
    return [
        row(
            "boundary.distance_histogram",
            {"distance": d},
            Estimate(float(count), n=total),
            share=count / total,
        )
        for d, count in sorted(histogram.items())
    ]


def _pairwise_rows(item: np.ndarray, guess: np.ndarray) -> list[ReportRow]:
    same, within_one = roft.pairwise_agreement(item, guess)
    return [row("boundary.pairwise_same", {}, same), row("boundary.pairwise_within_one", {}, within_one)]


def _skill_rows(participant: np.ndarray, points: np.ndarray) -> list[ReportRow]:
    skill = roft.player_skill(participant, points)
    return [
        row("boundary.player_median_points", {}, skill["median"]),
        row("boundary.player_top5_points", {}, skill["top"]),
        row("boundary.player_bottom5_points", {}, skill["bottom"]),
    ]


def _generator(items: Columns) -> tuple[np.ndarray, np.ndarray]:
    """The passage's generator: ``payload.model``, else the provenance's system; factorised
    (as ``factorize`` gives it)."""
    return first_given(items.factorized("model"), items.factorized("system"))


def _p_groups(p: np.ndarray, answered: np.ndarray) -> np.ndarray:
    """Each item's p to two decimals, or to one when the items with answers (``answered``)
    would otherwise fall into more than ``MAX_P_GROUPS`` groups."""
    rounded = np.round(p, 2)
    if np.unique(rounded[answered & ~np.isnan(rounded)]).size > MAX_P_GROUPS:
        rounded = np.round(p, 1)
    return rounded
