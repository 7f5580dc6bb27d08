"""Do prediction-powered intervals cover, are they never wider than the humans' own, and how
many human answers does a judge save? (issue 38; the table is in docs/statistics.md)

Simulated studies, seeded, through the function the reports use (``stats.ppi.ppi_contrast``):

  items of two systems; item i has a true label z_i ~ Bernoulli(p_system) (p = 0.35 and 0.5);
  a human answers z_i with probability 0.85 (the other label otherwise), independently; the
  judge answers every item once, z_i with probability ``accuracy`` when z_i = 1 and
  min(1, accuracy + 0.05) when z_i = 0 (so that it is biased). The humans answer a uniform
  random subset of ``humans / 2`` items, two answers each (so the human answers are
  clustered by item); the judge's N = 10 × ``humans`` items include them.

Truth: the expected human answer, p · 0.85 + (1 − p) · 0.15 per system (the estimand of the
humans-only figure too). Per row: coverage of the 95% PPI++ interval of the mean over all items
and of the difference between the systems, the humans-only coverage beside it (``before``),
the largest relative excess of the PPI interval's width over the humans-only one in any
study (target ≤ 0.02), and the human answers saved at equal width, 1 − n / n_eff (n_eff:
the human answers a humans-only interval would need to be as narrow), the mean over studies.

    .venv/bin/python bench/coverage_ppi.py [--runs 1000] [--seed 38] [--quick]
    .venv/bin/python bench/coverage.py --family ppi [--quick]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._coverage_table import result
from stats.ppi import Side, ppi_contrast

HUMAN_ACCURACY = 0.85
RATE = (0.35, 0.5)  # P(z = 1) for systems 0 and 1
ANSWERS_PER_ITEM = 2
JUDGE_FACTOR = 10
ACCURACIES = (0.5, 0.7, 0.9, 0.95)
HUMANS = (50, 200, 500)


@dataclass(frozen=True)
class Found:
    """One row's measures over its studies."""

    mean: float  # PPI coverage of the mean over all items
    mean_humans: float
    difference: float  # PPI coverage of system 0 − system 1
    difference_humans: float
    excess: float  # largest width(PPI) / width(humans) − 1 over the studies and figures
    saved_mean: float  # mean 1 − n / n_eff, the mean over all items
    saved_difference: float
    lam: float  # mean tuning weight of the mean
    runs: int


def truth(system: int) -> float:
    p = RATE[system]
    return p * HUMAN_ACCURACY + (1 - p) * (1 - HUMAN_ACCURACY)


