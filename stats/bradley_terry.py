"""Bradley-Terry strengths with intervals that respect the design, rank intervals and the
position bias, for every pick, ranking and best-worst question.

Data: one row per comparison of two systems, in the order they were shown (``first`` was
shown before ``second``), its ``outcome`` (1: first preferred, 0: second preferred, 0.5: a
tie the rater chose), its ``cluster`` (the item: every comparison made on one item shares
the item's peculiarities, so they are not independent) and, where known, its
``participant`` (the rater: one who prefers one system's style does so on every item they
answer, so their comparisons are not independent either).

- **Model**: P(first preferred) = logistic(θ_first − θ_second); strengths are log-odds,
  centred to mean zero. A tie counts as half a win for each side ("ties as halves": the
  Bernoulli quasi-likelihood with outcome 0.5; Davidson's tie parameter is not fitted).
- **Fit**: Newton's method on the log-likelihood with a ridge ``RIDGE`` · Σθ²/2, which keeps
  strengths finite when a system never loses or never wins and fixes the mean at zero;
  with data that identify the strengths it moves them by ~RIDGE/information (≤ 1e-3).
- **Intervals**: the cluster-robust sandwich covariance, clustered by item, with the CR1
  factor G/(G−1) and Student-t quantiles on G−1 degrees of freedom (G: items). Where
  participants cross items (``stats.clustered.crossed``: one answered two items or more),
  clustered two ways, by item and by participant: V = V_item + V_participant − V_cell (each
  with its own CR1 factor, Cameron, Gelbach & Miller), falling back to the larger one-way
  covariance when a variance the figures use is not positive, with Satterthwaite's degrees
  of freedom per figure (``stats.clustered.combined`` and ``Sandwich.dfs``: the rule of the
  scale means).
- **Rank intervals**: simultaneous: every pair of systems gets a Bonferroni interval on its
  difference (level 1 − α/m, m pairs; t on that difference's degrees of freedom); system i
  ranks at best 1 + #{j surely stronger} and at worst K − #{j surely weaker}, so all the
  rank intervals hold together with ≥ 1 − α.
- **Position bias**: the same model with a term γ for the system shown first,
  logistic(θ_first − θ_second + γ); γ > 0: raters prefer what they saw first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bootstrap import CONFIDENCE
from .clustered import Sandwich, combined, crossed, t_quantile, unit_cells
from .groups import factorize

RIDGE = 0.01
ITEMS = "cluster-robust sandwich (items), t(G-1)"
ITEMS_AND_PARTICIPANTS = "cluster-robust sandwich (items x participants), Satterthwaite t"
# two ways with a variance that was not positive: the larger one-way covariance, by participant
PARTICIPANTS = "cluster-robust sandwich (participants), t(G-1)"
_NEWTON_STEPS = 100
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Comparisons:
    """Pairwise comparisons in display order (see the module docstring)."""

    first: np.ndarray
    second: np.ndarray
    outcome: np.ndarray
    cluster: np.ndarray
    participant: np.ndarray | None = None  # codes; None: not known (clustered by item only)

    def __len__(self) -> int:
        return int(self.first.size)


@dataclass(frozen=True)
class Fit:
    """A fitted model: ``strengths`` (mean zero), their covariance, ``position`` (γ, NaN
    when not fitted) and its variance, the items (``clusters``) and participants (0 when
    clustered by item only) the covariance used, its ``method``, and the ``sandwich`` of the
    parameters (θ, then γ) with its one-way parts, whose ``dfs`` give each figure's degrees
    of freedom."""

    strengths: np.ndarray
    covariance: np.ndarray
    position: float
    position_variance: float
    clusters: int
    participants: int
    method: str
    sandwich: Sandwich


@dataclass(frozen=True)
class Ranking:
    """Strengths with marginal intervals, ranks with simultaneous intervals, and the pairwise
    differences (``difference[i, j]`` = θ_i − θ_j) with marginal intervals."""

    strengths: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    rank: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    difference: np.ndarray
    difference_low: np.ndarray
    difference_high: np.ndarray
    clusters: int
    unbounded: tuple[int, ...]  # systems that never lost or never won: no finite interval
    df: np.ndarray  # the strengths' t degrees of freedom
    participants: int  # participant clusters (0: clustered by item only)
    method: str


def comparisons(first, second, outcome, cluster, participant=None) -> Comparisons:
    """Comparisons from parallel sequences, leaving out a system compared with itself;
    ``participant``: each comparison's rater (any labels; kept as codes), or None."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    keep = (first >= 0) & (second >= 0) & (first != second)
    people = None if participant is None else factorize(np.asarray(participant)[keep])[1].astype(np.int64)
    return Comparisons(
        first[keep],
        second[keep],
        np.asarray(outcome, dtype=np.float64)[keep],
        np.asarray(cluster, dtype=np.int64)[keep],
        people,
    )


