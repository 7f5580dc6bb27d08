"""Prediction-powered Bradley-Terry strengths and rank sets: the PPI++ M-estimator
(Angelopoulos, Duchi & Zrnic 2023) of ``stats.bradley_terry``'s model, whose rank sets follow
prediction-powered ranking (Chatzi et al. 2024) with the simultaneous rule the reports already
use for rank intervals.

The human comparisons (``labeled``: outcome y, 1 / 0 / 0.5) each have the judge's outcome on
the same item and pair (f); the judge's comparisons on items no human answered are
``unlabeled``. The strengths θ maximise the rectified log-likelihood

    (1/n) Σ_labeled ℓ(y; θ) − (λ/n) Σ_labeled ℓ(f; θ) + (λ/N) Σ_unlabeled ℓ(f; θ) − (ridge/2n)|θ|²

(ℓ: the Bernoulli log-likelihood of the logistic model; concave for λ ∈ [0, 1]; the ridge is
``bradley_terry.RIDGE`` on the humans' sum scale, so that λ = 0 is ``bradley_terry.fit``
exactly). The covariance is the sandwich H⁻¹ (V_labeled(λ) + λ² V_unlabeled) H⁻¹, H the
rectified objective's information, V_labeled from per-cluster sums of the scores
x(y − p) − λ x(f − p) (by item; two ways with participants where they cross items, as
``stats.clustered.combined``), V_unlabeled from the judge's per-item scores. λ is tuned as in
PPI++: the minimiser over [0, 1] of the trace of the centred strengths' covariance, here
on a grid of 21 values, each fitted with its own sandwich (``_Problem.tuned``).
Intervals: Student's t on the humans-only fit's degrees of freedom per system
(``bradley_terry.rank_systems``: items − 1, or two ways Satterthwaite's), so that at λ = 0
they are the reports' own; rank sets: every pair of systems gets a Bonferroni interval of its
difference (on the fewest of those df), as ``rank_systems`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bootstrap import CONFIDENCE
from .bradley_terry import RIDGE, Comparisons, _Model, contrasts, rank_systems
from .clustered import crossed, t_quantile, unit_cells
from .groups import factorize

_NEWTON_STEPS = 100
LAMBDAS = np.linspace(0.0, 1.0, 21)
_TOLERANCE = 1e-10


@dataclass(frozen=True)
class PPIStrengths:
    """Strengths (mean zero) with marginal intervals, rank sets (simultaneous), the pairwise
    differences, at the tuned λ; ``humans_*``: the same at λ = 0; ``effective_n``: the
    human comparisons the humans-only fit would need for the PPI covariance's trace."""

    strengths: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    humans: np.ndarray
    humans_low: np.ndarray
    humans_high: np.ndarray
    humans_rank_low: np.ndarray
    humans_rank_high: np.ndarray
    lam: float
    df: float
    n: int
    n_judge: int
    effective_n: float


def ppi_strengths(
    labeled: Comparisons,
    judge: np.ndarray,
    unlabeled: Comparisons,
    n_systems: int,
    *,
    lam: float | None = None,
    ridge: float = RIDGE,
    confidence: float = CONFIDENCE,
    weights: tuple[np.ndarray, np.ndarray] | None = None,
) -> PPIStrengths | None:
    """PPI++ Bradley-Terry (module docstring). ``judge``: the judge's outcome for each labeled
    comparison, in its orientation. ``weights``: per labeled and per unlabeled comparison
    (inverse inclusion probabilities: 1/π, 1/(1 − π)), each set's scaled to mean 1, so that
    each sum of the objective is a Hájek mean (None: equal). None with fewer than two labeled
    items, no unlabeled comparison or fewer than two systems."""
    if n_systems < 2 or len(unlabeled) == 0 or np.unique(labeled.cluster).size < 2:
        return None
    problem = _Problem(labeled, np.asarray(judge, dtype=np.float64), unlabeled, n_systems, ridge, weights)
    if lam is None:
        lam = problem.tuned()
    theta, covariance = problem.fit(lam)
    theta0, covariance0 = problem.fit(0.0)
    reference = rank_systems(labeled, n_systems, confidence=confidence)  # the humans' own fit
    df = problem.df if reference is None else reference.df
    centred, _ = contrasts(n_systems)
    trace, trace0 = np.trace(centred @ covariance @ centred.T), np.trace(centred @ covariance0 @ centred.T)
    ppi, humans = _ranked(theta, covariance, df, confidence), _ranked(theta0, covariance0, df, confidence)
    n = len(labeled)
    strengths, low, high, rank_low, rank_high = ppi
    humans_strengths, humans_low, humans_high, humans_rank_low, humans_rank_high = humans
    return PPIStrengths(
        strengths=strengths,
        low=low,
        high=high,
        rank_low=rank_low,
        rank_high=rank_high,
        humans=humans_strengths,
        humans_low=humans_low,
        humans_high=humans_high,
        humans_rank_low=humans_rank_low,
        humans_rank_high=humans_rank_high,
        lam=float(lam),
        df=float(np.min(df)),
        n=n,
        n_judge=len(unlabeled) + n,
        effective_n=float(n * trace0 / trace) if trace > 0 else float("nan"),
    )


