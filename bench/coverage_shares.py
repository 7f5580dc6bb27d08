"""Coverage of the shares' intervals and the family-wise error of the choice and pick tests
on simulated studies whose items (and participants) differ.

Rows: ICC 0 / 0.2 / 0.4, 2 and 4 systems, 10 / 50 / 200 cases per system; every system
equal (so every test's null holds). Per row, ``runs`` seeded studies; before = the methods
the reports used until now, after = ``stats.clustered``:

- **share**: coverage of the 95% interval of one system's share of an option of a choice
  question (before: the answer-level bootstrap ``bench/answer_bootstrap.py``; after:
  ``clustered_mean`` by case and participant, clipped to [0, 1]); the truth is the expected
  share over cases, items and participants (computed once from 10⁶ draws);
- **choice test**: the share of studies in which the choice question's test of "the answer
  depends on the system" says p < 0.05 (before: Pearson's chi-square on the answers; after:
  ``independence_test``, the cluster-robust Wald test by unit: Hotelling's F, or with 100
  units or fewer the permutation p);
- **multi FWER**: a multi question of three options, one test per option, Holm over them:
  the share of studies with some option "p < 0.05" (before: chi-square; after: Wald);
- **sign-test FWER**: a pairwise pick question (each item shows two systems): the share of
  studies with some pair "p < 0.05" after Holm (before: the binomial sign test on the win
  counts; after: ``stats.ranking.win_tests``, cluster-robust t of the win rate).

Design: ``items`` items per system, each its own case (the systems are shown on different
items, where Pearson's test suffers most: items paired by case share the case's effect
across systems, which makes it conservative instead), each item answered by 3
participants from a pool sized so that a participant answers about 30 items.

- Choice: option o's utility base_o + u_case,o + w_item,o + b_participant,o + Gumbel noise,
  the largest chosen (base 0.5, 0, −0.5).
- Multi: option o chosen when base_o + u + w + b + logistic noise > 0.
- u ~ N(0, τ²), w, b ~ N(0, (τ/2)²), τ such that the items' share of the latent variance
  (case and item, against the noise) is the row's ICC.
- Pick: ``items · systems / 2`` items, each a case showing a random pair of systems,
  P(first picked) = logistic(v_item,first − v_item,second + b_p,first − b_p,second),
  v ~ N(0, τ²), b ~ N(0, (τ/2)²), ICC = 2τ² / (2τ² + π²/3).

    .venv/bin/python bench/coverage_shares.py [--runs 300] [--quick]

Monte-Carlo error over R runs: √(p(1−p)/R) (0.013 at 0.95 and at 0.05 with R = 300).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.answer_bootstrap import overall_mean
from stats import bradley_terry as bt
from stats.bootstrap import seed_for
from stats.clustered import clustered_mean, independence_test
from stats.ranking import holm, win_tests

ANSWERS_PER_ITEM = 3
ITEMS_PER_PARTICIPANT = 30
BASE = np.array([0.5, 0.0, -0.5])
SEED = 20261129
RUNS = 300
QUICK_RUNS = 60


@dataclass(frozen=True)
class Row:
    icc: float
    systems: int
    items: int


@dataclass(frozen=True)
class Design:
    """Per answer: its item's case (the unit), item, system and participant."""

    case: np.ndarray
    item: np.ndarray
    system: np.ndarray
    participant: np.ndarray
    pool: int


def tau(icc: float, noise_variance: float) -> float:
    """τ such that 1.25τ² / (1.25τ² + noise) = icc."""
    return float(np.sqrt(icc / (1 - icc) * noise_variance / 1.25))


def design(cases: int, systems: int, per_case: int, rng: np.random.Generator) -> Design:
    """``cases · per_case`` items (an item per system, or a pair of systems per item), each
    its own case, each answered by 3 different participants of the pool."""
    items = cases * per_case
    answers = items * ANSWERS_PER_ITEM
    pool = max(ANSWERS_PER_ITEM + 1, round(answers / ITEMS_PER_PARTICIPANT))
    item = np.repeat(np.arange(items), ANSWERS_PER_ITEM)
    participant = np.argsort(rng.random((items, pool)), axis=1)[:, :ANSWERS_PER_ITEM].ravel()
    case = item  # every item its own case: the systems are shown on different items
    system = item % per_case if per_case == systems else np.zeros_like(item)
    return Design(case, item, system, participant, pool)


