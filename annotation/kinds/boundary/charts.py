"""A small points-over-time chart drawn as SVG by the template (no script, no CDN).

Pure geometry: the template only places the rectangles and the line computed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_POINTS = 5
MIN_SLOTS = 20


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    points: float


@dataclass(frozen=True)
class PointsChart:
    width: int
    height: int
    bars: list[Bar] = field(default_factory=list)
    average_line: str = ""  # SVG polyline points: the running average after each round
    gridlines: list[tuple[int, float]] = field(default_factory=list)  # (points, y)


def points_chart(points: list[float], *, width: int = 640, height: int = 160, pad: int = 6) -> PointsChart:
    """One bar per round (0 to 5 points) and the running average as a line."""
    plot = height - 2 * pad
    gridlines = [(value, round(pad + plot * (1 - value / MAX_POINTS), 1)) for value in range(MAX_POINTS + 1)]
    if not points:
        return PointsChart(width, height, gridlines=gridlines)
    slot = (width - 2 * pad) / max(len(points), MIN_SLOTS)  # a few rounds still get slim bars
    bars, line, total = [], [], 0.0
    for index, value in enumerate(points):
        share = min(max(value, 0.0), MAX_POINTS) / MAX_POINTS
        x = pad + index * slot
        bar_height = max(plot * share, 1.5)
        top = pad + plot - bar_height
        bars.append(
            Bar(round(x + slot * 0.15, 1), round(top, 1), round(slot * 0.7, 1), round(bar_height, 1), value)
        )
        total += value
        average = total / (index + 1)
        line.append(f"{x + slot / 2:.1f},{pad + plot * (1 - average / MAX_POINTS):.1f}")
    return PointsChart(width, height, bars, " ".join(line), gridlines)