def _ranked(theta: np.ndarray, covariance: np.ndarray, df, confidence: float) -> tuple:
    """Centred strengths, their intervals (t on ``df``: per system, or one number) and
    simultaneous rank sets (Bonferroni over pairs, on the fewest degrees of freedom)."""
    k = theta.size
    centre = np.eye(k) - 1.0 / k
    strengths = centre @ theta
    cov = centre @ covariance @ centre.T
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    half = t_quantile(confidence, np.asarray(df, dtype=np.float64)) * se
    diff = strengths[:, None] - strengths[None, :]
    diff_se = np.sqrt(np.maximum(np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov, 0.0))
    joint = float(t_quantile(1 - (1 - confidence) / (k * (k - 1) // 2), float(np.min(df))))
    surely = (diff - joint * diff_se) > 0
    np.fill_diagonal(surely, False)
    return strengths, strengths - half, strengths + half, 1 + surely.sum(axis=0), k - surely.sum(axis=1)


class _Problem:
    """The rectified objective's pieces: the two sets' models, scores per cluster."""

    def __init__(
        self,
        labeled: Comparisons,
        judge: np.ndarray,
        unlabeled: Comparisons,
        k: int,
        ridge: float,
        weights: tuple[np.ndarray, np.ndarray] | None = None,
    ):
        self.k, self.n, self.big_n = k, len(labeled), len(unlabeled)
        w_l, w_u = weights if weights is not None else (np.ones(self.n), np.ones(self.big_n))
        # each set's weights over its size: a comparison's share of its set's mean
        self.w_l = np.asarray(w_l, dtype=np.float64) / np.sum(w_l)
        self.w_u = np.asarray(w_u, dtype=np.float64) / np.sum(w_u)
        self.ridge = ridge / self.n  # bradley_terry's ridge on the humans' sum scale
        self.labeled, self.judge, self.unlabeled = labeled, judge, unlabeled
        self.model_l, self.model_u = _Model(labeled, k, False), _Model(unlabeled, k, False)
        item = factorize(labeled.cluster)[1]
        self.clusterings = [(item, 1)]
        if labeled.participant is not None and crossed(item, labeled.participant):
            person = factorize(labeled.participant)[1]
            self.clusterings += [(person, 1), (unit_cells(item, person), -1)]
        self.unlabeled_items = factorize(unlabeled.cluster)[1]

    def fit(self, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """θ at ``lam`` (Newton) and its sandwich covariance."""
        theta = np.zeros(self.k)
        for _ in range(_NEWTON_STEPS):
            p_l, p_u = self._p(theta)
            residual_l = (self.labeled.outcome - lam * self.judge - (1 - lam) * p_l) * self.w_l
            residual_u = lam * (self.unlabeled.outcome - p_u) * self.w_u
            gradient = (
                self.model_l.gradient(residual_l) + self.model_u.gradient(residual_u) - self.ridge * theta
            )
            step = np.linalg.pinv(self._information(theta, lam), hermitian=True) @ gradient
            theta += step
            if np.abs(step).max() < _TOLERANCE:
                break
        bread = np.linalg.pinv(self._information(theta, lam), hermitian=True)
        return theta, bread @ self._meat(theta, lam) @ bread

    def _p(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _sigmoid(self.model_l.predictor(theta)), _sigmoid(self.model_u.predictor(theta))

    def _information(self, theta: np.ndarray, lam: float) -> np.ndarray:
        p_l, p_u = self._p(theta)
        return (
            self.model_l.information((1 - lam) * p_l * (1 - p_l) * self.w_l)
            + self.model_u.information(lam * p_u * (1 - p_u) * self.w_u)
            + self.ridge * np.eye(self.k)
        )

    def _scores(self, theta: np.ndarray) -> tuple[list, np.ndarray]:
        """Per labeled clustering: (Σ_g s_y s_yᵀ, Σ_g s_y s_fᵀ, Σ_g s_f s_fᵀ, clusters, sign);
        and Σ_g u uᵀ of the unlabeled items (with its G/(G − 1))."""
        p_l, p_u = self._p(theta)
        found = []
        for codes, sign in self.clusterings:
            g = int(codes.max()) + 1
            s_y = self._per_cluster(self.model_l, codes, g, (self.labeled.outcome - p_l) * self.w_l)
            s_f = self._per_cluster(self.model_l, codes, g, (self.judge - p_l) * self.w_l)
            factor = g / (g - 1) if g > 1 else 1.0
            found.append((factor * s_y.T @ s_y, factor * s_y.T @ s_f, factor * s_f.T @ s_f, g, sign))
        g_u = int(self.unlabeled_items.max()) + 1
        u = self._per_cluster(
            self.model_u, self.unlabeled_items, g_u, (self.unlabeled.outcome - p_u) * self.w_u
        )
        return found, (g_u / (g_u - 1) if g_u > 1 else 1.0) * u.T @ u

    def _per_cluster(self, model: _Model, codes: np.ndarray, g: int, residual: np.ndarray) -> np.ndarray:
        k, data = self.k, model.data
        return (
            np.bincount(codes * k + data.first, residual, g * k)
            - np.bincount(codes * k + data.second, residual, g * k)
        ).reshape(g, k)

    def _meat(self, theta: np.ndarray, lam: float) -> np.ndarray:
        parts, unlabeled = self._scores(theta)
        labeled = self._labeled_meat(parts, lam)
        return labeled + lam**2 * unlabeled

    def _labeled_meat(self, parts: list, lam: float) -> np.ndarray:
        """V_unit + V_participant − V_cell at ``lam``; where a centred strength's variance
        is not positive, the larger one-way part (by trace), as ``clustered.combined``."""
        each = [(a - lam * (b + b.T) + lam**2 * c, g, sign) for a, b, c, g, sign in parts]
        total = np.sum([sign * m for m, _, sign in each], axis=0)
        if len(each) == 3:
            centred, _ = contrasts(self.k)
            if np.any(np.einsum("ij,jk,ik->i", centred, total, centred) <= 0):
                total = max(each[:2], key=lambda part: float(np.trace(part[0])))[0]
        return total

    def tuned(self) -> float:
        """λ on a grid of [0, 1] (``LAMBDAS``) minimising the trace of the centred strengths'
        covariance, each λ fitted and its sandwich computed: the exact minimiser of the
        variance the intervals then use (as ``stats.ppi`` tunes a mean), so that the PPI
        intervals are never wider, on average over the systems, than λ = 0's. (PPI++'s
        closed form for GLMs, with the information pooled over both sets, is its large-sample
        version: with 50 human comparisons of four systems it gave intervals 16% wider.)"""
        centred, _ = contrasts(self.k)
        traces = [np.trace(centred @ self.fit(lam)[1] @ centred.T) for lam in LAMBDAS]
        return float(LAMBDAS[int(np.argmin(traces))])

    @property
    def df(self) -> float:
        """Items − 1 (two ways: the fewer clusters − 1): where the humans' own fit has none."""
        return float(min(int(codes.max()) + 1 for codes, _ in self.clusterings[:2]) - 1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))