def from_picks(shown, picked, ties, cluster, participant=None) -> Comparisons:
    """From picks of one among the shown (columns of ``shown`` in display order, -1 padding;
    ``picked`` a system code or -1): the pick beats every other shown system; a tie
    (``ties`` True) is half a win for each of the shown. Pairs neither side of which was
    picked say nothing and are left out. ``cluster``, ``participant``: per response."""
    shown = np.asarray(shown, dtype=np.int64)
    picked = np.asarray(picked, dtype=np.int64)
    ties = np.asarray(ties, dtype=bool)
    parts = []
    for a in range(shown.shape[1]):
        for b in range(a + 1, shown.shape[1]):
            left, right = shown[:, a], shown[:, b]
            outcome = np.where(
                ties, 0.5, np.where(picked == left, 1.0, np.where(picked == right, 0.0, np.nan))
            )
            keep = (left >= 0) & (right >= 0) & ~np.isnan(outcome) & (ties | (picked >= 0))
            parts.append((left[keep], right[keep], outcome[keep], *_per_response(keep, cluster, participant)))
    return _stacked(parts)


def from_ranks(shown, rank, cluster, participant=None) -> Comparisons:
    """From rankings (``rank`` per column of ``shown``, 1 best, NaN where not ranked): every
    pair with different ranks is one comparison ("full rank breaking"); equal ranks (a
    best-worst page's unranked middle) say nothing about that pair."""
    shown = np.asarray(shown, dtype=np.int64)
    rank = np.asarray(rank, dtype=np.float64)
    parts = []
    for a in range(shown.shape[1]):
        for b in range(a + 1, shown.shape[1]):
            keep = (shown[:, a] >= 0) & (shown[:, b] >= 0) & (rank[:, a] != rank[:, b])
            keep &= ~np.isnan(rank[:, a]) & ~np.isnan(rank[:, b])
            outcome = (rank[:, a] < rank[:, b]).astype(np.float64)
            parts.append(
                (shown[keep, a], shown[keep, b], outcome[keep], *_per_response(keep, cluster, participant))
            )
    return _stacked(parts)


def from_best_worst(shown, most, least, cluster, participant=None) -> Comparisons:
    """From MOST / LEAST choices: MOST ranks 1, LEAST k, the others tie in between (as
    ``stats.ranking.appearances``); responses without both choices are left out."""
    shown = np.asarray(shown, dtype=np.int64)
    most = np.asarray(most, dtype=np.int64)[:, None]
    least = np.asarray(least, dtype=np.int64)[:, None]
    k = (shown >= 0).sum(axis=1).astype(np.float64)[:, None]
    rank = np.where(shown == most, 1.0, np.where(shown == least, k, (k + 1) / 2))
    answered = (most >= 0) & (least >= 0) & (most != least)
    return from_ranks(shown, np.where((shown >= 0) & answered, rank, np.nan), cluster, participant)


def _per_response(keep: np.ndarray, cluster, participant) -> tuple:
    people = None if participant is None else np.asarray(participant)[keep]
    return np.asarray(cluster)[keep], people


def _stacked(parts) -> Comparisons:
    if not parts:
        empty = np.array([], dtype=np.int64)
        return Comparisons(empty, empty, empty.astype(np.float64), empty)
    first, second, outcome, cluster = (np.concatenate([p[k] for p in parts]) for k in range(4))
    people = None if parts[0][4] is None else np.concatenate([p[4] for p in parts])
    return comparisons(first, second, outcome, cluster, people)


def fit(data: Comparisons, n_systems: int, *, position: bool = False, ridge: float = RIDGE) -> Fit:
    """The (ridge-penalised) maximum-likelihood strengths and their cluster-robust covariance
    (by item, and by participant where participants cross items); with ``position`` also the
    first-shown term γ."""
    model = _Model(data, n_systems, position)
    params = model.newton(ridge)
    found, clusters, participants, method = model.sandwich(params, ridge)
    k = n_systems
    centre = np.eye(k) - 1.0 / k
    strengths = centre @ params[:k]
    strength_cov = centre @ found.covariance[:k, :k] @ centre.T
    gamma = float(params[k]) if position else float("nan")
    gamma_var = float(found.covariance[k, k]) if position else float("nan")
    return Fit(strengths, strength_cov, gamma, gamma_var, clusters, participants, method, found)