def choices(d: Design, t: float, rng: np.random.Generator) -> np.ndarray:
    options = BASE.size
    u = rng.normal(0, t, (d.case.max() + 1, options))[d.case]
    w = rng.normal(0, t / 2, (d.item.max() + 1, options))[d.item]
    b = rng.normal(0, t / 2, (d.pool, options))[d.participant]
    return np.argmax(BASE + u + w + b + rng.gumbel(size=(d.case.size, options)), axis=1)


def multi(d: Design, t: float, rng: np.random.Generator) -> np.ndarray:
    options = BASE.size
    u = rng.normal(0, t, (d.case.max() + 1, options))[d.case]
    w = rng.normal(0, t / 2, (d.item.max() + 1, options))[d.item]
    b = rng.normal(0, t / 2, (d.pool, options))[d.participant]
    return BASE + u + w + b + rng.logistic(size=(d.case.size, options)) > 0


def true_share(icc: float, rng: np.random.Generator, draws: int = 1_000_000) -> float:
    """The expected share of option 0 over cases, items, participants and noise."""
    t = tau(icc, np.pi**2 / 6)
    spread = np.sqrt(1.25 * t**2 + (t / 2) ** 2)
    utility = BASE + rng.normal(0, spread, (draws, BASE.size)) + rng.gumbel(size=(draws, BASE.size))
    return float(np.mean(np.argmax(utility, axis=1) == 0))


def pearson_p(rows: np.ndarray, columns: np.ndarray) -> float:
    """Pearson's chi-square p of independence, answers as independent (the old test)."""
    from scipy import stats

    _, r = np.unique(rows, return_inverse=True)
    _, c = np.unique(columns, return_inverse=True)
    table = np.zeros((r.max() + 1, c.max() + 1))
    np.add.at(table, (r, c), 1)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return 1.0
    return float(stats.chi2_contingency(table, correction=False).pvalue)


def old_sign_tests(wins: np.ndarray) -> np.ndarray:
    """The old Holm-adjusted binomial sign tests on the win counts (answers independent)."""
    from scipy import stats

    ps = [
        stats.binomtest(int(wins[i, j]), int(wins[i, j] + wins[j, i]), 0.5).pvalue
        for i, j in itertools.combinations(range(len(wins)), 2)
        if wins[i, j] + wins[j, i] > 0
    ]
    return holm(ps) if ps else np.ones(1)


