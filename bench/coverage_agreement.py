"""Coverage of the agreement intervals on simulated studies where items and participants repeat.

Two designs, both on a 1-7 scale, ``items`` items per system and 2 or 4 systems (a system
moves its items' ratings by ``SYSTEM_SPREAD`` steps between the first and the last):

- **crowd**: each item answered by 3 participants drawn from a pool sized so that a
  participant answers about 30 items (participants cross items); a rating is
  ``clip(round(4 + s_system + u_item + b_participant + σ_item e), 1, 7)`` with
  u ~ N(0, τ²), b ~ N(0, 0.3²), e ~ N(0, 1) and an item's own noise σ_item =
  1.2 · exp(N(0, 0.4²)) (items differ in difficulty as well as in level); τ is set so that
  the items' share of the latent variance is the row's ICC (as ``bench/coverage.py``).
  Figures: ordinal Krippendorff's alpha and within-1 agreement of the scope (every item of
  the question). The truth is the figure of one study of 40,000 items of the same design.
- **team**: 4 annotators (fixed leniencies −0.3, 0, 0.1, 0.4, the same in every study) rate
  every item, ratings as above. Figures: the mean pairwise Cohen's kappa (quadratic
  weights) and ICC(2,k). The estimand is these annotators' agreement over items in
  general; the truth is the figure on 40,000 items.

Before this change alpha and ICC had no interval ("—"), the mean kappa's interval resampled
the 6 pairs of annotators as if independent, and within-1's resampled the pairs of answers
as if independent; now every one resamples items with all their answers
(``stats.agreement.alpha_interval``, ``stats.kappa.resampled_kappas``,
``stats.reliability.within_points_interval``, ``icc_2k_interval``).

The plan row checks that ``plan --agreement-width`` predicts the interval the reports show:
``stats.planning.width_table`` from a pilot of 100 items × 3 answers (crowd design, ICC 0.4)
against the mean width of the unit-bootstrap interval of interval-level alpha over studies
of the planned design (``items`` items × 3 answers) drawn from the same population.

    .venv/bin/python bench/coverage_agreement.py [--quick] [--runs 300] [--seed 20261129]

Monte-Carlo error of a coverage p over R runs: √(p(1−p)/R) (0.013 at p = 0.95, R = 300).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._coverage_table import print_table, result
from stats.agreement import alpha_from_value_counts, alpha_interval, value_counts_from_pairs
from stats.bootstrap import mean_ci, seed_for
from stats.kappa import SharedUnits, resampled_kappas
from stats.planning import Answers, width_table
from stats.reliability import icc_2k, icc_2k_interval, within_points_from_value_counts, within_points_interval

NOISE_SD = 1.2
DIFFICULTY_SD = 0.4
LENIENCY_SD = 0.3
SYSTEM_SPREAD = 0.5
ANSWERS_PER_ITEM = 3
ITEMS_PER_PARTICIPANT = 30
TEAM = np.array([-0.3, 0.0, 0.1, 0.4])
TRUTH_ITEMS = 40_000
RESAMPLES = 1000


@dataclass(frozen=True)
class Row:
    icc: float
    systems: int
    items: int  # per system


def item_sd(icc: float) -> float:
    """τ such that τ² / (τ² + LENIENCY_SD² + NOISE_SD²) = icc."""
    return float(np.sqrt(icc / (1 - icc) * (NOISE_SD**2 + LENIENCY_SD**2)))


def _item_levels(row: Row, items: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each item's level (system + own effect) and its noise SD."""
    system = np.repeat(
        np.linspace(-SYSTEM_SPREAD / 2, SYSTEM_SPREAD / 2, row.systems), -(-items // row.systems)
    )
    level = system[:items] + rng.normal(0, item_sd(row.icc), items)
    return level, NOISE_SD * np.exp(rng.normal(0, DIFFICULTY_SD, items))


def _rate(latent: np.ndarray) -> np.ndarray:
    return np.clip(np.round(4 + latent), 1, 7)


def crowd(row: Row, rng: np.random.Generator, items: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(item of each answer, rating): every item answered by 3 of a pool of participants."""
    items = row.items * row.systems if items is None else items
    level, noise = _item_levels(row, items, rng)
    pool = max(ANSWERS_PER_ITEM + 1, round(items * ANSWERS_PER_ITEM / ITEMS_PER_PARTICIPANT))
    item = np.repeat(np.arange(items), ANSWERS_PER_ITEM)
    if pool <= 64:
        participant = np.argsort(rng.random((items, pool)), axis=1)[:, :ANSWERS_PER_ITEM].ravel()
    else:  # three distinct participants per item without an items × pool array
        first = rng.integers(0, pool, items)
        steps = rng.choice(np.arange(1, pool), size=(items, 2), replace=True)
        steps[:, 1] = np.where(steps[:, 1] == steps[:, 0], (steps[:, 0] % (pool - 1)) + 1, steps[:, 1])
        participant = np.column_stack(
            [first, (first + steps[:, 0]) % pool, (first + steps[:, 1]) % pool]
        ).ravel()
    leniency = rng.normal(0, LENIENCY_SD, pool)
    latent = level[item] + leniency[participant] + noise[item] * rng.normal(size=item.size)
    return item, _rate(latent)


def team(row: Row, rng: np.random.Generator, items: int | None = None) -> np.ndarray:
    """Items × annotators ratings of the fixed team."""
    items = row.items * row.systems if items is None else items
    level, noise = _item_levels(row, items, rng)
    latent = level[:, None] + TEAM[None, :] + noise[:, None] * rng.normal(size=(items, len(TEAM)))
    return _rate(latent)


def _shared(table: np.ndarray) -> SharedUnits:
    rows = [(a, b) for a, b in itertools.combinations(range(table.shape[1]), 2)]
    items = np.arange(len(table))
    first = np.repeat([a for a, _ in rows], len(items))
    second = np.repeat([b for _, b in rows], len(items))
    unit = np.tile(items, len(rows))
    codes = table.astype(np.int64) - 1
    return SharedUnits.of(first, second, codes[unit, first], codes[unit, second], min_shared=2, unit=unit)


def _mean_kappa(table: np.ndarray) -> tuple[float, np.ndarray]:
    kappas = _shared(table).kappas(7, "quadratic", np.arange(1.0, 8.0))
    return float(np.nanmean(kappas.value)), kappas.value


@functools.cache
def truths(icc: float, systems: int, seed: int) -> dict[str, float]:
    """Each figure on one study of ``TRUTH_ITEMS`` items (its sampling error is negligible)."""
    rng = np.random.default_rng([seed, int(icc * 100), systems, 1])
    row = Row(icc, systems, TRUTH_ITEMS // systems)
    item, rating = crowd(row, rng)
    counts, domain = value_counts_from_pairs(item, rating)
    table = team(row, rng)
    return {
        "alpha": alpha_from_value_counts(counts, "ordinal", value_domain=domain).value,
        "within_1": within_points_from_value_counts(counts, domain, 1).value,
        "kappa": _mean_kappa(table)[0],
        "icc": icc_2k(table).value,
    }


def run_row(row: Row, runs: int, seed: int, resamples: int = RESAMPLES) -> dict[str, float]:
    """Per figure, the share of ``runs`` studies whose interval covers the truth, before and
    after (NaN where there was no interval before)."""
    truth = truths(row.icc, row.systems, seed)
    rng = np.random.default_rng([seed, int(row.icc * 100), row.systems, row.items])
    hits = {name: 0 for name in ("alpha", "within_old", "within", "kappa_old", "kappa", "icc")}
    for run in range(runs):
        item, rating = crowd(row, rng)
        counts, domain = value_counts_from_pairs(item, rating)
        label = seed_for("coverage-agreement", row, run)
        hits["alpha"] += _covers(
            alpha_interval(counts, "ordinal", value_domain=domain, seed=label, resamples=resamples),
            truth["alpha"],
        )
        within = within_points_from_value_counts(counts, domain, 1)
        agreeing = round(within.value * within.n)
        outcomes = np.repeat([1.0, 0.0], [agreeing, within.n - agreeing])
        hits["within_old"] += _covers(mean_ci(outcomes, seed=label), truth["within_1"])
        hits["within"] += _covers(
            within_points_interval(counts, domain, 1, seed=label, resamples=resamples), truth["within_1"]
        )
        table = team(row, rng)
        shared = _shared(table)
        _, pair_kappas = _mean_kappa(table)
        hits["kappa_old"] += _covers(mean_ci(pair_kappas[~np.isnan(pair_kappas)], seed=label), truth["kappa"])
        resampled = resampled_kappas(
            shared, 7, "quadratic", np.arange(1.0, 8.0), seed=label, resamples=resamples
        )
        hits["kappa"] += _covers(resampled.mean_interval(), truth["kappa"])
        hits["icc"] += _covers(icc_2k_interval(table, seed=label, resamples=resamples), truth["icc"])
    return {name: count / runs for name, count in hits.items()}


def plan_row(
    items: int, runs: int, seed: int, resamples: int = RESAMPLES, pilots: int = 20
) -> dict[str, float]:
    """The width ``plan`` predicts for ``items`` × 3 answers, averaged over ``pilots`` pilots
    of 100 items × 3 answers (one pilot's prediction varies with its own items), against the
    mean width of the reports' interval (unit bootstrap, interval-level alpha) on ``runs``
    studies of that design from the same population."""
    row = Row(0.4, 2, items // 2)
    rng = np.random.default_rng([seed, items, 3])
    planned = []
    for pilot in range(pilots):
        pilot_item, pilot_rating = crowd(Row(0.4, 2, 50), rng)
        answers = Answers(pilot_rating, pilot_item)
        (design,) = width_table(
            answers, items=(items,), answers_per_item=(ANSWERS_PER_ITEM,), simulations=500, seed=pilot
        )
        planned.append(design.width)
    widths = []
    for run in range(runs):
        item, rating = crowd(row, rng)
        counts, domain = value_counts_from_pairs(item, rating)
        interval = alpha_interval(
            counts, "interval", value_domain=domain, seed=seed_for("plan-width", run), resamples=resamples
        )
        widths.append(interval.high - interval.low)
    return {
        "planned": float(np.mean(planned)),
        "planned_error": float(np.std(planned, ddof=1) / np.sqrt(pilots)),
        "realised": float(np.mean(widths)),
        "realised_error": float(np.std(widths, ddof=1) / np.sqrt(runs)),
    }


def grid(quick: bool) -> list[Row]:
    if quick:
        return [Row(0.2, 2, 10), Row(0.4, 2, 50)]
    return [Row(icc, s, n) for icc in (0.0, 0.2, 0.4) for s in (2, 4) for n in (10, 50, 200)]


FIGURES = (
    ("alpha", None, "Krippendorff's alpha (ordinal), crowd"),
    ("within", "within_old", "within-1 agreement, crowd"),
    ("kappa", "kappa_old", "mean pairwise kappa (quadratic), team of 4"),
    ("icc", None, "ICC(2,k), team of 4"),
)


def rows(quick: bool, runs: int | None = None, seed: int = 20261129) -> list[dict]:
    """The family's rows in ``bench/coverage.py``'s common shape."""
    runs = runs or (60 if quick else 300)
    resamples = 300 if quick else RESAMPLES
    found = []
    for row in grid(quick):
        shares = run_row(row, runs, seed, resamples)
        for key, old, figure in FIGURES:
            before = None if old is None else shares[old]
            found.append(
                result("agreement", figure, row.icc, row.systems, row.items, runs, shares[key], before=before)
            )
    for items in (40,) if quick else (40, 100, 200):
        planned_runs = max(20, runs // 3)
        plan = plan_row(items, planned_runs, seed, resamples, pilots=5 if quick else 20)
        gap = plan["realised"] / plan["planned"] - 1
        error = (1 + gap) * float(
            np.hypot(plan["planned_error"] / plan["planned"], plan["realised_error"] / plan["realised"])
        )
        figure = "plan --agreement-width: realised mean width / planned − 1"
        found.append(
            result(
                "agreement",
                figure,
                0.4,
                2,
                items // 2,
                planned_runs,
                gap,
                measure="width gap",
                mc_error=error,
            )
        )
    return found


def _covers(interval, truth: float) -> bool:
    return interval is not None and interval.low <= truth <= interval.high


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args(argv)
    print_table(rows(args.quick, args.runs, args.seed))


if __name__ == "__main__":
    main()
