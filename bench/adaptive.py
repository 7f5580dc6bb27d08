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
pick between systems (B: ``stats.adaptive.pair_uncertainty``). ``--ranking-priority`` swaps B's
pair priority for one of two alternatives measured beside it (not the platform's): ``variance``,
how much one more answer to the pair shrinks the variance of its fitted difference (the
comparison that most reduces the ranking's uncertainty), and ``misorder``, how much it lowers
the chance the pair is ordered wrongly.

The target is uniform's mean accuracy after ``--answers`` answers per item (over the seeds, on
draws of their own). Per seed, both ways collect on the same study until the accuracy first
reaches the target, looked at equally often (every items / 20 answers), up to ``--cap`` × items
answers; the saving is 1 − adaptive's answers / uniform's, printed as its mean and its 10th
and 90th percentiles over the seeds.

  C. The stopping rule (``--part stopping``): two systems on a 1-7 scale (``RatedStudy``),
     items answered in turn or by the adaptive pick, a look every 20 answers up to 400 per
     system. Three tables: how often the rule stops with no difference (false stops) and
     with one, for the rule now (``stats.adaptive.difference_sequence``: one sequence on the
     difference of item means at alpha) and the rule before issue 37 (one sequence per
     system's answers at alpha / 2); and the rule's mean answers against the fixed design
     ``plan`` picks for the same power (``stats.planning.power_table`` on a large pilot).

    .venv/bin/python bench/adaptive.py [--part all|savings|ranking|stopping] [--seeds 200] [--items 200]
        [--answers 5] [--ranking-priority closeness|variance|misorder]
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

from stats.adaptive import (
    INFORMATION_RIDGE,
    comparison_priorities,
    difference_sequence,
    mean_sequence,
    nominal_uncertainty,
    pair_uncertainty,
)
from stats.planning import ITEMS, Answers, cheapest, power_table
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

    def __init__(
        self,
        items: int,
        systems: int,
        rng: np.random.Generator,
        item_effect: float = 1.0,
        priority: str = "closeness",
    ):
        self.rng = rng
        self.priority = priority
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
        uncertainty = RANKING_PRIORITIES[self.priority](self.wins(counts))
        return comparison_priorities(np.arange(len(self.pairs)), self.pairs, uncertainty, len(self.pairs))

    def accuracy(self, counts: np.ndarray) -> float:
        fitted = bradley_terry(self.wins(counts))
        if fitted is None:
            return 0.0
        upper = np.triu_indices(self.systems, 1)
        truth = np.sign(self.strength[:, None] - self.strength[None, :])[upper]
        return float(np.mean(np.sign(fitted[:, None] - fitted[None, :])[upper] == truth))


def _one_more_answer(wins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per pair of systems, the fitted gap in strength, the variance of its estimate now and
    after one more answer comparing the pair (the Fisher information grows by p(1 - p));
    None before the fit exists."""
    strengths = bradley_terry(wins)
    if strengths is None:
        return None
    size = len(wins)
    p = 1 / (1 + np.exp(strengths[None, :] - strengths[:, None]))
    weight = (wins + wins.T) * p * (1 - p)
    information = np.diag(weight.sum(axis=1)) - weight + INFORMATION_RIDGE * np.eye(size)
    covariance = np.linalg.inv(information)
    diagonal = np.diag(covariance)
    variance = np.maximum(diagonal[:, None] + diagonal[None, :] - 2 * covariance, 1e-12)
    after = 1 / (1 / variance + p * (1 - p))
    return np.abs(strengths[:, None] - strengths[None, :]), variance, after


def variance_drop(wins: np.ndarray) -> np.ndarray:
    """Alternative priority (not the platform's): how much one more answer shrinks the
    variance of the pair's fitted difference, the pair whose comparison most reduces the
    ranking's uncertainty first."""
    found = _one_more_answer(wins)
    if found is None:
        return np.ones(wins.shape)
    _, variance, after = found
    return variance - after


def misorder_drop(wins: np.ndarray) -> np.ndarray:
    """Alternative priority (not the platform's): how much one more answer lowers the chance
    that the pair is ordered wrongly, Φ(−gap / sd) now less after (a coin toss gains little)."""
    found = _one_more_answer(wins)
    if found is None:
        return np.ones(wins.shape)
    gap, variance, after = found
    from scipy import stats as scipy_stats

    return scipy_stats.norm.sf(gap / np.sqrt(variance)) - scipy_stats.norm.sf(gap / np.sqrt(after))


# B's pair priority: the platform's (``closeness``) and the two alternatives measured beside it.
RANKING_PRIORITIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "closeness": pair_uncertainty,
    "variance": variance_drop,
    "misorder": misorder_drop,
}


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


# C. The stopping rule ------------------------------------------------------------------------

SCALE_LOW, SCALE_HIGH, SCALE_MIDDLE = 1, 7, 4
ANSWER_SD = 1.2  # an answer's own noise around its item's mean
LOOK_EVERY = 20  # answers (both systems together) between two looks: the reports job
MOST = 800  # answers (both systems together) the study may collect
ALPHA = 0.05


@dataclass(frozen=True)
class RatedStudy:
    """Two systems' items on a 1-7 scale: item ``i`` belongs to system ``system[i]`` (0 or 1)
    and its answers are ``round(4 ± difference / 2 + effect[i] + N(0, 1.2²))`` clipped to
    1..7, the first system's items moved up by half the difference, the second's down."""

    system: np.ndarray
    centre: np.ndarray  # each item's mean before rounding

    @classmethod
    def draw(cls, rng: np.random.Generator, items: int, item_sd: float, difference: float) -> RatedStudy:
        system = np.repeat([0, 1], items)
        shift = np.where(system == 0, difference / 2, -difference / 2)
        return cls(system, SCALE_MIDDLE + shift + rng.normal(0, item_sd, 2 * items))

    def answers(self, items: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        noisy = self.centre[items] + rng.normal(0, ANSWER_SD, np.size(items))
        return np.clip(np.round(noisy), SCALE_LOW, SCALE_HIGH)


def uniform_order(study: RatedStudy, rng: np.random.Generator, most: int = MOST) -> np.ndarray:
    """The items answered in turn: every item once per round, each round in a random order."""
    rounds = -(-most // study.system.size)
    return np.concatenate([rng.permutation(study.system.size) for _ in range(rounds)])[:most]


def scale_priorities(items: np.ndarray, values: np.ndarray, n_items: int) -> np.ndarray:
    """``stats.adaptive.item_priorities`` for one scale question, for every item at once (the
    same figure: the width of the item mean's 95% t-interval over the range of the answers,
    1 below two answers); ``test_adaptive_stopping`` checks that the two agree."""
    from scipy import stats as scipy_stats

    counts = np.bincount(items, minlength=n_items).astype(np.float64)
    sums = np.bincount(items, weights=values, minlength=n_items)
    squares = np.bincount(items, weights=values**2, minlength=n_items)
    span = float(values.max() - values.min()) if values.size else 0.0
    priority = np.ones(n_items)
    several = counts >= 2
    if not span > 0 or not several.any():
        return priority
    m = counts[several]
    variance = np.maximum(squares[several] - sums[several] ** 2 / m, 0.0) / (m - 1)
    half = scipy_stats.t.ppf(0.975, m - 1) * np.sqrt(variance / m)
    priority[several] = np.minimum(1.0, 2 * half / span)
    return priority


def adaptive_collection(
    study: RatedStudy, rng: np.random.Generator, minimum: int = 2, most: int = MOST
) -> tuple[np.ndarray, np.ndarray]:
    """The items answered and the answers, collected as the platform's adaptive assignment
    does: every item ``minimum`` times first (in turn), then each answer to the item of
    highest priority (``scale_priorities``, the reports job's, recomputed at every look)
    lowered by (n + 1) / (n + 2) for each page handed out since (the pick). No cap per item:
    the study's ``annotations_per_item`` is set high enough for the budget (the worst case)."""
    n_items = study.system.size
    start = uniform_order(study, rng, minimum * n_items)
    items = np.empty(most, dtype=np.int64)
    values = np.empty(most)
    items[: start.size] = start
    values[: start.size] = study.answers(start, rng)
    taken = np.bincount(start, minlength=n_items).astype(np.float64)
    priority = np.ones(n_items)
    noise = rng.normal(0, ANSWER_SD, most)  # an answer's noise does not depend on its item
    for given in range(start.size, most):
        if given % LOOK_EVERY == 0 or given == start.size:
            priority = scale_priorities(items[:given], values[:given], n_items)
        item = int(np.argmax(priority))
        priority[item] *= (taken[item] + 1) / (taken[item] + 2)
        taken[item] += 1
        items[given] = item
        values[given] = min(SCALE_HIGH, max(SCALE_LOW, round(study.centre[item] + noise[given])))
    return items, values


def rule_before(study: RatedStudy, items: np.ndarray, values: np.ndarray, span: float):
    """The rule until this change: each system's answers' sequence at alpha / 2, bounds subtracted."""
    first, second = (values[study.system[items] == side] for side in (0, 1))
    a, b = mean_sequence(first, ALPHA / 2, span=span), mean_sequence(second, ALPHA / 2, span=span)
    return a.low - b.high, a.high - b.low


def rule_now(study: RatedStudy, items: np.ndarray, values: np.ndarray, span: float):
    """The rule now: one sequence on the difference of the systems' item means at alpha."""
    side = study.system[items]
    look = difference_sequence(
        values[side == 0], items[side == 0], values[side == 1], items[side == 1], ALPHA, span=span
    )
    return look.low, look.high


RULES = {"before": rule_before, "now": rule_now}


def first_stops(
    study: RatedStudy, items: np.ndarray, values: np.ndarray, rules: dict | None = None
) -> dict[str, tuple[int, int]]:
    """Per rule (``RULES`` by default), the answers collected (both systems) at its first look
    whose interval excludes 0, and the sign of that interval (0: never stopped, answers ``MOST``)."""
    rules = RULES if rules is None else rules
    found = {name: (MOST, 0) for name in rules}
    for given in range(LOOK_EVERY, MOST + 1, LOOK_EVERY):
        span = float(values[:given].max() - values[:given].min())
        for name, rule in rules.items():
            if found[name][1]:
                continue
            low, high = rule(study, items[:given], values[:given], span)
            if low > 0 or high < 0:
                found[name] = (given, 1 if low > 0 else -1)
        if all(sign for _, sign in found.values()):
            break
    return found


@dataclass(frozen=True)
class StopRow:
    """One setting of the stopping rule's simulation and, per rule, the share of runs that
    stopped (``stopped``), the share that stopped on the wrong side of the truth or on a
    difference that is not there (``wrong``) and the mean answers per system collected."""

    assignment: str
    item_sd: float
    items: int
    difference: float
    runs: int
    stopped: dict[str, float]
    wrong: dict[str, float]
    answers: dict[str, float]


def stopping_row(
    assignment: str, item_sd: float, items: int, difference: float, runs: int, seed: int = 0
) -> StopRow:
    """``runs`` seeded studies of one setting, each rule looked at every ``LOOK_EVERY`` answers."""
    results = {name: [] for name in RULES}
    for run in range(runs):
        rng = np.random.default_rng([seed, run, items, int(item_sd * 100), int(difference * 100)])
        study = RatedStudy.draw(rng, items, item_sd, difference)
        if assignment == "uniform":
            order = uniform_order(study, rng)
            collected = (order, study.answers(order, rng))
        else:
            collected = adaptive_collection(study, rng)
        for name, stop in first_stops(study, *collected).items():
            results[name].append(stop)
    stopped, wrong, answers = {}, {}, {}
    for name, stops in results.items():
        given, sign = np.array(stops).T
        stopped[name] = float(np.mean(sign != 0))
        wrong[name] = float(np.mean(sign != 0) if difference == 0 else np.mean(sign < 0))
        answers[name] = float(np.mean(given)) / 2
    return StopRow(assignment, item_sd, items, difference, runs, stopped, wrong, answers)


def print_stopping_rows(rows: list[StopRow]) -> None:
    print(
        "| assignment | item sd | items/system | difference | runs | stopped: before | now "
        "| false or wrong-sign stops: before | now | answers/system: before | now |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row.assignment} | {row.item_sd:g} | {row.items} | {row.difference:g} | {row.runs} "
            f"| {row.stopped['before']:.3f} | {row.stopped['now']:.3f} "
            f"| {row.wrong['before']:.3f} | {row.wrong['now']:.3f} "
            f"| {row.answers['before']:.0f} | {row.answers['now']:.0f} |"
        )


@dataclass(frozen=True)
class PowerRow:
    """The rule (now) on a study of ``items`` items per system answered in turn (up to
    ``MOST`` answers: two per item), against the fixed design ``plan`` picks for the power
    the rule reached: ``power`` (the share of runs that stopped, on the right side) and
    ``answers`` (mean answers per system at the stop, ``MOST / 2`` for a run that never
    stopped) against ``fixed`` (answers per system of the cheapest design of
    ``stats.planning.power_table`` with at least that power, or ``HIGHEST_POWER``; None: no
    design of the grid has it) and ``fixed_default`` (the same on ``plan``'s own grid of items
    and answers per item). The saving is against the cheaper of the two."""

    item_sd: float
    difference: float
    scale_difference: float
    runs: int
    power: float
    answers: float
    fixed: int | None
    fixed_default: int | None


FINE_ITEMS = tuple(sorted(set(range(10, 410, 10)) | set(ITEMS)))
# The power the fixed design must reach: the rule's, at most this (a rule that stopped in every
# run has a power near 1, which no finite simulation of a fixed design can certify as reached)
HIGHEST_POWER = 0.99


def scale_difference(item_sd: float, difference: float, draws: int = 400_000) -> float:
    """The systems' difference on the 1-7 scale (rounding and clipping shrink ``difference``)."""
    rng = np.random.default_rng(99)
    study = RatedStudy.draw(rng, draws // 2, item_sd, difference)
    values = study.answers(np.arange(draws), rng)
    return float(values[study.system == 0].mean() - values[study.system == 1].mean())


def pilot(
    item_sd: float, rng: np.random.Generator, items: int = 100, answers: int = 4
) -> tuple[Answers, Answers]:
    """A large pilot with no difference (``plan`` puts the difference in): ``items`` items per
    system, ``answers`` answers each."""
    study = RatedStudy.draw(rng, items, item_sd, 0.0)
    order = np.repeat(np.arange(2 * items), answers)
    values = study.answers(order, rng)
    return tuple(  # type: ignore[return-value]
        Answers(values[study.system[order] == side], order[study.system[order] == side] - side * items)
        for side in (0, 1)
    )


def power_row(item_sd: float, difference: float, runs: int, items: int = 200, seed: int = 0) -> PowerRow:
    """The rule's power and answers on ``runs`` seeded studies, and the fixed design's answers."""
    stops = []
    for run in range(runs):
        rng = np.random.default_rng([seed, run, items, int(item_sd * 100), int(difference * 100), 7])
        study = RatedStudy.draw(rng, items, item_sd, difference)
        order = uniform_order(study, rng)
        stops.append(first_stops(study, order, study.answers(order, rng), rules={"now": rule_now})["now"])
    given, sign = np.array(stops).T
    power = float(np.mean(sign > 0))
    effect = scale_difference(item_sd, difference)
    first, second = pilot(item_sd, np.random.default_rng([seed, 11]))
    fixed = []
    for grid in ({"items": FINE_ITEMS, "answers_per_item": (1, 2, 3, 5)}, {}):
        table = power_table(first, second, difference=effect, paired=False, alpha=ALPHA, seed=seed, **grid)
        chosen = cheapest(table, min(power, HIGHEST_POWER))
        fixed.append(None if chosen is None else chosen.answers // 2)
    return PowerRow(item_sd, difference, effect, runs, power, float(np.mean(given)) / 2, *fixed)


def print_power_rows(rows: list[PowerRow]) -> None:
    print(
        "| item sd | difference (1-7 scale) | runs | rule: power by 400 answers/system "
        "| rule: mean answers/system | fixed design of that power (plan, items every 10) "
        "| on plan's default grid | rule saves |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        fixed = "—" if row.fixed is None else str(row.fixed)
        default = "—" if row.fixed_default is None else str(row.fixed_default)
        designs = [answers for answers in (row.fixed, row.fixed_default) if answers is not None]
        saves = f"{1 - row.answers / min(designs):+.0%}" if designs else "—"
        print(
            f"| {row.item_sd:g} | {row.scale_difference:.2f} | {row.runs} | {row.power:.3f} "
            f"| {row.answers:.0f} | {fixed} | {default} | {saves} |"
        )


def stopping_tables(runs: int, adaptive_runs: int, power_runs: int) -> None:
    """Part C's three tables: false stops (no difference), stops on a difference (both rules),
    and the rule's answers against the fixed design of the same power."""
    print(f"\nC. Stopping rule: false stops (no difference; uniform {runs} runs, adaptive {adaptive_runs})")
    print_stopping_rows(
        [
            stopping_row(assignment, item_sd, items, 0.0, runs if assignment == "uniform" else adaptive_runs)
            for assignment in ("uniform", "adaptive")
            for item_sd in (0.0, 0.6)
            for items in (10, 40)
        ]
    )
    print("\nC. Stopping rule: stops on a difference (40 items per system)")
    print_stopping_rows(
        [
            stopping_row(
                assignment,
                item_sd,
                40,
                difference,
                runs // 2 if assignment == "uniform" else adaptive_runs // 2,
            )
            for assignment in ("uniform", "adaptive")
            for item_sd in (0.0, 0.6)
            for difference in (0.3, 0.6)
        ]
    )
    print("\nC. Stopping rule against the fixed design plan picks (200 items per system, answered in turn)")
    print_power_rows(
        [
            power_row(item_sd, difference, power_runs)
            for item_sd in (0.0, 0.6)
            for difference in (0.3, 0.45, 0.6, 0.9)
        ]
    )


def stopping_rows(quick: bool) -> list[dict]:
    """The stopping rule's false stops in ``bench/coverage.py``'s common shape (``quick``:
    10 items per system at item sd 0.6, uniform 100 runs and adaptive 20; else the false-stop
    table's eight rows, 1000 and 400 runs)."""
    from bench._coverage_table import result

    settings = (
        [("uniform", 0.6, 10, 100), ("adaptive", 0.6, 10, 20)]
        if quick
        else [
            (assignment, item_sd, items, 1000 if assignment == "uniform" else 400)
            for assignment in ("uniform", "adaptive")
            for item_sd in (0.0, 0.6)
            for items in (10, 40)
        ]
    )
    found = []
    for assignment, item_sd, items, runs in settings:
        row = stopping_row(assignment, item_sd, items, 0.0, runs)
        found.append(
            result(
                "stopping",
                f"false stops, no difference ({assignment} assignment)",
                f"item sd {item_sd:g}",
                2,
                items,
                runs,
                row.wrong["now"],
                before=row.wrong["before"],
                measure="false stops",
            )
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("all", "savings", "ranking", "stopping"), default="all")
    parser.add_argument(
        "--ranking-priority",
        choices=sorted(RANKING_PRIORITIES),
        default="closeness",
        help="B: the pair priority (closeness: the platform's)",
    )
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--item-effect", type=float, default=1.0, help="sd of a pick item's own effect")
    parser.add_argument("--answers", type=int, default=5, help="uniform's answers per item")
    parser.add_argument("--min", type=int, default=2, dest="minimum")
    parser.add_argument("--cap", type=int, default=10)
    parser.add_argument("--every", type=int, default=20, help="answers between two recomputes")
    parser.add_argument("--stopping-runs", type=int, default=1000, help="C: runs per uniform row")
    parser.add_argument("--adaptive-stopping-runs", type=int, default=400, help="C: runs per adaptive row")
    parser.add_argument("--power-runs", type=int, default=400, help="C: runs per row against plan")
    args = parser.parse_args()
    if args.part in ("all", "savings", "ranking"):
        design = Design(args.items, args.answers, args.minimum, args.cap, args.every)
        print(
            f"{args.items} items, uniform at {args.answers} answers per item against adaptive "
            f"(minimum {args.minimum}, cap {args.cap}, priorities recomputed every {args.every} answers)"
        )
        if args.part != "ranking":
            report("labels", savings(lambda rng: LabelStudy(args.items, rng), design, args.seeds))
        report(
            f"system ranking ({args.ranking_priority})",
            savings(
                lambda rng: PairStudy(args.items, args.systems, rng, args.item_effect, args.ranking_priority),
                design,
                args.seeds,
            ),
        )
    if args.part in ("all", "stopping"):
        stopping_tables(args.stopping_runs, args.adaptive_stopping_runs, args.power_runs)


if __name__ == "__main__":
    main()