def picks(row: Row, rng: np.random.Generator):
    """A pairwise pick study: comparisons (first, second, outcome), their unit and rater."""
    cases = max(2, row.items * row.systems // 2)
    d = design(cases, row.systems, 1, rng)
    t = np.sqrt(row.icc / (1 - row.icc) * (np.pi**2 / 3) / 2)
    pair = np.array([rng.choice(row.systems, 2, replace=False) for _ in range(cases)])
    v = rng.normal(0, t, (cases, row.systems))
    b = rng.normal(0, t / 2, (d.pool, row.systems))
    first, second = pair[d.item, 0], pair[d.item, 1]
    logit = v[d.item, first] - v[d.item, second] + b[d.participant, first] - b[d.participant, second]
    outcome = (rng.random(d.item.size) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    return bt.comparisons(first, second, outcome, d.item), d.participant


# each figure's share of runs, before (the answer-level method) and after
FIGURE_KEYS = tuple(
    f"{figure}_{when}" for figure in ("share", "choice", "multi", "sign") for when in ("old", "new")
)


def run_row(row: Row, runs: int, seed: int, truth: float) -> dict:
    rng = np.random.default_rng([seed, int(row.icc * 100), row.systems, row.items])
    t_choice, t_multi = tau(row.icc, np.pi**2 / 6), tau(row.icc, np.pi**2 / 3)
    hits = dict.fromkeys(FIGURE_KEYS, 0)
    for r in range(runs):
        d = design(row.items, row.systems, row.systems, rng)
        answer = choices(d, t_choice, rng)
        mine = d.system == 0
        hit = (answer[mine] == 0).astype(np.float64)
        old = overall_mean(hit, label=seed_for("coverage-shares", r))
        new = clustered_mean(hit, d.case[mine], d.participant[mine], bounds=(0.0, 1.0))
        hits["share_old"] += _covers(old.ci, truth)
        hits["share_new"] += _covers(new.ci, truth)
        hits["choice_old"] += pearson_p(d.system, answer) < 0.05
        found = independence_test(answer, d.system, d.case)
        hits["choice_new"] += found.defined and found.value < 0.05
        chosen = multi(d, t_multi, rng)
        old_ps = holm([pearson_p(d.system, chosen[:, o]) for o in range(BASE.size)])
        tests = [independence_test(chosen[:, o], d.system, d.case) for o in range(BASE.size)]
        defined = [test.value for test in tests if test.defined]
        hits["multi_old"] += bool(np.any(old_ps < 0.05))
        hits["multi_new"] += bool(defined) and bool(np.any(holm(defined) < 0.05))
        compared, rater = picks(row, rng)
        found = win_tests(
            compared.first, compared.second, compared.outcome, compared.cluster, rater, n_systems=row.systems
        )
        hits["sign_old"] += bool(np.any(old_sign_tests(found.wins) < 0.05))
        hits["sign_new"] += bool(np.nanmin(found.p_holm, initial=1.0) < 0.05)
    return {name: count / runs for name, count in hits.items()}


def grid(quick: bool) -> list[Row]:
    if quick:
        return [Row(0.0, 2, 10), Row(0.4, 2, 50), Row(0.4, 4, 10)]
    return [Row(icc, s, n) for icc in (0.0, 0.2, 0.4) for s in (2, 4) for n in (10, 50, 200)]


def rows(quick: bool, runs: int | None = None, seed: int = SEED) -> list[dict]:
    """One dict per table row: the row's design and its figures (shares of runs)."""
    count = runs or (QUICK_RUNS if quick else RUNS)
    truths: dict[float, float] = {}
    out = []
    for row in grid(quick):
        truth = truths.setdefault(row.icc, true_share(row.icc, np.random.default_rng([seed, 7])))
        out.append(
            {
                "icc": row.icc,
                "systems": row.systems,
                "items": row.items,
                "runs": count,
                **run_row(row, count, seed, truth),
            }
        )
    return out


# the figures of a row of ``rows``: (key of the new method, key of the old, figure, measure)
FIGURES = (
    ("share_new", "share_old", "one system's share of an option (clustered, clipped)", "coverage"),
    ("choice_new", "choice_old", "a choice question's test of system x answer (cluster-robust Wald)", "FWER"),
    ("multi_new", "multi_old", "a multi question's options, some p < 0.05 (Wald per option, Holm)", "FWER"),
    ("sign_new", "sign_old", "pick wins, some pair p < 0.05 (clustered win-rate test, Holm)", "FWER"),
)


def table_rows(quick: bool) -> list[dict]:
    """``rows`` in ``bench/coverage.py``'s common shape (``bench/_coverage_table.py``): one
    row per figure and design, with its target and verdict."""
    from bench._coverage_table import result

    return [
        result(
            "shares",
            figure,
            row["icc"],
            row["systems"],
            row["items"],
            row["runs"],
            row[new],
            before=row[old],
            measure=measure,
        )
        for row in rows(quick)
        for new, old, figure, measure in FIGURES
    ]


HEADER = (
    "| ICC | systems | items/system | share: before | share: after | choice test: before | after "
    "| multi FWER: before | after | sign-test FWER: before | after |"
)


def markdown(found: list[dict]) -> str:
    lines = [HEADER, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in found:
        figures = " | ".join(f"{f[name]:.3f}" for name in FIGURE_KEYS)
        lines.append(f"| {f['icc']} | {f['systems']} | {f['items']} | {figures} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--quick", action="store_true", help="three rows, fewer runs")
    args = parser.parse_args(argv)
    print(markdown(rows(args.quick, args.runs, args.seed)), flush=True)


def _covers(interval, truth: float) -> bool:
    return interval is not None and interval.low <= truth <= interval.high


if __name__ == "__main__":
    main()
