"""Bradley-Terry strengths with intervals that respect the design, rank intervals and the
position bias, for every pick, ranking and best-worst question.

Data: one row per comparison of two systems, in the order they were shown (``first`` was
shown before ``second``), its ``outcome`` (1: first preferred, 0: second preferred, 0.5: a
tie the rater chose) and its ``cluster`` (the item: every comparison made on one item
shares the item's peculiarities, so they are not independent).

- **Model**: P(first preferred) = logistic(θ_first − θ_second); strengths are log-odds,
  centred to mean zero. A tie counts as half a win for each side ("ties as halves": the
  Bernoulli quasi-likelihood with outcome 0.5; Davidson's tie parameter is not fitted).
- **Fit**: Newton's method on the log-likelihood with a ridge ``RIDGE`` · Σθ²/2, which keeps
  strengths finite when a system never loses or never wins and fixes the mean at zero;
  with data that identify the strengths it moves them by ~RIDGE/information (≤ 1e-3).
- **Intervals**: the cluster-robust sandwich covariance, clustered by item, with the CR1
  factor G/(G−1) and Student-t quantiles on G−1 degrees of freedom (G: items).
- **Rank intervals**: simultaneous: every pair of systems gets a Bonferroni interval on its
  difference (level 1 − α/m, m pairs); system i ranks at best 1 + #{j surely stronger} and at
  worst K − #{j surely weaker}, so all the rank intervals hold together with ≥ 1 − α.
- **Position bias**: the same model with a term γ for the system shown first,
  logistic(θ_first − θ_second + γ); γ > 0: raters prefer what they saw first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bootstrap import CONFIDENCE

RIDGE = 0.01
_NEWTON_STEPS = 100
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Comparisons:
    """Pairwise comparisons in display order (see the module docstring)."""

    first: np.ndarray
    second: np.ndarray
    outcome: np.ndarray
    cluster: np.ndarray

    def __len__(self) -> int:
        return int(self.first.size)


@dataclass(frozen=True)
class Fit:
    """A fitted model: ``strengths`` (mean zero), their covariance, ``position`` (γ, NaN
    when not fitted) and its variance, and the number of clusters the covariance used."""

    strengths: np.ndarray
    covariance: np.ndarray
    position: float
    position_variance: float
    clusters: int


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


def comparisons(first, second, outcome, cluster) -> Comparisons:
    """Comparisons from parallel sequences, leaving out a system compared with itself."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    keep = (first >= 0) & (second >= 0) & (first != second)
    return Comparisons(
        first[keep],
        second[keep],
        np.asarray(outcome, dtype=np.float64)[keep],
        np.asarray(cluster, dtype=np.int64)[keep],
    )


def from_picks(shown, picked, ties, cluster) -> Comparisons:
    """From picks of one among the shown (columns of ``shown`` in display order, -1 padding;
    ``picked`` a system code or -1): the pick beats every other shown system; a tie
    (``ties`` True) is half a win for each of the shown. Pairs neither side of which was
    picked say nothing and are left out."""
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
            parts.append((left[keep], right[keep], outcome[keep], np.asarray(cluster)[keep]))
    return _stacked(parts)


def from_ranks(shown, rank, cluster) -> Comparisons:
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
            parts.append((shown[keep, a], shown[keep, b], outcome[keep], np.asarray(cluster)[keep]))
    return _stacked(parts)


def from_best_worst(shown, most, least, cluster) -> Comparisons:
    """From MOST / LEAST choices: MOST ranks 1, LEAST k, the others tie in between (as
    ``stats.ranking.appearances``); responses without both choices are left out."""
    shown = np.asarray(shown, dtype=np.int64)
    most = np.asarray(most, dtype=np.int64)[:, None]
    least = np.asarray(least, dtype=np.int64)[:, None]
    k = (shown >= 0).sum(axis=1).astype(np.float64)[:, None]
    rank = np.where(shown == most, 1.0, np.where(shown == least, k, (k + 1) / 2))
    answered = (most >= 0) & (least >= 0) & (most != least)
    return from_ranks(shown, np.where((shown >= 0) & answered, rank, np.nan), cluster)


