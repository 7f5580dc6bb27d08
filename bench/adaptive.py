"""Adaptive against uniform collection on synthetic studies with known truth: how many answers
each needs to reach the same accuracy (stats/adaptive.py's priorities, as the platform uses
them; no database).

  A. Labels: ``--items`` items with a true label among 3, answered by a crowd whose members
     are right with a probability drawn from U(0.55, 0.9) (wrong answers spread evenly over
     the other labels); the aggregated label is the plurality vote (ties broken at random).
     Accuracy: the share of items whose aggregated label is the true one.
  B. System ranking: ``--systems`` systems with true strengths drawn from N(0, 0.5); each item
     asks which of two systems is better, the answer following Bradley-Terry on the systems'
     strengths plus the item's own N(0, s²) effect (s: ``--item-effect``, 1 by default). The
     ranking is the systems' Bradley-Terry
     strengths fitted to every answer (``stats.ranking.bradley_terry``); its accuracy is the
     share of pairs of systems ordered as the truth orders them.

Uniform assignment gives every item one answer per round. Adaptive assignment, as on the
platform: every item gets ``--min`` answers first; then each answer goes to the item of highest
priority below the cap (``--cap``), the priorities recomputed every ``--every`` answers (the
reports job) and lowered by (n + 1) / (n + 2) on each page handed out in between (the pick).
The priority is the platform's for each question: the entropy of the item's vote shares for a
label (A), how close the comparison of the item's two systems is over the whole study for a
pick between systems (B: ``stats.adaptive.pair_uncertainty``).

The target is uniform's mean accuracy after ``--answers`` answers per item (over the seeds, on
draws of their own). Per seed, both ways collect on the same study until the accuracy first
reaches the target, looked at equally often (every items / 20 answers), up to ``--cap`` × items
answers; the saving is 1 − adaptive's answers / uniform's, printed as its mean and its 10th
and 90th percentiles over the seeds.

    .venv/bin/python bench/adaptive.py [--seeds 200] [--items 200] [--answers 5]
"""

from __future__ import annotations

import argparse
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stats.adaptive import comparison_priorities, nominal_uncertainty, pair_uncertainty
from stats.ranking import bradley_terry

LABELS = 3


@dataclass(frozen=True)
class Design:
    items: int
    answers: int  # uniform's answers per item (the target's)
    minimum: int
    cap: int
    every: int


class Study(ABC):
    """One synthetic study: ``answer(item)`` draws the next answer to an item (a code among
    ``options``); ``accuracy(counts)`` scores the aggregate of the answers so far."""

    options: int

    @abstractmethod
    def answer(self, item: int) -> int:
        """The next answer to ``item``, drawn from the study's truth."""

    @abstractmethod
    def accuracy(self, counts: np.ndarray) -> float:
        """How well the aggregate of ``counts`` (answers per item and option) recovers the truth."""

    def priorities(self, counts: np.ndarray) -> np.ndarray:
        """Each item's priority from the answers so far, as the reports job computes it."""
        return np.array([nominal_uncertainty(row) for row in counts])


class LabelStudy(Study):
    options = LABELS

    def __init__(self, items: int, rng: np.random.Generator):
        self.rng = rng
        self.truth = rng.integers(0, LABELS, items)
        self.crowd = rng.uniform(0.55, 0.9, 100)

    def answer(self, item: int) -> int:
        if self.rng.random() < self.rng.choice(self.crowd):
            return int(self.truth[item])
        return int((self.truth[item] + self.rng.integers(1, LABELS)) % LABELS)

    def accuracy(self, counts: np.ndarray) -> float:
        noise = self.rng.random(counts.shape) * 1e-3  # a random winner among tied labels
        return float(np.mean(np.argmax(counts + noise, axis=1) == self.truth))


