"""The coverage suite: every figure family's intervals and tests on simulated studies with
known truth, in one table (``--family``), and the scale figures' detailed table (``--detail``).

    .venv/bin/python bench/coverage.py [--family all|means|differences|pairs|shares|bt|agreement|
        stopping|plan|competence|ppi] [--quick]

prints one markdown table with the columns of ``bench/_coverage_table.py`` (family, figure,
ICC, systems, items/system, runs, measure, before, now, target, MC error, pass). Each family
is simulated by its own module, seeded (``rows(quick)``):

- means, differences, pairs: this module (below);
- shares: ``bench/coverage_shares.py`` (skipped with a message where it does not exist);
- bt: ``bench/coverage_bt.py``; agreement: ``bench/coverage_agreement.py``;
- stopping: ``bench/adaptive.py`` (part C's false stops); plan: ``bench/plan_calibration.py``;
- competence: ``bench/coverage_competence.py``; ppi (prediction-powered estimates, humans
  and a judge): ``bench/coverage_ppi.py``.

``--quick`` runs a few rows of each family with fewer runs (a few minutes in all); without
it each family runs its full grid (the scale families alone take about 25 minutes).

The scale families, in detail (``--detail``: the table docs/statistics.md shows):

Each row simulates ``--runs`` studies (seeded) and reports, for the methods before this
change (answers resampled as independent; the pair table's one-sided Wilcoxon in the
direction the data chose, uncorrected) and after it (``stats.clustered``: cluster-robust t
intervals by item / source and participant; ``stats.likert.system_comparisons``: two-sided
Wilcoxon signed-rank on per-source means, Holm over the question's pairs):

- **mean**: coverage of the 95% interval of one system's mean rating, and of the mean over
  all answers, of the expected rating over items and participants in general;
- **difference**: coverage of the 95% interval of a system pair's difference (before: no
  interval was shown; the column gives the answer-level Welch interval such a table would
  have drawn, treating answers as independent, for comparison);
- **FWER**: the share of studies with no true difference in which some pair of systems is
  shown "p < 0.05" (before: the one-sided p in the chosen direction; after: Holm-adjusted
  two-sided p).

The design (realistic for the platform): ``items`` sources, each shown with every system
(an item per source and system, paired by ``provenance.source_id``), each item answered by 3
participants drawn from a pool sized so that a participant answers about 30 items. A rating
is ``clip(round(4 + s_system + u_source + w_item + b_participant + e), 1, 7)`` with
e ~ N(0, 1.2²), u ~ N(0, τ²), w ~ N(0, (τ/2)²), b ~ N(0, (τ/2)²); τ is set so that the
items' share of the latent variance (the ICC, sources and items together) is the row's ICC.
Differences and FWER are measured with every system equal (s = 0); the means with s = 0 too,
the truth being the expected rounded, clipped rating (computed once from 4·10⁶ draws).

With ``--unpaired`` every item is its own case (no ``provenance.source_id`` in common): the
systems are compared on their own items (difference of means, Mann-Whitney U on item
means); the old tables had no comparison for such designs.

    .venv/bin/python bench/coverage.py --detail [--runs 400] [--seed 20261129] [--quick] [--unpaired]

Monte-Carlo error of a share p over R runs: √(p(1−p)/R) (0.011 at p = 0.95, R = 400).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.answer_bootstrap import overall_mean
from stats.bootstrap import seed_for
from stats.clustered import clustered_mean
from stats.likert import paired_by_source, system_comparisons, wilcoxon_method

NOISE_SD = 1.2
ANSWERS_PER_ITEM = 3
ITEMS_PER_PARTICIPANT = 30


@dataclass(frozen=True)
class Row:
    icc: float
    systems: int
    items: int
    paired: bool = True  # False: every item its own case (no pairs; systems compared unpaired)


@dataclass(frozen=True)
class Study:
    ratings: np.ndarray
    system: np.ndarray  # labels "s0", "s1", …
    source: np.ndarray
    item: np.ndarray
    participant: np.ndarray
    unit: np.ndarray  # what answers cluster in: the case (paired) or the item


def item_sd(icc: float) -> float:
    """τ such that (τ² + (τ/2)²) / (τ² + (τ/2)² + 1.2²) = icc."""
    return float(np.sqrt(icc / (1 - icc) * NOISE_SD**2 / 1.25))


def simulate(row: Row, rng: np.random.Generator) -> Study:
    tau = item_sd(row.icc)
    items = row.items * row.systems
    source = np.repeat(np.arange(row.items), row.systems) if row.paired else np.arange(items)
    system = np.tile(np.arange(row.systems), row.items)
    latent = rng.normal(0, tau, source.max() + 1)[source] + rng.normal(0, tau / 2, items)
    answers = items * ANSWERS_PER_ITEM
    pool = max(ANSWERS_PER_ITEM + 1, round(answers / ITEMS_PER_PARTICIPANT))
    item = np.repeat(np.arange(items), ANSWERS_PER_ITEM)
    # each item's answers come from different participants of the pool
    participant = np.argsort(rng.random((items, pool)), axis=1)[:, :ANSWERS_PER_ITEM].ravel()
    leniency = rng.normal(0, tau / 2, pool)
    y = 4 + latent[item] + leniency[participant] + rng.normal(0, NOISE_SD, answers)
    ratings = np.clip(np.round(y), 1, 7)
    labels = np.array([f"s{k}" for k in range(row.systems)], dtype=object)
    case = source[item].astype(str) if row.paired else np.full(answers, "", dtype=object)
    return Study(ratings, labels[system[item]], case, item, participant, source[item])


def true_mean(icc: float, rng: np.random.Generator, draws: int = 4_000_000) -> float:
    tau = item_sd(icc)
    latent = rng.normal(0, np.sqrt(1.25 * tau**2 + (tau / 2) ** 2 + NOISE_SD**2), draws)
    return float(np.clip(np.round(4 + latent), 1, 7).mean())


def old_shown_p(study: Study) -> float:
    """The smallest p the old pair table showed: per pair, the one-sided Wilcoxon p in the
    direction of the larger median difference, uncorrected."""
    from scipy import stats

    codes = np.unique(study.source, return_inverse=True)[1]
    smallest = 1.0
    for a, b in itertools.combinations(sorted(set(study.system)), 2):
        first, second = paired_by_source(codes, study.system, study.ratings, a, b)
        difference = first - second
        if not np.count_nonzero(difference):
            continue
        direction = "greater" if np.median(difference) >= 0 else "less"
        method = wilcoxon_method(difference)  # as the old rows: exact or normal, never permutations
        p = stats.wilcoxon(first, second, alternative=direction, method=method).pvalue
        smallest = min(smallest, p)
    return smallest


def naive_difference_covers(study: Study, truth: float = 0.0) -> bool:
    from scipy import stats

    a = study.ratings[study.system == "s0"]
    b = study.ratings[study.system == "s1"]
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    return bool(ci.low <= truth <= ci.high)


def run_row(row: Row, runs: int, seed: int, truth: float) -> dict[str, float]:
    rng = np.random.default_rng([seed, int(row.icc * 100), row.systems, row.items])
    hits = dict.fromkeys(
        ("mean_old", "mean_new", "all_old", "all_new", "diff_old", "diff_new", "fwer_old", "fwer_new"), 0
    )
    for r in range(runs):
        study = simulate(row, rng)
        first = study.system == "s0"
        old = overall_mean(study.ratings[first], label=seed_for("coverage", r))
        new = clustered_mean(study.ratings[first], study.item[first], study.participant[first])
        hits["mean_old"] += _covers(old.ci, truth)
        hits["mean_new"] += _covers(new.ci, truth)
        old_all = overall_mean(study.ratings, label=seed_for("coverage-all", r))
        hits["all_old"] += _covers(old_all.ci, truth)
        # items of one source share its effect: the pooled mean clusters by source
        pooled = clustered_mean(study.ratings, study.unit, study.participant)
        hits["all_new"] += _covers(pooled.ci, truth)
        pairs = system_comparisons(study.ratings, study.system, study.source, study.participant, study.unit)
        hits["diff_new"] += _covers(pairs[0].interval, 0.0)
        hits["diff_old"] += naive_difference_covers(study)
        hits["fwer_old"] += row.paired and old_shown_p(study) < 0.05  # unpaired: no old rows
        hits["fwer_new"] += any(p.p_holm < 0.05 for p in pairs)
    return {name: count / runs for name, count in hits.items()}


def grid(quick: bool, unpaired: bool = False) -> list[Row]:
    iccs = (0.0, 0.2, 0.4)
    if unpaired:
        return [Row(icc, s, n, paired=False) for icc in (0.2, 0.4) for s in (2, 4) for n in (10, 50)]
    if quick:
        return [Row(icc, 2, 10) for icc in iccs] + [Row(0.4, 4, 50)]
    return [Row(icc, s, n) for icc in iccs for s in (2, 4) for n in (10, 50, 200)]


def scale_rows(quick: bool, families: set[str], runs: int | None = None, seed: int = 20261129) -> list[dict]:
    """The means, differences and pairs families in the common shape, from one simulation of
    each row of the grid (``quick``: four rows, 100 runs; else 18 rows, 400 runs)."""
    from bench._coverage_table import result

    runs = runs or (100 if quick else 400)
    found = []
    truths: dict[float, float] = {}
    for row in grid(quick):
        truth = truths.setdefault(row.icc, true_mean(row.icc, np.random.default_rng([seed, 7])))
        s = run_row(row, runs, seed, truth)
        shape = (row.icc, row.systems, row.items, runs)
        if "means" in families:
            figure = "one system's mean (cluster-robust t)"
            found.append(result("means", figure, *shape, s["mean_new"], before=s["mean_old"]))
            figure = "mean of all answers (cluster-robust t)"
            found.append(result("means", figure, *shape, s["all_new"], before=s["all_old"]))
        if "differences" in families:
            figure = "difference of a pair of systems (within cases)"
            found.append(result("differences", figure, *shape, s["diff_new"], before=s["diff_old"]))
        if "pairs" in families:
            figure = "some pair p < 0.05 with equal systems (two-sided, Holm)"
            found.append(result("pairs", figure, *shape, s["fwer_new"], before=s["fwer_old"], measure="FWER"))
    return found


SCALE_FAMILIES = ("means", "differences", "pairs")
FAMILIES = (*SCALE_FAMILIES, "shares", "bt", "agreement", "stopping", "plan", "competence", "ppi")
# family → (module, function returning its rows from ``quick``); imported when asked for
FAMILY_MODULES = {
    "shares": ("bench.coverage_shares", "table_rows"),
    "bt": ("bench.coverage_bt", "rows"),
    "agreement": ("bench.coverage_agreement", "rows"),
    "stopping": ("bench.adaptive", "stopping_rows"),
    "plan": ("bench.plan_calibration", "rows"),
    "competence": ("bench.coverage_competence", "rows"),
    "ppi": ("bench.coverage_ppi", "rows"),
}


def family_rows(family: str, quick: bool) -> list[dict] | None:
    """One family's rows (None: its module is not in this checkout)."""
    import importlib

    if family in SCALE_FAMILIES:
        return scale_rows(quick, {family})
    module, function = FAMILY_MODULES[family]
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != module:
            raise
        return None
    return getattr(loaded, function)(quick)