def contrasts(n_systems: int, size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows on the parameters (θ, then γ when ``size`` is n_systems + 1) giving the centred
    strengths and the differences θ_i − θ_j of the pairs i < j (``np.triu_indices`` order)."""
    k = n_systems
    size = k if size is None else size
    centred = np.zeros((k, size))
    centred[:, :k] = np.eye(k) - 1.0 / k
    i, j = np.triu_indices(k, 1)
    differences = np.zeros((i.size, size))
    differences[np.arange(i.size), i] = 1.0
    differences[np.arange(i.size), j] = -1.0
    return centred, differences


class _Model:
    """The logistic model's linear predictor, scores and information, computed from the
    comparisons' indices (counting, no comparisons × parameters matrix: a study with a
    million comparisons of 26 systems would need 200 MB for one)."""

    def __init__(self, data: Comparisons, n_systems: int, position: bool):
        self.data, self.k, self.position = data, n_systems, position
        self.size = n_systems + int(position)

    def predictor(self, params: np.ndarray) -> np.ndarray:
        eta = params[self.data.first] - params[self.data.second]
        return eta + params[self.k] if self.position else eta

    def gradient(self, residual: np.ndarray) -> np.ndarray:
        """Σ over comparisons of (outcome − p) × the comparison's row of the design."""
        k, data = self.k, self.data
        out = np.bincount(data.first, residual, k) - np.bincount(data.second, residual, k)
        return np.r_[out, residual.sum()] if self.position else out

    def information(self, weight: np.ndarray) -> np.ndarray:
        """Σ over comparisons of p(1 − p) × the outer product of the design's row."""
        k, data = self.k, self.data
        pairs = np.bincount(data.first * k + data.second, weight, k * k).reshape(k, k)
        as_first, as_second = np.bincount(data.first, weight, k), np.bincount(data.second, weight, k)
        matrix = np.zeros((self.size, self.size))
        matrix[:k, :k] = np.diag(as_first + as_second) - pairs - pairs.T
        if self.position:
            matrix[k, k] = weight.sum()
            matrix[k, :k] = matrix[:k, k] = as_first - as_second
        return matrix

    def newton(self, ridge: float) -> np.ndarray:
        """Newton's method on the penalised log-likelihood (concave: it converges from zero)."""
        params = np.zeros(self.size)
        penalty = ridge * np.eye(self.size)
        for _ in range(_NEWTON_STEPS):
            p = _sigmoid(self.predictor(params))
            gradient = self.gradient(self.data.outcome - p) - ridge * params
            step = np.linalg.pinv(self.information(p * (1 - p)) + penalty, hermitian=True) @ gradient
            params += step
            step[: self.k] -= step[: self.k].mean()  # the mean of θ is the ridge's, and rounding's
            if np.abs(step).max() < _TOLERANCE:
                break
        return params

    def sandwich(self, params: np.ndarray, ridge: float) -> tuple[Sandwich, int, int, str]:
        """Cluster-robust covariance H⁻¹ (G/(G−1) Σ_g s_g s_gᵀ) H⁻¹, s_g the cluster's score:
        by item, or, where participants cross items, by item, participant and their cells
        combined two ways (``stats.clustered.combined``; its fallback checks the variances of
        the strengths, their differences and γ). Also the items, the participants (0: one
        way) and the method."""
        data = self.data
        p = _sigmoid(self.predictor(params))
        residual = data.outcome - p
        information = self.information(p * (1 - p)) + ridge * np.eye(self.size)
        bread = np.linalg.pinv(information, hermitian=True)  # singular along Σθ without a ridge
        item = factorize(data.cluster)[1]
        items = int(item.max()) + 1
        if data.participant is None or not crossed(item, data.participant):
            part = self._one_way(bread, residual, item, items)
            return combined(params, [(part, items, 1)]), items, 0, ITEMS
        person = factorize(data.participant)[1]
        cell = unit_cells(item, person)
        groups = [(item, 1), (person, 1), (cell, -1)]
        parts = []
        for codes, sign in groups:
            size = int(codes.max()) + 1
            parts.append((self._one_way(bread, residual, codes, size), size, sign))
        centred, differences = contrasts(self.k, self.size)
        checked = np.vstack([centred, differences, np.eye(self.size)[self.k :]])
        found = combined(params, parts, checked)
        people = parts[1][1]
        if len(found.parts) == 3:
            return found, items, people, ITEMS_AND_PARTICIPANTS
        if found.parts[0][0] is parts[0][0]:
            return found, items, 0, ITEMS
        return found, items, people, PARTICIPANTS

    def _one_way(self, bread: np.ndarray, residual: np.ndarray, codes: np.ndarray, g: int) -> np.ndarray:
        """One clustering's CR1 sandwich: bread · G/(G−1) Σ_g s_g s_gᵀ · bread."""
        data, k = self.data, self.k
        per_cluster = np.zeros((g, self.size))
        per_cluster[:, :k] = (
            np.bincount(codes * k + data.first, residual, g * k)
            - np.bincount(codes * k + data.second, residual, g * k)
        ).reshape(g, k)
        if self.position:
            per_cluster[:, k] = np.bincount(codes, residual, g)
        meat = per_cluster.T @ per_cluster * (g / (g - 1) if g > 1 else 1.0)
        return bread @ meat @ bread


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def rank_systems(data: Comparisons, n_systems: int, *, confidence: float = CONFIDENCE) -> Ranking | None:
    """Strengths, intervals and rank intervals (module docstring); None with fewer than two
    systems compared or fewer than two items."""
    if n_systems < 2 or len(data) == 0 or np.unique(data.cluster).size < 2:
        return None
    fitted = fit(data, n_systems)
    theta, cov = fitted.strengths, fitted.covariance
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    centred, differences = contrasts(n_systems)
    df = fitted.sandwich.dfs(centred)
    quantile = t_quantile(confidence, df)
    diff = theta[:, None] - theta[None, :]
    diff_se = np.sqrt(np.maximum(np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov, 0.0))
    upper = np.triu_indices(n_systems, 1)
    diff_df = np.full((n_systems, n_systems), float(fitted.clusters - 1))
    diff_df[upper] = diff_df.T[upper] = fitted.sandwich.dfs(differences)
    pairs = n_systems * (n_systems - 1) // 2
    diff_quantile = t_quantile(confidence, diff_df)
    joint = t_quantile(1 - (1 - confidence) / pairs, diff_df)
    surely_stronger = (diff - joint * diff_se) > 0  # [i, j]: i surely above j
    np.fill_diagonal(surely_stronger, False)
    rank = 1 + (diff < 0).sum(axis=1)  # 1 + systems with a larger strength
    return Ranking(
        strengths=theta,
        low=theta - quantile * se,
        high=theta + quantile * se,
        se=se,
        rank=rank.astype(np.int64),
        rank_low=1 + surely_stronger.sum(axis=0),
        rank_high=n_systems - surely_stronger.sum(axis=1),
        difference=diff,
        difference_low=diff - diff_quantile * diff_se,
        difference_high=diff + diff_quantile * diff_se,
        clusters=fitted.clusters,
        unbounded=_unbounded(data, n_systems),
        df=df,
        participants=fitted.participants,
        method=fitted.method,
    )