def _stacked(parts) -> Comparisons:
    if not parts:
        empty = np.array([], dtype=np.int64)
        return Comparisons(empty, empty, empty.astype(np.float64), empty)
    return comparisons(*(np.concatenate([p[k] for p in parts]) for k in range(4)))


def fit(data: Comparisons, n_systems: int, *, position: bool = False, ridge: float = RIDGE) -> Fit:
    """The (ridge-penalised) maximum-likelihood strengths and their cluster-robust covariance;
    with ``position`` also the first-shown term γ."""
    model = _Model(data, n_systems, position)
    params = model.newton(ridge)
    covariance, clusters = model.sandwich(params, ridge)
    k = n_systems
    centre = np.eye(k) - 1.0 / k
    strengths = centre @ params[:k]
    strength_cov = centre @ covariance[:k, :k] @ centre.T
    gamma = float(params[k]) if position else float("nan")
    gamma_var = float(covariance[k, k]) if position else float("nan")
    return Fit(strengths, strength_cov, gamma, gamma_var, clusters)


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

    def sandwich(self, params: np.ndarray, ridge: float) -> tuple[np.ndarray, int]:
        """Cluster-robust covariance H⁻¹ (G/(G−1) Σ_g s_g s_gᵀ) H⁻¹, s_g the cluster's score."""
        data, k = self.data, self.k
        p = _sigmoid(self.predictor(params))
        residual = data.outcome - p
        labels, index = np.unique(data.cluster, return_inverse=True)
        g = labels.size
        per_cluster = np.zeros((g, self.size))
        per_cluster[:, :k] = (
            np.bincount(index * k + data.first, residual, g * k)
            - np.bincount(index * k + data.second, residual, g * k)
        ).reshape(g, k)
        if self.position:
            per_cluster[:, k] = np.bincount(index, residual, g)
        meat = per_cluster.T @ per_cluster * (g / (g - 1) if g > 1 else 1.0)
        information = self.information(p * (1 - p)) + ridge * np.eye(self.size)
        bread = np.linalg.pinv(information, hermitian=True)  # singular along Σθ without a ridge
        return bread @ meat @ bread, int(g)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def t_quantile(level: float, clusters: int) -> float:
    """The two-sided Student-t quantile on G−1 degrees of freedom (normal beyond 1000)."""
    from scipy import stats  # imported on use: see stats/__init__.py

    if clusters > 1000:
        return float(stats.norm.ppf(0.5 + level / 2))
    return float(stats.t.ppf(0.5 + level / 2, max(clusters - 1, 1)))


def rank_systems(data: Comparisons, n_systems: int, *, confidence: float = CONFIDENCE) -> Ranking | None:
    """Strengths, intervals and rank intervals (module docstring); None with fewer than two
    systems compared or fewer than two items."""
    if n_systems < 2 or len(data) == 0 or np.unique(data.cluster).size < 2:
        return None
    fitted = fit(data, n_systems)
    theta, cov = fitted.strengths, fitted.covariance
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    quantile = t_quantile(confidence, fitted.clusters)
    diff = theta[:, None] - theta[None, :]
    diff_se = np.sqrt(np.maximum(np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov, 0.0))
    pairs = n_systems * (n_systems - 1) // 2
    joint = t_quantile(1 - (1 - confidence) / pairs, fitted.clusters)
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
        difference_low=diff - quantile * diff_se,
        difference_high=diff + quantile * diff_se,
        clusters=fitted.clusters,
        unbounded=_unbounded(data, n_systems),
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


def position_bias(
    data: Comparisons, n_systems: int, *, confidence: float = CONFIDENCE
) -> PositionBias | None:
    """The first-shown term of the model with a position effect; None with fewer than two
    items."""
    if len(data) == 0 or np.unique(data.cluster).size < 2:
        return None
    fitted = fit(data, n_systems, position=True)
    half = t_quantile(confidence, fitted.clusters) * np.sqrt(max(fitted.position_variance, 0.0))
    return PositionBias(
        gamma=fitted.position,
        low=fitted.position - half,
        high=fitted.position + half,
        first_share=float(data.outcome.mean()),
        clusters=fitted.clusters,
    )