def suite_rows(families: list[str], quick: bool, report=print) -> list[dict]:
    """The rows of ``families`` in order (the scale families from one shared simulation)."""
    scale = {family for family in families if family in SCALE_FAMILIES}
    found = scale_rows(quick, scale) if scale else []
    for family in families:
        if family in SCALE_FAMILIES:
            continue
        rows = family_rows(family, quick)
        if rows is None:
            report(f"(family {family}: its module is not in this checkout; skipped)")
            continue
        found += rows
    return found


def main(argv: list[str] | None = None) -> None:
    from bench._coverage_table import print_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--family", choices=(*FAMILIES, "all"), action="append", help="repeatable; default all"
    )
    parser.add_argument("--quick", action="store_true", help="a few rows of each family, fewer runs")
    parser.add_argument(
        "--detail", action="store_true", help="the scale figures' detailed before/after table"
    )
    parser.add_argument("--runs", type=int, default=400, help="--detail: runs per row")
    parser.add_argument("--seed", type=int, default=20261129, help="--detail: the seed")
    parser.add_argument(
        "--unpaired", action="store_true", help="--detail: every item its own case: systems compared unpaired"
    )
    args = parser.parse_args(argv)
    if args.detail:
        detail(args)
        return
    chosen = args.family or ["all"]
    families = list(FAMILIES) if "all" in chosen else [family for family in FAMILIES if family in chosen]
    started = time.perf_counter()
    rows = suite_rows(families, args.quick, report=lambda line: print(line, file=sys.stderr))
    print_table(rows)
    failed = sum(not row["passed"] for row in rows)
    kind, seconds = "quick" if args.quick else "full", time.perf_counter() - started
    print(f"\n{len(rows)} rows, {failed} outside their target; {kind} run, {seconds:.0f} s")


def detail(args) -> None:
    """The scale figures' table with the before and after columns (docs/statistics.md)."""
    print(
        "| ICC | systems | items/system | mean: before | mean: after | all answers: before | after "
        "| difference: before (naive) | after | FWER: before | after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    truths: dict[float, float] = {}
    for row in grid(args.quick, args.unpaired):
        truth = truths.setdefault(row.icc, true_mean(row.icc, np.random.default_rng([args.seed, 7])))
        s = run_row(row, args.runs, args.seed, truth)
        old_fwer = f"{s['fwer_old']:.3f}" if row.paired else "—"
        print(
            f"| {row.icc} | {row.systems} | {row.items} | {s['mean_old']:.3f} | {s['mean_new']:.3f} "
            f"| {s['all_old']:.3f} | {s['all_new']:.3f} | {s['diff_old']:.3f} | {s['diff_new']:.3f} "
            f"| {old_fwer} | {s['fwer_new']:.3f} |",
            flush=True,
        )


def _covers(interval, truth: float) -> bool:
    return interval is not None and interval.low <= truth <= interval.high


if __name__ == "__main__":
    main()