def _unbounded(data: Comparisons, n_systems: int) -> tuple[int, ...]:
    """Systems compared that never won or never lost: the likelihood has no finite maximum
    for them, so their strength is the ridge's and has no interval."""
    won = np.bincount(data.first, weights=data.outcome, minlength=n_systems)
    won += np.bincount(data.second, weights=1 - data.outcome, minlength=n_systems)
    met = np.bincount(data.first, minlength=n_systems) + np.bincount(data.second, minlength=n_systems)
    return tuple(int(i) for i in np.flatnonzero((met > 0) & ((won == 0) | (won == met))))


@dataclass(frozen=True)
class PositionBias:
    """γ (log-odds in favour of the first shown) with its interval, and the share of
    decided comparisons the first shown won (raw, before adjusting for strengths)."""

    gamma: float
    low: float
    high: float
    first_share: float
    clusters: int
    df: float
    participants: int
    method: str


def position_bias(
    data: Comparisons, n_systems: int, *, confidence: float = CONFIDENCE
) -> PositionBias | None:
    """The first-shown term of the model with a position effect; None with fewer than two
    items."""
    if len(data) == 0 or np.unique(data.cluster).size < 2:
        return None
    fitted = fit(data, n_systems, position=True)
    df = fitted.sandwich.df(n_systems)
    half = float(t_quantile(confidence, df)) * np.sqrt(max(fitted.position_variance, 0.0))
    return PositionBias(
        gamma=fitted.position,
        low=fitted.position - half,
        high=fitted.position + half,
        first_share=float(data.outcome.mean()),
        clusters=fitted.clusters,
        df=df,
        participants=fitted.participants,
        method=fitted.method,
    )
