"""Coverage of the Bradley-Terry intervals (stats.bradley_terry) on simulated studies.

Each simulated study has ``items`` items; each item is answered ``--per-item`` times, each
answer comparing a random pair of the study's systems shown in a random order. The answer
follows Bradley-Terry on the systems' strengths (evenly spaced, ``--gap`` apart) plus the
item's own N(0, s²) shift of every system's strength (s: the item SD, 0 or 0.6: items that
suit some systems better, so answers on one item are correlated), plus a first-shown
advantage γ = ``--position`` on the log-odds; a share ``--ties`` of answers is a tie.

Raters with taste (the second table): each item's answers come from different raters of a
pool sized so that a rater answers about 30 items, and each rater has a taste, their own
N(0, t²) shift of every system's strength, the same on every item they answer (t: 0 or
0.6; a rater who likes system A's style likes it everywhere), so comparisons are correlated
across items through the rater. The reports then cluster by item and participant; the
table sets that beside the item-only clustering the reports used before. In the first
table no rater answers two items (participants do not cross items: clustered by item).

The target of each interval is what the model converges to on this design with endless
items (the pseudo-true values: Bradley-Terry fitted to the expected outcomes over the item
shifts, by Gauss-Hermite quadrature): the item shifts and ties shrink the strengths, which
is what the reports estimate. Per row: coverage of the strength differences (every pair of
systems, marginal 95% intervals), the same with the intervals computed as if every
comparison were independent (no clustering: what the sandwich without items would give),
of the strengths (systems that never lost or never won have no interval and are left out),
of the rank intervals (all systems' at once: they are simultaneous), of γ, the mean width
of a rank interval, and the share of studies with a system that never lost or never won.

    .venv/bin/python bench/coverage_bt.py [--studies 400] [--seed 0] [--quick]

The Monte Carlo error of a coverage of 0.95 over 400 studies is ±0.011 (one standard error).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stats import bradley_terry as bt
from stats.clustered import t_quantile

ITEM_COUNTS = (10, 50, 200)
SYSTEM_COUNTS = (2, 4)
ITEM_SDS = (0.0, 0.6)
TASTES = (0.0, 0.6)
ITEMS_PER_RATER = 30


@dataclass(frozen=True)
class Design:
    systems: int
    items: int
    item_sd: float
    per_item: int = 5
    gap: float = 0.3
    position: float = 0.2
    ties: float = 0.1
    answer: str = "pair"  # or "best-worst": all systems shown, MOST and LEAST chosen
    taste: float | None = None  # raters' taste SD; None: every answer its own rater

    def raters(self, items: int) -> int:
        """The pool: each rater answers about ``ITEMS_PER_RATER`` items (each item's answers
        from different raters)."""
        return max(self.per_item + 1, round(items * self.per_item / ITEMS_PER_RATER))

    @property
    def strengths(self) -> np.ndarray:
        return self.gap * np.arange(self.systems, dtype=np.float64)


@dataclass(frozen=True)
class Coverage:
    difference: float
    difference_independent: float
    strength: float
    rank: float
    position: float
    rank_width: float
    unbounded: float
    # raters with taste: the same figures clustered by item only (the reports before)
    difference_items: float = float("nan")
    strength_items: float = float("nan")
    rank_items: float = float("nan")
    position_items: float = float("nan")
    two_way: float = float("nan")  # share of studies clustered two ways (no fallback)


def simulate(design: Design, rng: np.random.Generator, items: int | None = None) -> bt.Comparisons:
    """One study's comparisons (module docstring); with raters, each carries its rater."""
    k = design.systems
    items = design.items if items is None else items
    item = np.repeat(np.arange(items), design.per_item)
    shift = rng.normal(0.0, design.item_sd, (items, k))[item]  # per answer: its item's shift …
    rater = None
    if design.taste is not None:
        pool = design.raters(items)
        rater = np.argsort(rng.random((items, pool)), axis=1)[:, : design.per_item].ravel()
        shift += rng.normal(0.0, design.taste, (pool, k))[rater]  # … and its rater's taste
    if design.answer == "best-worst":
        return _best_worst(design, rng, item, shift, rater)
    first = rng.integers(0, k, item.size)
    second = (first + rng.integers(1, k, item.size)) % k
    theta = design.strengths
    answer = np.arange(item.size)
    logit = theta[first] - theta[second] + shift[answer, first] - shift[answer, second] + design.position
    outcome = (rng.random(item.size) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    outcome[rng.random(item.size) < design.ties] = 0.5
    return bt.comparisons(first, second, outcome, item, rater)


def _best_worst(design: Design, rng, item: np.ndarray, shift: np.ndarray, rater) -> bt.Comparisons:
    """Every system shown in a random order; MOST and LEAST by Gumbel utilities (a random
    utility model whose best choice is Bradley-Terry / Plackett-Luce), the first shown's
    utility raised by γ; a tie share of answers is left without choices (no comparison)."""
    k = design.systems
    order = np.argsort(rng.random((item.size, k)), axis=1)  # column → system
    rows = np.arange(item.size)
    utility = design.strengths[order] + shift[rows[:, None], order] + rng.gumbel(size=order.shape)
    utility[:, 0] += design.position
    ranked = np.argsort(-utility, axis=1)
    most, least = order[rows, ranked[:, 0]], order[rows, ranked[:, -1]]
    skipped = rng.random(item.size) < design.ties
    most[skipped] = least[skipped] = -1
    return bt.from_best_worst(order, most, least, item, rater)


def pseudo_truth(design: Design) -> tuple[np.ndarray, float]:
    """As ``_pseudo_truth``, which does not depend on the number of items (computed once),
    nor on who shares a shift: an answer's item shift plus its rater's taste is one N(0,
    item SD² + taste²) shift of each system, so raters with taste have the truth of items of
    that SD."""
    spread = float(np.hypot(design.item_sd, design.taste or 0.0))
    return _pseudo_truth(dataclasses.replace(design, items=0, item_sd=spread, taste=None))


@functools.cache
def _pseudo_truth(design: Design) -> tuple[np.ndarray, float]:
    """Strengths (mean zero) and γ the fits converge to: the models fitted, without a ridge,
    to the expected outcome of every ordered pair (each equally likely in the design); for
    best-worst answers, to one simulated study of 50,000 items (its Monte Carlo error on a
    strength is about 0.005)."""
    k = design.systems
    if design.answer == "best-worst":
        data = simulate(design, np.random.default_rng(12345), items=50_000)
        return bt.fit(data, k, ridge=0.0).strengths, bt.fit(data, k, position=True, ridge=0.0).position
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    weights = weights / weights.sum()
    spread = np.sqrt(2.0) * design.item_sd  # the difference of two items' shifts
    first, second = (
        np.array(p) for p in zip(*[(a, b) for a in range(k) for b in range(k) if a != b], strict=True)
    )
    theta = design.strengths
    logit = theta[first] - theta[second] + design.position
    expected = (1.0 / (1.0 + np.exp(-(logit[:, None] + spread * nodes[None, :])))) @ weights
    expected = (1 - design.ties) * expected + design.ties * 0.5
    data = bt.comparisons(first, second, expected, np.arange(first.size))
    strengths = bt.fit(data, k, ridge=0.0).strengths
    gamma = bt.fit(data, k, position=True, ridge=0.0).position
    return strengths, gamma


def coverage(design: Design, studies: int, seed: int) -> Coverage:
    """Coverage of every interval over ``studies`` simulated studies of ``design``; with
    raters, also of the item-only intervals (``*_items``)."""
    rng = np.random.default_rng(seed)
    truth, gamma = pseudo_truth(design)
    upper = np.triu_indices(design.systems, 1)
    tallies: dict[str, list[float]] = {key: [] for key in Coverage.__dataclass_fields__}
    for _ in range(studies):
        data = simulate(design, rng)
        ranking = bt.rank_systems(data, design.systems)
        if ranking is None:
            continue
        _tally(tallies, "", ranking, bt.position_bias(data, design.systems), truth, gamma, upper)
        tallies["difference_independent"] += _independent_hits(data, design, truth, upper).tolist()
        tallies["rank_width"] += (ranking.rank_high - ranking.rank_low + 1).tolist()
        tallies["unbounded"].append(float(bool(ranking.unbounded)))
        if data.participant is not None:
            tallies["two_way"].append(float(ranking.method == bt.ITEMS_AND_PARTICIPANTS))
            by_item = bt.Comparisons(data.first, data.second, data.outcome, data.cluster)
            item_only = bt.rank_systems(by_item, design.systems)
            bias = bt.position_bias(by_item, design.systems)
            _tally(tallies, "_items", item_only, bias, truth, gamma, upper)
    return Coverage(
        **{key: float(np.mean(values)) if values else float("nan") for key, values in tallies.items()}
    )


def _tally(tallies, suffix: str, ranking, bias, truth: np.ndarray, gamma: float, upper) -> None:
    """Whether a study's intervals cover: every difference, every bounded strength, all the
    rank intervals at once, γ."""
    true_rank = 1 + (truth[None, :] > truth[:, None]).sum(axis=1)
    true_difference = (truth[:, None] - truth[None, :])[upper]
    hit = (ranking.difference_low[upper] <= true_difference) & (
        true_difference <= ranking.difference_high[upper]
    )
    tallies["difference" + suffix] += hit.tolist()
    bounded = np.setdiff1d(np.arange(truth.size), ranking.unbounded)
    inside = (ranking.low <= truth) & (truth <= ranking.high)
    tallies["strength" + suffix] += inside[bounded].tolist()
    ranked = (ranking.rank_low <= true_rank) & (true_rank <= ranking.rank_high)
    tallies["rank" + suffix].append(float(ranked.all()))
    tallies["position" + suffix].append(float(bias.low <= gamma <= bias.high))


def _independent_hits(data: bt.Comparisons, design: Design, truth: np.ndarray, upper) -> np.ndarray:
    """Whether the difference intervals cover when each comparison is taken as its own cluster."""
    alone = bt.Comparisons(data.first, data.second, data.outcome, np.arange(len(data)))
    fitted = bt.fit(alone, design.systems)
    variance = np.diag(fitted.covariance)
    se = np.sqrt(np.maximum(variance[:, None] + variance[None, :] - 2 * fitted.covariance, 0.0))[upper]
    estimate = (fitted.strengths[:, None] - fitted.strengths[None, :])[upper]
    true_difference = (truth[:, None] - truth[None, :])[upper]
    return np.abs(estimate - true_difference) <= t_quantile(bt.CONFIDENCE, len(data) - 1) * se


def designs(item_counts=ITEM_COUNTS, system_counts=SYSTEM_COUNTS, item_sds=ITEM_SDS) -> list[Design]:
    pairs = [Design(k, n, s) for k in system_counts for s in item_sds for n in item_counts]
    best_worst = [Design(4, n, s, answer="best-worst") for s in item_sds for n in item_counts]
    return pairs + best_worst


def table(studies: int, seed: int, rows: list[Design]) -> str:
    """The Markdown table docs/statistics.md shows."""
    lines = [
        "| answers | systems | items | item SD | difference | difference, independent | strength "
        "| ranks (joint) | γ | rank interval width | never lost/won |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for number, design in enumerate(rows):
        c = coverage(design, studies, seed + number)
        lines.append(
            f"| {design.answer} | {design.systems} | {design.items} | {design.item_sd} | "
            f"{c.difference:.3f} | {c.difference_independent:.3f} | {c.strength:.3f} | {c.rank:.3f} | "
            f"{c.position:.3f} | {c.rank_width:.2f} | {c.unbounded:.2f} |"
        )
    return "\n".join(lines)


def taste_designs(quick: bool = False) -> list[Design]:
    """Raters with taste (module docstring): pairs of 2 and 4 systems, best-worst of 4; item
    SD 0.3; taste 0 (two-way clustering where nothing needs it) and 0.6."""
    if quick:
        return [Design(4, 50, 0.3, taste=0.6), Design(4, 50, 0.3, answer="best-worst", taste=0.6)]
    pairs = [Design(k, n, 0.3, taste=t) for k in SYSTEM_COUNTS for t in TASTES for n in ITEM_COUNTS]
    best_worst = [Design(4, n, 0.3, answer="best-worst", taste=0.6) for n in ITEM_COUNTS]
    return pairs + best_worst


def taste_table(studies: int, seed: int, rows: list[Design]) -> str:
    """The raters-with-taste table docs/statistics.md shows: each figure clustered by item
    only (the reports before) and by item and participant (now)."""
    lines = [
        "| answers | systems | items | raters | taste | difference: items | items × participants "
        "| strength: items | items × participants | ranks (joint): items | items × participants "
        "| γ: items | items × participants | two ways |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for number, design in enumerate(rows):
        c = coverage(design, studies, seed + 1000 + number)
        lines.append(
            f"| {design.answer} | {design.systems} | {design.items} | {design.raters(design.items)} | "
            f"{design.taste} | {c.difference_items:.3f} | {c.difference:.3f} | {c.strength_items:.3f} | "
            f"{c.strength:.3f} | {c.rank_items:.3f} | {c.rank:.3f} | {c.position_items:.3f} | "
            f"{c.position:.3f} | {c.two_way:.2f} |"
        )
    return "\n".join(lines)


def rows(quick: bool, studies: int | None = None, seed: int = 0) -> list[dict]:
    """The family's rows in ``bench/coverage.py``'s common shape (``quick``: five designs,
    100 studies each; else the full grids, 400), the raters-with-taste rows with the
    item-only clustering as "before"."""
    from bench._coverage_table import result

    studies = studies or (100 if quick else 400)
    chosen = (
        [Design(2, 10, 0.6), Design(4, 50, 0.6), Design(4, 50, 0.6, answer="best-worst")]
        if quick
        else designs()
    )
    found = []
    for number, design in enumerate(chosen):
        c = coverage(design, studies, seed + number)
        shape = (f"item SD {design.item_sd:g}", design.systems, f"{design.items} ({design.answer})", studies)
        found += [
            result("bt", "strength difference", *shape, c.difference, before=c.difference_independent),
            result("bt", "strength", *shape, c.strength),
            result("bt", "rank intervals (all systems at once)", *shape, c.rank, measure="joint coverage"),
            result("bt", "position bias γ", *shape, c.position),
        ]
    for number, design in enumerate(taste_designs(quick)):
        c = coverage(design, studies, seed + 1000 + number)
        shape = (
            f"item SD {design.item_sd:g}, rater taste {design.taste:g}",
            design.systems,
            f"{design.items} ({design.answer}, ~{ITEMS_PER_RATER} per rater)",
            studies,
        )
        figure = "{}, raters with taste (items × participants; before: items only)"
        found += [
            result(
                "bt", figure.format("strength difference"), *shape, c.difference, before=c.difference_items
            ),
            result("bt", figure.format("strength"), *shape, c.strength, before=c.strength_items),
            result(
                "bt",
                figure.format("rank intervals (all systems at once)"),
                *shape,
                c.rank,
                before=c.rank_items,
                measure="joint coverage",
            ),
            result("bt", figure.format("position bias γ"), *shape, c.position, before=c.position_items),
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--studies", type=int, default=None, help="simulated studies per row (400; quick 100)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a few designs of each table")
    parser.add_argument("--taste-only", action="store_true", help="only the raters-with-taste table")
    args = parser.parse_args()
    studies = args.studies or (100 if args.quick else 400)
    started = time.perf_counter()
    if not args.taste_only:
        chosen = [Design(4, 50, 0.6), Design(4, 50, 0.6, answer="best-worst")] if args.quick else designs()
        print(table(studies, args.seed, chosen), flush=True)
        print()
    print(taste_table(studies, args.seed, taste_designs(args.quick)))
    print(f"\n{studies} studies per row, seed {args.seed}, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
