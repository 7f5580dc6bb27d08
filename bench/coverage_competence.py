"""Do the competence intervals of the reports cover the truth, and do they keep a random
clicker from ranking above consistent annotators? (issue 37; docs/statistics.md has the table)

Simulated panels, seeded, through the functions the reports use (``stats.competence`` with
the reports' MACE settings, ``stats.competence_intervals``: a percentile bootstrap over items
with ``RESAMPLES`` refits, by ``stats.competence_refits`` as the reports refit):

  nominal rows: K categories, a uniform truth; ``annotators`` annotators, ``per_item`` of them
      (drawn without replacement) answer each item; annotator a knows the answer with
      probability θ_a ~ U(0.3, 0.95) and otherwise picks a category at random (MACE's own
      model), one of them a random clicker (θ = 0). Targets: MACE's competence is θ_a,
      Dawid–Skene's is the probability of a right answer, θ_a + (1 − θ_a)/K.
  ordinal rows: a 7-point scale, a uniform truth; answers round(truth + N(0, s_a)) clipped
      to 1..7, s_a ~ U(0.4, 2), the clicker uniform on 1..7. Target: the median correlation
      the same annotators reach on ``TRUTH_ITEMS`` items (the population value).

Per row: coverage of the 95% intervals of the annotators other than the clicker (every one
with enough answers, every panel) and their mean width, the clicker's coverage apart (MACE's
target for the clicker, θ = 0, lies on the boundary that a posterior mean never reaches),
and how often the clicker ranks above the least consistent annotator by the
point estimate and by the interval's lower end (the participants page's sort).

    .venv/bin/python bench/coverage_competence.py [--panels 100] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stats.competence import Answers, dawid_skene, mace
from stats.competence_intervals import (
    OrdinalAnswers,
    bootstrap_median_correlation,
    item_resamples,
    median_correlation,
    percentile_bounds,
)
from stats.competence_refits import bootstrap_dawid_skene, bootstrap_mace

TRUTH_ITEMS = 20_000
REPORT_MACE = {"restarts": 2, "tolerance": 1e-5}


@dataclass(frozen=True)
class Panel:
    """Simulated answers, each annotator's target value per measure, and the clicker's code."""

    answers: Answers
    targets: dict[str, np.ndarray]
    clicker: int


def nominal_panel(
    rng: np.random.Generator, items: int, categories: int, annotators: int = 6, per_item: int = 3
) -> Panel:
    """MACE's generative model with one random clicker (annotator 0)."""
    knowing = rng.uniform(0.3, 0.95, annotators)
    knowing[0] = 0.0
    truth = rng.integers(0, categories, items)
    unit, annotator = _design(rng, items, annotators, per_item)
    knows = rng.random(len(unit)) < knowing[annotator]
    label = np.where(knows, truth[unit], rng.integers(0, categories, len(unit)))
    answers = Answers.of(unit, annotator, label, units=items, annotators=annotators, categories=categories)
    accuracy = knowing + (1 - knowing) / categories
    return Panel(answers, {"mace": knowing, "dawid_skene": accuracy}, 0)


def ordinal_panel(rng: np.random.Generator, items: int, annotators: int = 6, per_item: int = 3) -> Panel:
    """A 7-point scale with one random clicker (annotator 0); the target is each annotator's
    median correlation on a very large panel of the same annotators."""
    spread = rng.uniform(0.4, 2.0, annotators)

    def draw(count: int) -> Answers:
        truth = rng.integers(0, 7, count)
        unit, annotator = _design(rng, count, annotators, per_item)
        noisy = np.clip(np.round(truth[unit] + rng.normal(0, spread[annotator])), 0, 6).astype(np.int64)
        label = np.where(annotator == 0, rng.integers(0, 7, len(unit)), noisy)
        return Answers.of(unit, annotator, label, units=count, annotators=annotators, categories=7)

    target = median_correlation(OrdinalAnswers.of(draw(TRUTH_ITEMS)))
    return Panel(draw(items), {"median_correlation": target}, 0)


