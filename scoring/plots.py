"""Dashboard plots drawn on the server: matplotlib's object API on the Agg/SVG canvas.

No pyplot (no global state, safe in a threaded web process). Input is plain report
rows (metric, group, value, CI); output an SVG document as text.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.reports.base import PlotSpec

WIDTH, HEIGHT = 7.2, 3.6
COLOURS = ("#2457c5", "#d9822b", "#1f7a3d", "#b3261e", "#7048b6", "#5b6672", "#0f8b8d", "#a0522d")


@dataclass(frozen=True)
class Point:
    """One drawn value: ``x`` and ``hue`` from the group, the value and its CI."""

    x: Any  # a group value: a number on the histograms and lines, any JSON value elsewhere
    hue: object
    value: float
    low: float | None
    high: float | None


def plotted(spec: PlotSpec, row) -> bool:
    """Whether a report row is one of the plot's figures: its metric, grouped by exactly
    the plot's keys (a pooled or otherwise grouped figure of the same metric is not)."""
    return row.metric == spec.metric and set(row.group) == {
        spec.x,
        *([spec.hue] if spec.hue else []),
        *spec.fixed,
    }


def points_for(spec: PlotSpec, rows: Iterable) -> list[Point]:
    """The plot's figures (``plotted``) that are defined, as points."""
    found = []
    for r in rows:
        if not plotted(spec, r) or r.value is None:
            continue
        hue = r.group.get(spec.hue) if spec.hue else ""
        found.append(Point(r.group[spec.x], hue, float(r.value), r.ci_low, r.ci_high))
    return found


def render_svg(spec: PlotSpec, points: list[Point]) -> str:
    """The plot as an SVG document."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH, HEIGHT))
    FigureCanvasSVG(figure)
    axes = figure.add_subplot()
    draw = {"histogram": _histogram, "line": _lines, "bar": _bars}[spec.style]
    draw(axes, points)
    axes.set_title(spec.title, fontsize=11, loc="left")
    axes.set_xlabel(spec.x.replace("_", " "))
    axes.set_ylabel(spec.ylabel)
    axes.spines[["top", "right"]].set_visible(False)
    axes.grid(axis="y", color="#d7dde3", linewidth=0.6)
    axes.set_axisbelow(True)
    if spec.hue and len({p.hue for p in points}) > 1:
        # Beside the axes, not over them: inside, "best" still covered a bar of the last group.
        axes.legend(
            title=spec.hue.replace("_", " "),
            fontsize=8,
            title_fontsize=8,
            frameon=False,
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
        )
    figure.tight_layout()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _histogram(axes, points: list[Point]) -> None:
    points = sorted(points, key=lambda p: p.x)
    xs = [p.x for p in points]
    axes.bar(xs, [p.value for p in points], width=0.85, color=COLOURS[0])
    axes.axvline(0, color="#1d232b", linewidth=0.8, linestyle=":")
    axes.set_xticks(xs)


def _lines(axes, points: list[Point]) -> None:
    from matplotlib.ticker import MaxNLocator

    for index, hue in enumerate(_levels(p.hue for p in points)):
        mine = sorted((p for p in points if p.hue == hue), key=lambda p: p.x)
        xs = np.array([p.x for p in mine], dtype=float)
        ys = np.array([p.value for p in mine])
        colour = COLOURS[index % len(COLOURS)]
        axes.plot(xs, ys, marker="o", markersize=3.5, color=colour, label=str(hue) if hue != "" else None)
        low, high = _error_band(mine)
        if low is not None:
            axes.fill_between(xs, low, high, color=colour, alpha=0.15, linewidth=0)
    if all(isinstance(p.x, int) for p in points):
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))


def _bars(axes, points: list[Point]) -> None:
    categories = _levels(p.x for p in points)
    hues = _levels(p.hue for p in points)
    width = 0.8 / max(len(hues), 1)
    for index, hue in enumerate(hues):
        mine = {p.x: p for p in points if p.hue == hue}
        xs = [c for c in categories if c in mine]
        positions = [categories.index(c) - 0.4 + width * (index + 0.5) for c in xs]
        values = [mine[c].value for c in xs]
        errors = _bar_errors([mine[c] for c in xs])
        axes.bar(
            positions,
            values,
            width=width * 0.92,
            color=COLOURS[index % len(COLOURS)],
            yerr=errors,
            capsize=2,
            error_kw={"elinewidth": 0.8, "ecolor": "#1d232b"},
            label=str(hue) if hue != "" else None,
        )
    axes.set_xticks(
        range(len(categories)), [str(c) for c in categories], rotation=20 if len(categories) > 5 else 0
    )
    axes.axhline(0, color="#1d232b", linewidth=0.6)


def _levels(values: Iterable) -> list:
    distinct = set(values)
    return sorted(distinct, key=lambda v: (0, v, "") if isinstance(v, int | float) else (1, 0, str(v)))


def _error_band(points: list[Point]):
    if any(p.low is None or p.high is None for p in points):
        return None, None
    return np.array([p.low for p in points]), np.array([p.high for p in points])


def _bar_errors(points: list[Point]):
    if not points or any(p.low is None or p.high is None for p in points):
        return None
    below = [max(0.0, p.value - p.low) for p in points if p.low is not None]
    above = [max(0.0, p.high - p.value) for p in points if p.high is not None]
    return np.array([below, above])
