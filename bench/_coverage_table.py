"""The common row shape of ``bench/coverage.py``'s one table, and how a row passes.

Every family's ``rows(quick)`` returns dicts with these keys (missing ones print as "—"):

- ``family``, ``figure``: what is measured;
- ``icc`` (the items' share of the variance, or the design's own parameter as text, e.g.
  "item SD 0.6"), ``systems``, ``items`` (per system unless the figure says otherwise), ``runs``;
- ``measure``: ``coverage`` (of a 95% interval), ``FWER`` or ``false stops`` (share of studies
  with a false rejection), ``power gap`` (realised − planned power), ``width gap`` (realised /
  planned width − 1); ``excess width`` (the largest relative excess of one interval's width
  over another's in any run: PPI++ over humans-only);
- ``before`` (the same measure for the method before issue 37, None if there was none),
  ``value``, ``target`` (text), ``mc_error`` (one Monte-Carlo standard error), ``passed``.

``passed``: coverage within 0.93–0.97 widened by two MC errors (a row of R runs misses its
band by chance about 5% of the time otherwise); a simultaneous coverage (rank intervals) at
least 0.95 − 2 MC; a false-rejection rate at most 0.05 + 2 MC; a power gap within ±0.03 +
2 MC; a width gap within ±0.10 + 2 MC; an excess width at most 0.02 (a worst case: no MC error).
"""

from __future__ import annotations

import math

COVERAGE = (0.93, 0.97)
LEVEL = 0.05
POWER_GAP = 0.03
WIDTH_GAP = 0.10
EXCESS_WIDTH = 0.02


def result(
    family: str,
    figure: str,
    icc,
    systems,
    items,
    runs: int,
    value: float,
    *,
    before: float | None = None,
    measure: str = "coverage",
    mc_error: float | None = None,
) -> dict:
    """One row, its target and verdict from ``measure``."""
    if measure == "coverage":
        error = mc_error if mc_error is not None else math.sqrt(0.95 * 0.05 / max(runs, 1))
        target, passed = (
            f"{COVERAGE[0]}–{COVERAGE[1]}",
            COVERAGE[0] - 2 * error <= value <= COVERAGE[1] + 2 * error,
        )
    elif measure == "joint coverage":
        error = mc_error if mc_error is not None else math.sqrt(0.95 * 0.05 / max(runs, 1))
        target, passed = "≥ 0.95", value >= 0.95 - 2 * error
    elif measure in ("FWER", "false stops"):
        error = mc_error if mc_error is not None else math.sqrt(LEVEL * (1 - LEVEL) / max(runs, 1))
        target, passed = f"≤ {LEVEL}", value <= LEVEL + 2 * error
    elif measure == "power gap":
        error = mc_error or 0.0
        target, passed = f"±{POWER_GAP}", abs(value) <= POWER_GAP + 2 * error
    elif measure == "excess width":
        error = mc_error or 0.0
        target, passed = f"≤ {EXCESS_WIDTH}", value <= EXCESS_WIDTH
    elif measure == "width gap":
        error = mc_error or 0.0
        target, passed = f"±{WIDTH_GAP}", abs(value) <= WIDTH_GAP + 2 * error
    else:
        raise ValueError(f"unknown measure {measure!r}")
    return {
        "family": family,
        "figure": figure,
        "icc": icc,
        "systems": systems,
        "items": items,
        "runs": runs,
        "measure": measure,
        "before": before,
        "value": value,
        "target": target,
        "mc_error": error,
        "passed": bool(passed),
    }


COLUMNS = (
    "family",
    "figure",
    "ICC",
    "systems",
    "items/system",
    "runs",
    "measure",
    "before",
    "now",
    "target",
    "MC error",
    "pass",
)


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "pass" if value else "FAIL"
    if isinstance(value, float):
        return f"{value:+.3f}" if value < 0 else f"{value:.3f}"
    return str(value)


def table_lines(rows: list[dict]) -> list[str]:
    """The markdown table of ``rows``."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    keys = (
        "family",
        "figure",
        "icc",
        "systems",
        "items",
        "runs",
        "measure",
        "before",
        "value",
        "target",
        "mc_error",
        "passed",
    )
    for row in rows:
        cells = []
        for key in keys:
            value = row.get(key)
            if key == "icc" and isinstance(value, float):
                cells.append(f"{value:g}")
            elif key == "passed":
                cells.append(_cell(bool(value)) if value is not None else "—")
            else:
                cells.append(_cell(value))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def print_table(rows: list[dict]) -> None:
    print("\n".join(table_lines(rows)), flush=True)
