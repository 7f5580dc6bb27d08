"""MOST/LEAST (best-worst) choices over k shown systems: counts, best-worst scores, the
rankings they imply, pairwise wins with clustered tests, Bradley-Terry strengths and
split-half reliability.

One criterion at a time. A response shows ``k`` systems (a row of ``shown``: system codes,
``-1`` padding) and names the MOST and the LEAST one. The implied ranking puts MOST first
(rank 1), LEAST last (rank k) and the others tied in the middle (rank (k+1)/2), which for
k = 3 is a full ranking.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .clustered import share_test
from .estimate import Estimate

BT_REGULARISATION = 0.01


@dataclass(frozen=True)
class Appearances:
    """One row per (response, shown system): the flat form every measure below uses."""

    response: np.ndarray
    system: np.ndarray
    rank: np.ndarray  # 1 = MOST, k = LEAST, (k+1)/2 in between
    shown_count: np.ndarray  # k of that response

    @property
    def score(self) -> np.ndarray:
        """+1 for MOST, -1 for LEAST, 0 otherwise: the best-worst score of one appearance."""
        return np.where(self.rank == 1, 1.0, np.where(self.rank == self.shown_count, -1.0, 0.0))


def appearances(shown, most, least) -> Appearances:
    """Flatten responses into appearances; responses without both choices are left out."""
    shown = np.asarray(shown, dtype=np.int64)
    most = np.asarray(most, dtype=np.int64)
    least = np.asarray(least, dtype=np.int64)
    answered = (most >= 0) & (least >= 0) & (most != least)
    k = (shown >= 0).sum(axis=1)
    rank = np.where(
        shown == most[:, None], 1.0, np.where(shown == least[:, None], k[:, None], (k[:, None] + 1) / 2)
    )
    valid = (shown >= 0) & answered[:, None]
    response = np.broadcast_to(np.arange(len(shown))[:, None], shown.shape)
    return Appearances(
        response=response[valid],
        system=shown[valid],
        rank=rank[valid].astype(np.float64),
        shown_count=np.broadcast_to(k[:, None], shown.shape)[valid].astype(np.float64),
    )


def choice_counts(flat: Appearances, n_systems: int) -> dict[str, np.ndarray]:
    """Per system: times shown, chosen MOST, chosen LEAST, and left in the middle."""
    shown = np.bincount(flat.system, minlength=n_systems)
    most = np.bincount(flat.system[flat.rank == 1], minlength=n_systems)
    least = np.bincount(flat.system[flat.rank == flat.shown_count], minlength=n_systems)
    return {"shown": shown, "most": most, "least": least, "middle": shown - most - least}


def win_matrix(flat: Appearances, n_systems: int) -> np.ndarray:
    """``W[i, j]``: responses in which system i was ranked above system j (ties give nothing)."""
    order = np.argsort(flat.response, kind="stable")
    response, system, rank = flat.response[order], flat.system[order], flat.rank[order]
    starts = np.flatnonzero(np.r_[True, response[1:] != response[:-1]])
    sizes = np.diff(np.r_[starts, response.size])
    wins = np.zeros((n_systems, n_systems), dtype=np.int64)
    for size in np.unique(sizes):
        first = starts[sizes == size]
        for a in range(size):
            for b in range(size):
                if a == b:
                    continue
                i, j = first + a, first + b
                better = rank[i] < rank[j]
                np.add.at(wins, (system[i][better], system[j][better]), 1)
    return wins


def pick_win_matrix(shown: np.ndarray, picked: np.ndarray, n_systems: int) -> np.ndarray:
    """``W[i, j]``: answers that picked system i while system j was shown beside it (a pick of
    one among the shown, ``picked`` -1 for none: a tie or no answer)."""
    wins = np.zeros((n_systems, n_systems), dtype=np.int64)
    shown = np.asarray(shown, dtype=np.int64)
    picked = np.asarray(picked, dtype=np.int64)
    for r in np.flatnonzero(picked >= 0):
        for other in shown[r]:
            if other >= 0 and other != picked[r]:
                wins[picked[r], other] += 1
    return wins


@dataclass(frozen=True)
class WinTests:
    """``wins[i, j]``: comparisons i won over j; ``p`` and ``p_holm``: symmetric, NaN where
    two systems never met or the test is undefined; ``tests[(i, j)]`` (i < j): the test's
    ``Estimate`` (its details: statistic, df, units, method)."""

    wins: np.ndarray
    p: np.ndarray
    p_holm: np.ndarray
    tests: dict[tuple[int, int], Estimate]


def win_tests(first, second, outcome, units, participants=None, *, n_systems: int) -> WinTests:
    """Wins per pair of systems, each pair's two-sided test of a win rate of one half, and
    the Holm-adjusted p.

    ``first``, ``second``, ``outcome``: comparisons as ``stats.bradley_terry`` breaks answers
    into them (1: first preferred, 0: second; ties, 0.5, are no win and are left out);
    ``units`` and ``participants``: each comparison's unit (item, or case) and rater. The
    test is ``stats.clustered.share_test`` on the decisive comparisons of the pair: a
    cluster-robust t of the win rate by unit (and participant where they cross units), not a
    sign test that counts every comparison as independent (several answers to one item
    share that item's leaning, so it rejected far too often when items differ).

    Holm's family: every pair whose test is defined (a pair met on one unit only is not)."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=np.float64)
    decisive = (outcome == 0.0) | (outcome == 1.0)
    winner = np.where(outcome == 1.0, first, second)[decisive]
    loser = np.where(outcome == 1.0, second, first)[decisive]
    wins = np.bincount(winner * n_systems + loser, minlength=n_systems * n_systems).reshape(
        n_systems, n_systems
    )
    unit = np.asarray(units)[decisive]
    person = None if participants is None else np.asarray(participants)[decisive]
    pairs, tests = [], []
    for i, j in itertools.combinations(range(n_systems), 2):
        mask = ((winner == i) & (loser == j)) | ((winner == j) & (loser == i))
        if not mask.any():
            continue
        won = (winner[mask] == i).astype(np.float64)
        pairs.append((i, j))
        tests.append(share_test(won, 0.5, unit[mask], None if person is None else person[mask]))
    raw = np.full((n_systems, n_systems), np.nan)
    adjusted = np.full((n_systems, n_systems), np.nan)
    for (i, j), test, p in zip(pairs, tests, holm_defined(tests), strict=True):
        raw[i, j] = raw[j, i] = test.value
        adjusted[i, j] = adjusted[j, i] = np.nan if p is None else p
    return WinTests(wins, raw, adjusted, dict(zip(pairs, tests, strict=True)))


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (same order as given)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


def holm_defined(tests: Sequence[Estimate]) -> list[float | None]:
    """Holm over the tests (``Estimate``s) that are defined, in their order; None for an
    undefined one, which tests no hypothesis and so is no member of the family."""
    tested = [k for k, test in enumerate(tests) if test.defined]
    adjusted = dict(zip(tested, holm([tests[k].value for k in tested]), strict=True))
    return [float(adjusted[k]) if k in adjusted else None for k in range(len(tests))]


def bradley_terry(wins: np.ndarray, *, alpha: float = BT_REGULARISATION) -> np.ndarray | None:
    """Bradley-Terry log-strengths (mean zero) fitted to the win matrix with choix's I-LSR.

    Using every implied pairwise preference of a ranking ("full rank breaking") gives a
    consistent Plackett-Luce fit for these data; ``alpha`` is choix's regularisation,
    which keeps strengths finite when a system never loses or never wins. None without
    comparisons.
    """
    import choix

    if len(wins) < 2 or wins.sum() == 0:
        return None
    strengths = choix.ilsr_pairwise_dense(wins.astype(np.float64), alpha=alpha)
    return strengths - strengths.mean()


def split_half_reliability(
    items, flat: Appearances, n_systems: int, *, splits: int = 100, seed: int = 0
) -> Estimate:
    """Split-half reliability of best-worst scores (Kiritchenko & Mohammad).

    ``items`` gives each response's item. Each item's responses are split at random into
    two halves, every (item, system) gets a best-worst score from each half, and the
    Spearman correlation of the two sets of scores is averaged over ``splits`` splits.
    ``details`` add the Spearman-Brown prediction for the full set.
    """
    from scipy import stats  # imported on use: see stats/__init__.py

    item_of_response = np.asarray(items, dtype=np.int64)
    rng = np.random.default_rng(seed)
    per_item = np.bincount(item_of_response)
    unit = item_of_response[flat.response] * n_systems + flat.system
    size = int(unit.max()) + 1 if unit.size else 0
    score = flat.score
    rhos = []
    for _ in range(splits):
        first_half = _random_half(item_of_response, per_item, rng)[flat.response]
        a = _unit_scores(unit[first_half], score[first_half], size)
        b = _unit_scores(unit[~first_half], score[~first_half], size)
        both = ~np.isnan(a) & ~np.isnan(b)
        if both.sum() < 3 or np.ptp(a[both]) == 0 or np.ptp(b[both]) == 0:
            continue
        rhos.append(stats.spearmanr(a[both], b[both]).statistic)
    if not rhos:
        return Estimate.undefined("too few items with two or more responses, or no variation")
    rho = float(np.mean(rhos))
    details = {"splits": len(rhos), "spearman_brown": 2 * rho / (1 + rho) if rho > -1 else float("nan")}
    return Estimate(rho, n=int((per_item >= 2).sum()), details=details)


def _random_half(item: np.ndarray, per_item: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per response: True for the first half of its item's responses in a random order."""
    order = np.lexsort((rng.random(item.size), item))
    starts = np.r_[0, np.cumsum(per_item)[:-1]]
    position = np.empty(item.size, dtype=np.int64)
    position[order] = np.arange(item.size) - starts[item[order]]
    return position < per_item[item] // 2


def _unit_scores(unit: np.ndarray, score: np.ndarray, size: int) -> np.ndarray:
    counts = np.bincount(unit, minlength=size).astype(np.float64)
    sums = np.bincount(unit, weights=score, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)