def _design(
    rng: np.random.Generator, items: int, annotators: int, per_item: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each item answered by ``per_item`` annotators drawn without replacement."""
    chosen = np.argsort(rng.random((items, annotators)), axis=1)[:, :per_item]
    return np.repeat(np.arange(items), per_item), chosen.ravel()


def estimate(panel: Panel, measure: str, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The competences the reports compute for ``measure``, and their refits on the resamples
    ``counts`` as the reports refit them (the multiplicities as weights, every resample at
    once, no copies; MACE with the whole panel's restarts and tolerance)."""
    if measure == "mace":
        whole = mace(panel.answers, seed=0, **REPORT_MACE)
        return whole.competence, bootstrap_mace(panel.answers, counts, seed=0, **REPORT_MACE)
    if measure == "dawid_skene":
        return dawid_skene(panel.answers).competence, bootstrap_dawid_skene(panel.answers, counts)
    ordinal = OrdinalAnswers.of(panel.answers)
    return median_correlation(ordinal), bootstrap_median_correlation(ordinal, counts)


@dataclass
class Tally:
    covered: int = 0
    intervals: int = 0
    width: float = 0.0
    clicker_covered: int = 0
    clicker_intervals: int = 0
    clicker_above_by_value: int = 0
    clicker_above_by_low: int = 0
    panels: int = 0

    def row(self) -> dict:
        return {
            "coverage": self.covered / max(self.intervals, 1),
            "intervals": self.intervals,
            "clicker's coverage": self.clicker_covered / max(self.clicker_intervals, 1),
            "mean width": self.width / max(self.intervals, 1),
            "clicker above, by value": self.clicker_above_by_value / max(self.panels, 1),
            "clicker above, by lower end": self.clicker_above_by_low / max(self.panels, 1),
        }


def tally_panel(panel: Panel, measure: str, tally: Tally, *, seed: int, resamples: int) -> None:
    """Add one panel's intervals for ``measure`` to ``tally``."""
    counts = item_resamples(panel.answers.units, resamples=resamples, seed=seed)
    value, replicates = estimate(panel, measure, counts)
    bounds = percentile_bounds(replicates)
    target = panel.targets[measure]
    shown = np.isfinite(value) & np.isfinite(bounds.low)
    covered = (bounds.low <= target) & (target <= bounds.high)
    consistent = shown & (np.arange(len(value)) != panel.clicker)
    tally.intervals += int(consistent.sum())
    tally.covered += int(covered[consistent].sum())
    tally.width += float((bounds.high - bounds.low)[consistent].sum())
    tally.clicker_intervals += int(shown[panel.clicker])
    tally.clicker_covered += int(covered[panel.clicker] and shown[panel.clicker])
    others = [code for code in range(len(value)) if code != panel.clicker and shown[code]]
    if shown[panel.clicker] and others:
        tally.panels += 1
        weakest = min(others, key=lambda code: target[code])  # the least consistent annotator
        tally.clicker_above_by_value += int(value[panel.clicker] > value[weakest])
        tally.clicker_above_by_low += int(bounds.low[panel.clicker] > bounds.low[weakest])


def run(panels: int, seed: int, resamples: int, rows) -> list[tuple[str, dict]]:
    table = []
    for name, build, measures in rows:
        tallies = {measure: Tally() for measure in measures}
        rng = np.random.default_rng(seed)
        for number in range(panels):
            panel = build(rng)
            for measure in measures:
                tally_panel(
                    panel, measure, tallies[measure], seed=seed * 100_000 + number, resamples=resamples
                )
        table += [(f"{name}, {measure}", tally.row()) for measure, tally in tallies.items()]
    return table


ROWS = [
    ("binary, 40 items", lambda rng: nominal_panel(rng, 40, 2), ("mace", "dawid_skene")),
    ("3 categories, 40 items", lambda rng: nominal_panel(rng, 40, 3), ("mace", "dawid_skene")),
    ("3 categories, 150 items", lambda rng: nominal_panel(rng, 150, 3), ("mace", "dawid_skene")),
    ("7-point scale, 40 items", lambda rng: ordinal_panel(rng, 40), ("median_correlation",)),
    ("7-point scale, 150 items", lambda rng: ordinal_panel(rng, 150), ("median_correlation",)),
]


def rows(quick: bool, panels: int | None = None, seed: int = 1) -> list[dict]:
    """The family's rows in ``bench/coverage.py``'s common shape (``quick``: two rows of 10
    panels, 50 resamples; else every row, 50 panels, 100 resamples). Coverage of the
    intervals of the annotators other than the clicker; runs = intervals counted."""
    from bench._coverage_table import result

    panels = panels or (10 if quick else 50)
    chosen = [ROWS[0], ROWS[3]] if quick else ROWS
    found = []
    for name, figures in run(panels, seed, 50 if quick else 100, chosen):
        row, measure = name.rsplit(", ", 1)
        found.append(
            result(
                "competence", f"{measure} ({row})", "—", "—", "—", figures["intervals"], figures["coverage"]
            )
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--panels", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resamples", type=int, default=100)
    args = parser.parse_args()
    started = time.perf_counter()
    table = run(args.panels, args.seed, args.resamples, ROWS)
    columns = list(table[0][1])
    print(f"{args.panels} panels per row, seed {args.seed}, {args.resamples} resamples\n")
    print("| row | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, figures in table:
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in figures.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
