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
    for accuracy, humans in grid(args.quick):
        f = coverage(accuracy, humans, args.runs, args.seed)
        print(
            f"| {accuracy:g} | {humans} | {JUDGE_FACTOR * humans} | {f.runs} "
            f"| {f.mean_humans:.3f} | {f.mean:.3f} "
            f"| {f.difference_humans:.3f} | {f.difference:.3f} | {f.excess:+.3f} | {f.lam:.2f} "
            f"| {f.saved_mean:.0%} | {f.saved_difference:.0%} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