class PairStudy(Study):
    options = 2  # code 0: the first system of the pair is better; 1: the second

    def __init__(self, items: int, systems: int, rng: np.random.Generator, item_effect: float = 1.0):
        self.rng = rng
        self.systems = systems
        self.strength = rng.normal(0, 0.5, systems)
        self.pairs = np.array([rng.choice(systems, 2, replace=False) for _ in range(items)])
        effect = rng.normal(0, item_effect, items)
        first, second = self.strength[self.pairs[:, 0]], self.strength[self.pairs[:, 1]]
        self.p_first = 1 / (1 + np.exp(-(first - second + effect)))

    def answer(self, item: int) -> int:
        return 0 if self.rng.random() < self.p_first[item] else 1

    def wins(self, counts: np.ndarray) -> np.ndarray:
        wins = np.zeros((self.systems, self.systems))
        np.add.at(wins, (self.pairs[:, 0], self.pairs[:, 1]), counts[:, 0])
        np.add.at(wins, (self.pairs[:, 1], self.pairs[:, 0]), counts[:, 1])
        return wins

    def priorities(self, counts: np.ndarray) -> np.ndarray:
        uncertainty = pair_uncertainty(self.wins(counts))
        return comparison_priorities(np.arange(len(self.pairs)), self.pairs, uncertainty, len(self.pairs))

    def accuracy(self, counts: np.ndarray) -> float:
        fitted = bradley_terry(self.wins(counts))
        if fitted is None:
            return 0.0
        upper = np.triu_indices(self.systems, 1)
        truth = np.sign(self.strength[:, None] - self.strength[None, :])[upper]
        return float(np.mean(np.sign(fitted[:, None] - fitted[None, :])[upper] == truth))


def uniform_accuracy(study: Study, design: Design) -> float:
    """Accuracy after ``design.answers`` answers to every item."""
    counts = np.zeros((design.items, study.options))
    for _ in range(design.answers):
        for item in range(design.items):
            counts[item, study.answer(item)] += 1
    return study.accuracy(counts)


def answers_to_reach(study: Study, design: Design, target: float, *, adaptive: bool) -> int:
    """Answers one way of collecting needs before the accuracy first reaches ``target``
    (looked at every twentieth of the items' count of answers, the same for both ways);
    ``cap`` × items when it never does. Uniform: one answer per item per round. Adaptive:
    ``minimum`` rounds, then the item of highest priority below the cap."""
    counts = np.zeros((design.items, study.options))
    taken = np.zeros(design.items)
    priority = np.ones(design.items)
    look_every = max(1, design.items // 20)
    given, most = 0, design.cap * design.items
    while given < most:
        if not adaptive or given < design.minimum * design.items:
            item = given % design.items
        else:
            if (given - design.minimum * design.items) % design.every == 0:  # the reports job
                priority = study.priorities(counts)
            open_items = np.flatnonzero(taken < design.cap)
            item = int(open_items[np.argmax(priority[open_items])])
            priority[item] *= (taken[item] + 1) / (taken[item] + 2)  # the pick's decay
        counts[item, study.answer(item)] += 1
        taken[item] += 1
        given += 1
        if given % look_every == 0 and study.accuracy(counts) >= target:
            return given
    return given


def savings(
    make: Callable[[np.random.Generator], Study], design: Design, seeds: int
) -> tuple[float, np.ndarray]:
    """The target (uniform's mean accuracy at ``answers`` per item over the seeds) and, per
    seed, the share of uniform's answers to it that adaptive saves."""
    target = float(
        np.mean([uniform_accuracy(make(np.random.default_rng([seed, 1])), design) for seed in range(seeds)])
    )
    saved = []
    for seed in range(seeds):
        uniform = answers_to_reach(make(np.random.default_rng([seed, 0])), design, target, adaptive=False)
        adaptive = answers_to_reach(make(np.random.default_rng([seed, 0])), design, target, adaptive=True)
        saved.append(1 - adaptive / uniform)
    return target, np.array(saved)


def report(name: str, result: tuple[float, np.ndarray]) -> None:
    target, saved = result
    p10, p90 = np.percentile(saved, [10, 90])
    print(
        f"{name:<16} accuracy {target:.3f}: adaptive saves {saved.mean():+.1%} of uniform's answers "
        f"(10th percentile {p10:+.1%}, 90th {p90:+.1%}; {len(saved)} seeds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--item-effect", type=float, default=1.0, help="sd of a pick item's own effect")
    parser.add_argument("--answers", type=int, default=5, help="uniform's answers per item")
    parser.add_argument("--min", type=int, default=2, dest="minimum")
    parser.add_argument("--cap", type=int, default=10)
    parser.add_argument("--every", type=int, default=20, help="answers between two recomputes")
    args = parser.parse_args()
    design = Design(args.items, args.answers, args.minimum, args.cap, args.every)
    print(
        f"{args.items} items, uniform at {args.answers} answers per item against adaptive "
        f"(minimum {args.minimum}, cap {args.cap}, priorities recomputed every {args.every} answers)"
    )
    report("labels", savings(lambda rng: LabelStudy(args.items, rng), design, args.seeds))
    report(
        "system ranking",
        savings(lambda rng: PairStudy(args.items, args.systems, rng, args.item_effect), design, args.seeds),
    )


if __name__ == "__main__":
    main()