def study(rng: np.random.Generator, accuracy: float, humans: int) -> tuple[Side, Side, Side]:
    """One simulated study: the human answers, the judge's answer paired with each, and the
    judge's answers on the items no human answered (groups: the systems)."""
    items = JUDGE_FACTOR * humans
    system = rng.integers(0, 2, items)
    z = rng.random(items) < np.asarray(RATE)[system]
    right = rng.random(items) < np.where(z, accuracy, min(1.0, accuracy + 0.05))
    judge = np.where(right, z, ~z).astype(np.float64)
    labeled = np.zeros(items, dtype=bool)
    labeled[rng.choice(items, humans // ANSWERS_PER_ITEM, replace=False)] = True
    item = np.repeat(np.flatnonzero(labeled), ANSWERS_PER_ITEM)
    correct = rng.random(item.size) < HUMAN_ACCURACY
    answers = np.where(correct, z[item], ~z[item]).astype(np.float64)
    return (
        Side.of(answers, item, groups=system[item]),
        Side.of(judge[item], item, groups=system[item]),
        Side.of(judge[~labeled], np.flatnonzero(~labeled), groups=system[~labeled]),
    )


def pooled(side: Side) -> Side:
    """The same answers as one group (the mean over every item, both systems)."""
    return Side.of(side.values, side.units)


def coverage(accuracy: float, humans: int, runs: int, seed: int) -> Found:
    rng = np.random.default_rng([seed, int(accuracy * 1000), humans])
    targets = {"mean": (truth(0) + truth(1)) / 2, "difference": truth(0) - truth(1)}
    covered = {(name, who): 0 for name in targets for who in ("ppi", "humans")}
    saved = {name: 0.0 for name in targets}
    excess, lam, done = -1.0, 0.0, 0
    for _ in range(runs):
        labeled, judge, unlabeled = study(rng, accuracy, humans)
        fits = {
            "mean": ppi_contrast(pooled(labeled), pooled(judge), pooled(unlabeled), np.ones(1)),
            "difference": ppi_contrast(labeled, judge, unlabeled, np.array([1.0, -1.0])),
        }
        if any(fit is None for fit in fits.values()):
            continue
        done += 1
        for name, fit in fits.items():
            assert fit is not None
            ppi, alone = fit.interval(), fit.humans_interval()
            covered[name, "ppi"] += ppi.low <= targets[name] <= ppi.high
            covered[name, "humans"] += alone.low <= targets[name] <= alone.high
            excess = max(excess, (ppi.high - ppi.low) / (alone.high - alone.low) - 1)
            saved[name] += 1 - fit.n / fit.effective_n
        lam += fits["mean"].lam  # type: ignore[union-attr]
    share = {key: count / done for key, count in covered.items()}
    return Found(
        mean=share["mean", "ppi"],
        mean_humans=share["mean", "humans"],
        difference=share["difference", "ppi"],
        difference_humans=share["difference", "humans"],
        excess=excess,
        saved_mean=saved["mean"] / done,
        saved_difference=saved["difference"] / done,
        lam=lam / done,
        runs=done,
    )


BT_TRUTH = np.array([0.6, 0.2, -0.2, -0.6])  # log-odds strengths of four systems (mean zero)


@dataclass(frozen=True)
class FoundStrengths:
    strength: float  # PPI coverage of each system's strength (all systems, all studies)
    strength_humans: float
    ranks: float  # share of studies whose rank sets all hold the true ranks
    excess: float  # largest mean width(PPI) / width(humans) − 1 over the studies
    saved: float
    runs: int


def strength_coverage(accuracy: float, humans: int, runs: int, seed: int) -> FoundStrengths:
    """Pairwise picks of two of four systems, ``humans`` human comparisons on as many items
    (one each) and the judge's on 10 × as many items: coverage of the PPI++ Bradley-Terry
    strengths (``stats.ppi_ranking``) and of its rank sets."""
    from stats import bradley_terry as bt
    from stats.ppi_ranking import ppi_strengths

    rng = np.random.default_rng([seed, int(accuracy * 1000), humans, 2])
    k = BT_TRUTH.size
    truth_rank = 1 + np.argsort(np.argsort(-BT_TRUTH))
    covered = covered_humans = joint = 0
    excess, saved, done = -1.0, 0.0, 0
    for _ in range(runs):
        items = JUDGE_FACTOR * humans
        first = rng.integers(0, k, items)
        second = (first + rng.integers(1, k, items)) % k
        preferred = rng.random(items) < 1 / (1 + np.exp(-(BT_TRUTH[first] - BT_TRUTH[second])))
        judge = np.where(rng.random(items) < accuracy, preferred, ~preferred).astype(np.float64)
        human = rng.random(items) < HUMAN_ACCURACY  # a person's pick agrees with the item's preference
        outcome = np.where(human, preferred, ~preferred).astype(np.float64)
        labeled = np.arange(humans)
        alone = np.arange(humans, items)
        found = ppi_strengths(
            bt.comparisons(first[labeled], second[labeled], outcome[labeled], labeled),
            judge[labeled],
            bt.comparisons(first[alone], second[alone], judge[alone], alone),
            k,
        )
        if found is None:
            continue
        done += 1
        target = _human_strengths()
        covered += int(np.sum((found.low <= target) & (target <= found.high)))
        covered_humans += int(np.sum((found.humans_low <= target) & (target <= found.humans_high)))
        joint += bool(np.all((found.rank_low <= truth_rank) & (truth_rank <= found.rank_high)))
        width, width_humans = np.mean(found.high - found.low), np.mean(found.humans_high - found.humans_low)
        excess = max(excess, float(width / width_humans - 1))
        saved += 1 - found.n / found.effective_n
    return FoundStrengths(
        covered / (k * done), covered_humans / (k * done), joint / done, excess, saved / done, done
    )


def _human_strengths() -> np.ndarray:
    """The strengths of the humans' picks: a person agrees with the item's preference with
    probability 0.85, so P(i over j) = 0.85 σ(Δ) + 0.15 (1 − σ(Δ)): not a Bradley-Terry model
    of Δ, so the target is the best Bradley-Terry fit to those probabilities (all pairs
    equally often), found once."""
    global _TARGET
    if _TARGET is None:
        from stats import bradley_terry as bt

        k = BT_TRUTH.size
        first, second = np.array([(i, j) for i in range(k) for j in range(k) if i != j]).T
        sigma = 1 / (1 + np.exp(-(BT_TRUTH[first] - BT_TRUTH[second])))
        probability = HUMAN_ACCURACY * sigma + (1 - HUMAN_ACCURACY) * (1 - sigma)
        data = bt.comparisons(first, second, probability, np.arange(first.size))
        _TARGET = bt.fit(data, k, ridge=0.0).strengths
    return _TARGET


_TARGET: np.ndarray | None = None


def grid(quick: bool) -> list[tuple[float, int]]:
    if quick:
        return [(0.5, 50), (0.9, 200)]
    return [(accuracy, humans) for accuracy in ACCURACIES for humans in HUMANS]


def rows(quick: bool, seed: int = 38) -> list[dict]:
    """The coverage suite's rows (``bench/coverage.py --family ppi``)."""
    found = []
    runs = 200 if quick else 1000
    for accuracy, humans in grid(quick):
        f = coverage(accuracy, humans, runs, seed)
        design = f"judge accuracy {accuracy:g}"
        shape = (design, 2, f"{humans} answers", f.runs)
        found.append(result("ppi", "mean over all items (PPI++)", *shape, f.mean, before=f.mean_humans))
        found.append(
            result(
                "ppi", "difference of two systems (PPI++)", *shape, f.difference, before=f.difference_humans
            )
        )
        found.append(
            result(
                "ppi", "PPI++ width over humans-only, worst study", *shape, f.excess, measure="excess width"
            )
        )
        b = strength_coverage(accuracy, humans, runs, seed)
        shape = (design, 4, f"{humans} comparisons", b.runs)
        figure = "Bradley-Terry strength (PPI++)"
        found.append(result("ppi", figure, *shape, b.strength, before=b.strength_humans))
        figure = "rank sets (PPI++, all systems at once)"
        found.append(result("ppi", figure, *shape, b.ranks, measure="joint coverage"))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(
        "| judge accuracy | human answers | judge answers | runs | coverage mean: humans | PPI++ "
        "| coverage difference: humans | PPI++ | worst excess width | mean λ "
        "| human answers saved: mean | difference |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows_bt = []
    for accuracy, humans in grid(args.quick):
        b = strength_coverage(accuracy, humans, args.runs, args.seed)
        rows_bt.append(
            f"| {accuracy:g} | {humans} | {JUDGE_FACTOR * humans} | {b.runs} | {b.strength_humans:.3f} "
            f"| {b.strength:.3f} | {b.ranks:.3f} | {b.excess:+.3f} | {b.saved:.0%} |"
        )
    for accuracy, humans in grid(args.quick):
        f = coverage(accuracy, humans, args.runs, args.seed)
        print(
            f"| {accuracy:g} | {humans} | {JUDGE_FACTOR * humans} | {f.runs} "
            f"| {f.mean_humans:.3f} | {f.mean:.3f} "
            f"| {f.difference_humans:.3f} | {f.difference:.3f} | {f.excess:+.3f} | {f.lam:.2f} "
            f"| {f.saved_mean:.0%} | {f.saved_difference:.0%} |",
            flush=True,
        )
    print(
        "\n| judge accuracy | human comparisons | judge comparisons | runs | strength coverage: humans "
        "| PPI++ | rank sets (joint) | worst excess mean width | human answers saved |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows_bt))


if __name__ == "__main__":
    main()
