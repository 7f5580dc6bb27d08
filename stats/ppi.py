"""Prediction-powered estimates: a few human answers and many judge answers, combined
without inheriting the judge's bias (PPI, Angelopoulos et al., Science 2023; PPI++ with
power tuning, Angelopoulos, Duchi & Zrnic 2023).

The humans answer a random subset of the items (the *labeled* items), the judge (a model
participant) answers every item. For a mean over items,

    θ̂(λ) = λ · f̄_unlabeled + (ȳ − λ · f̄)_labeled

where y are the human answers, f the judge's answer to the same item (paired with each
human answer) and f̄_unlabeled the judge's mean over the items no human answered. For any
fixed λ the estimate is unbiased for the humans' mean, whatever the judge's bias (the
second term, the *rectifier*, measures and removes it); λ = 0 is the humans-only mean,
λ = 1 the original PPI. PPI++ picks λ to minimise the estimated variance

    V(λ) = V_yy − 2λ V_yf + λ² (V_ff + V_uu),  λ̂ = clip(V_yf / (V_ff + V_uu), 0, 1),

so the estimate is never less precise than the humans-only one by its own yardstick: V(0)
is the humans-only variance, and λ̂ minimises V over [0, 1].

**Clustered like the human-only figures** (``stats.clustered``): the V terms are
cluster-robust (co)variances of the means from sums per cluster of the answers' deviations,
one way by unit (item or case) with G/(G − 1), or two ways by unit and participant where
participants cross units (V_unit + V_participant − V_cell, the larger one-way part where
that is not positive), exactly ``clustered_mean``'s rule, so that λ = 0 gives
``clustered_mean``'s interval to the last digit. The interval is Student's t
with the humans-only figure's degrees of freedom (G − 1, or ``_satterthwaite``'s two-way
df): the humans are the few, the judge's many units add next to none, and with the same df
as λ = 0 the PPI interval is never wider than the humans-only one (the two-way df of
y − λf can be smaller than y's with a handful of participants, and would undo that). (Satterthwaite's
df for the sum of both parts would be larger, and covered 0.91-0.92 with 25 human items,
where λ̂, tuned on the same answers, makes the variance estimate a little optimistic.)

A *contrast* of group means (a difference between two systems: +1, −1) is estimated with
one λ tuned for the contrast itself (ppi_py's ``coord`` mode for a 1-d contrast): each
answer's deviation from its group's mean, times the group's coefficient over its group
size, is summed per cluster, so that answers of both systems on one case are one cluster.

Inclusion probabilities π (a design stratified by system) enter as weights: a labeled
answer weighs 1/π, an unlabeled one 1/(1 − π) (Hájek means within each group), which
removes the over-representation of the strata humans sampled more.

``small_sample=False`` gives ppi_py's own figures (population variances, no G/(G − 1),
the normal quantile, and for a plain mean ppi_py's tuning of λ, which pools the judge's
variance over both sets and scales it by (1 + n/N)): ``ppi_py.ppi_mean_ci`` equals it to
1e-6 in the tests, tuned or at a given λ. The reports' mode tunes λ as the exact minimiser
of the variance the interval then uses (it differs from ppi_py's by O(1/n), and has a
clustered form).

The *effective number of human answers* is n · V(0) / V(λ̂): how many human answers the
humans-only interval would need to be as narrow (the judge's worth in human answers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .bootstrap import CONFIDENCE, Interval
from .clustered import _satterthwaite, t_quantile, unit_cells
from .counting import count_distinct
from .groups import factorize

PPI = "prediction-powered (PPI++, power-tuned), cluster-robust t"
PPI_LARGE_SAMPLE = "prediction-powered (PPI++, power-tuned), normal"
HUMANS_ONLY = "humans only, cluster-robust t"
# Below this λ the judge adds (almost) nothing: the estimate is the humans' own.
NO_GAIN_LAMBDA = 0.05


@dataclass(frozen=True)
class Side:
    """One set of answers: values, their unit (the cluster: item or case), group (a
    system; 0 where there is one), weight (1/π), and, for human answers, the participant
    (None: one-way by unit)."""

    values: np.ndarray
    units: np.ndarray
    groups: np.ndarray
    weights: np.ndarray
    participants: np.ndarray | None = None

    @classmethod
    def of(cls, values, units, groups=None, weights=None, participants=None) -> Side:
        x = np.asarray(values, dtype=np.float64)
        size = x.size
        return cls(
            values=x,
            units=np.asarray(units),
            groups=np.zeros(size, dtype=np.intp) if groups is None else np.asarray(groups, dtype=np.intp),
            weights=np.ones(size) if weights is None else np.asarray(weights, dtype=np.float64),
            participants=None if participants is None else np.asarray(participants),
        )


@dataclass(frozen=True)
class PPIFit:
    """A prediction-powered figure beside the humans-only one.

    ``estimate``, ``se``, ``df``: the PPI++ figure; ``humans``, ``humans_se``,
    ``humans_df``: λ = 0 (the humans' answers alone); ``lam``: the tuning weight;
    ``rectifier`` (with ``rectifier_se``): the humans' figure minus the judge's on the
    labeled items, the judge's bias there; ``n``: human answers; ``effective_n``: the human
    answers the humans-only figure would need for the PPI figure's variance."""

    estimate: float
    se: float
    df: float
    humans: float
    humans_se: float
    humans_df: float
    lam: float
    rectifier: float
    rectifier_se: float
    n: int
    n_judge: int
    effective_n: float
    small_sample: bool = True
    # the variance terms at these sample sizes (V_yy, V_yf, V_ff of the labeled answers,
    # V_uu of the judge's alone): what ``humans_needed`` scales to other designs
    terms: tuple[float, float, float, float] = (math.nan, math.nan, math.nan, math.nan)
    n_unlabeled: int = 0

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        return _interval(
            self.estimate, self.se, self.df, confidence, PPI if self.small_sample else PPI_LARGE_SAMPLE
        )

    def humans_interval(self, confidence: float = CONFIDENCE) -> Interval:
        return _interval(self.humans, self.humans_se, self.humans_df, confidence, HUMANS_ONLY)

    @property
    def no_gain(self) -> bool:
        """The judge adds (almost) nothing: λ near 0."""
        return self.lam < NO_GAIN_LAMBDA


def _interval(estimate: float, se: float, df: float, confidence: float, method: str) -> Interval:
    if math.isinf(df):
        from scipy import stats  # imported on use: see stats/__init__.py

        half = float(stats.norm.ppf(0.5 + confidence / 2)) * se
    else:
        half = float(t_quantile(confidence, df)) * se
    return Interval(estimate - half, estimate + half, method)


def ppi_mean(
    y,
    f,
    f_unlabeled,
    *,
    units=None,
    units_unlabeled=None,
    participants=None,
    weights=None,
    weights_unlabeled=None,
    lam: float | None = None,
    small_sample: bool = True,
) -> PPIFit | None:
    """The PPI++ mean of the human answers ``y`` (``f``: the judge's answer to each one's
    item) with the judge's answers ``f_unlabeled`` on the items no human answered.
    ``units``: each answer's cluster (default: each answer its own); ``participants``: the
    humans, for a two-way clustering where they cross units. None without two labeled units
    (or one unlabeled answer)."""
    labeled = Side.of(y, _units(units, y), weights=weights, participants=participants)
    judge = Side.of(f, labeled.units, weights=weights)
    unlabeled = Side.of(f_unlabeled, _units(units_unlabeled, f_unlabeled), weights=weights_unlabeled)
    return ppi_contrast(labeled, judge, unlabeled, np.ones(1), lam=lam, small_sample=small_sample)


def _units(units, values) -> np.ndarray:
    return np.arange(np.asarray(values).size) if units is None else np.asarray(units)


def ppi_contrast(
    labeled: Side,
    judge: Side,
    unlabeled: Side,
    contrast: np.ndarray,
    *,
    lam: float | None = None,
    small_sample: bool = True,
) -> PPIFit | None:
    """Σ_k contrast[k] · (group k's PPI++ mean): a mean (one group, [1]) or a difference
    between systems ([1, −1], groups 0 and 1). ``judge``: the judge's answer paired with each
    labeled answer (same units, groups and weights as ``labeled``). None when a group has no
    labeled or no unlabeled answer, or there are fewer than two labeled units."""
    c = np.asarray(contrast, dtype=np.float64)
    size = c.size
    if labeled.values.size == 0 or unlabeled.values.size == 0:
        return None
    w_l, w_u = _group_weights(labeled, size), _group_weights(unlabeled, size)
    if w_l is None or w_u is None:
        return None
    mean_y = _group_means(labeled, w_l, size)
    mean_f = _group_means(judge, w_l, size)
    mean_u = _group_means(unlabeled, w_u, size)
    # each answer's share of the contrast: its group's coefficient times its weight over the group's
    scale_l = (c / w_l)[labeled.groups] * labeled.weights
    scale_u = (c / w_u)[unlabeled.groups] * unlabeled.weights
    dev_y = scale_l * (labeled.values - mean_y[labeled.groups])
    dev_f = scale_l * (judge.values - mean_f[labeled.groups])
    dev_u = scale_u * (unlabeled.values - mean_u[unlabeled.groups])
    parts = _labeled_parts(dev_y, dev_f, labeled, small_sample)
    if parts is None:
        return None
    unit_u = factorize(unlabeled.units)[1]
    g_u = int(unit_u.max()) + 1
    sums_u = np.bincount(unit_u, weights=dev_u, minlength=g_u)
    if g_u < 2 and small_sample:
        return None
    v_uu = _correction(g_u, small_sample) * float(sums_u @ sums_u)
    matrix = _combined(parts)
    v_yy, v_yf, v_ff = matrix[0, 0], matrix[0, 1], matrix[1, 1]
    if lam is None and not small_sample and _plain_mean(labeled, unlabeled, c):
        lam = _ppi_py_lambda(labeled.values, judge.values, unlabeled.values)
    if lam is None:
        denominator = v_ff + v_uu
        lam = float(np.clip(v_yf / denominator, 0.0, 1.0)) if denominator > 0 else 0.0
    v_labeled = v_yy - 2 * lam * v_yf + lam**2 * v_ff
    v_labeled_0 = v_yy
    df_0 = _labeled_df(parts, 0.0, small_sample)
    v_unlabeled = lam**2 * v_uu
    variance = max(v_labeled, 0.0) + v_unlabeled
    df = df_0  # the humans-only figure's: the humans are the few (and so never wider than it)
    humans = float(c @ mean_y)
    judged = float(c @ mean_f)
    estimate = lam * float(c @ mean_u) + humans - lam * judged
    v_rectifier = max(v_yy - 2 * v_yf + v_ff, 0.0)
    n = int(labeled.values.size)
    effective = n * v_labeled_0 / variance if variance > 0 else math.nan
    return PPIFit(
        estimate=estimate,
        se=math.sqrt(variance),
        df=df,
        humans=humans,
        humans_se=math.sqrt(max(v_labeled_0, 0.0)),
        humans_df=df_0,
        lam=lam,
        rectifier=humans - judged,
        rectifier_se=math.sqrt(v_rectifier),
        terms=(float(v_yy), float(v_yf), float(v_ff), float(v_uu)),
        n_unlabeled=int(unlabeled.values.size),
        n=n,
        n_judge=int(unlabeled.values.size + count_distinct(labeled.units)),
        effective_n=float(effective),
        small_sample=small_sample,
    )


def _plain_mean(labeled: Side, unlabeled: Side, contrast: np.ndarray) -> bool:
    """One group, equal weights: the case ppi_py's ``ppi_mean_ci`` computes."""
    return (
        contrast.size == 1
        and bool(np.all(labeled.weights == labeled.weights[0]))
        and bool(np.all(unlabeled.weights == unlabeled.weights[0]))
    )


def _ppi_py_lambda(y: np.ndarray, f: np.ndarray, f_unlabeled: np.ndarray) -> float:
    """ppi_py's tuning of a mean (``_calc_lam_glm`` with an identity Hessian): the
    covariance of y and f over (1 + n/N) times the judge's variance pooled over both sets,
    clipped to [0, 1]. The large-sample mode's alone (see the module docstring)."""
    n, big_n = y.size, f_unlabeled.size
    covariance = float(np.mean((y - y.mean()) * (f - f.mean())))
    pooled = float(np.var(np.concatenate([f, f_unlabeled]), ddof=1))
    if pooled <= 0:
        return 0.0
    return float(np.clip(covariance / ((1 + n / big_n) * pooled), 0.0, 1.0))


def _group_weights(side: Side, size: int) -> np.ndarray | None:
    """Each group's total weight; None when a group has none."""
    totals = np.bincount(side.groups, weights=side.weights, minlength=size)
    return None if np.any(totals <= 0) else totals


def _group_means(side: Side, totals: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(side.groups, weights=side.weights * side.values, minlength=size) / totals


def _correction(clusters: int, small_sample: bool) -> float:
    return clusters / (clusters - 1) if small_sample and clusters > 1 else 1.0


def _labeled_parts(
    dev_y: np.ndarray, dev_f: np.ndarray, labeled: Side, small_sample: bool
) -> list[tuple[np.ndarray, int, int]] | None:
    """The labeled answers' 2 × 2 (y, f) cluster-robust covariances, one per clustering:
    (matrix, clusters, sign): by unit, and where participants cross units by participant
    and by (unit, participant) cell, as ``clustered_mean``. None with fewer than two units."""
    unit = factorize(labeled.units)[1]
    clusterings = [unit]
    if labeled.participants is not None:
        person = factorize(labeled.participants)[1]
        cell = unit_cells(unit, person)
        if int(person.max()) + 1 >= 2 and int(cell.max()) + 1 > int(person.max()) + 1:  # crossed
            clusterings += [person, cell]
    if int(unit.max()) + 1 < 2:
        return None
    found = []
    for k, codes in enumerate(clusterings):
        size = int(codes.max()) + 1
        sums = np.stack(
            [
                np.bincount(codes, weights=dev_y, minlength=size),
                np.bincount(codes, weights=dev_f, minlength=size),
            ]
        )
        found.append((_correction(size, small_sample) * (sums @ sums.T), size, -1 if k == 2 else 1))
    return found


def _combined(parts: list[tuple[np.ndarray, int, int]]) -> np.ndarray:
    """V_unit + V_participant − V_cell; where its y-variance is not positive, the larger
    one-way part (by trace), as ``stats.clustered.combined``."""
    matrix = np.sum([sign * part for part, _, sign in parts], axis=0)
    if len(parts) == 3 and matrix[0, 0] <= 0:
        matrix = max(parts[:2], key=lambda part: float(np.trace(part[0])))[0]
    return matrix


def _labeled_df(parts: list[tuple[np.ndarray, int, int]], lam: float, small_sample: bool) -> float:
    """The labeled part's degrees of freedom at ``lam``: G − 1 one way, Satterthwaite's two
    ways (``stats.clustered._satterthwaite``, on the variance of y − λf)."""
    if not small_sample:
        return math.inf
    if len(parts) == 1:
        return float(parts[0][1] - 1)
    direction = np.array([1.0, -lam])
    variances = [(float(direction @ part @ direction), size) for part, size, _ in parts]
    total = variances[0][0] + variances[1][0] - variances[2][0]
    if total <= 0:
        return float(max(variances[:2])[1] - 1)
    return float(_satterthwaite(total, variances))


def clustered_contrast(
    side: Side, contrast: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float, Interval] | None:
    """Σ_k contrast[k] · (group k's mean) of one set of answers alone, with the same
    cluster-robust t interval (the judge-only figure beside the PPI one: its answers on
    every item, with no human). None where a group has none or there are fewer than two
    units."""
    c = np.asarray(contrast, dtype=np.float64)
    totals = _group_weights(side, c.size) if side.values.size else None
    if totals is None:
        return None
    means = _group_means(side, totals, c.size)
    deviation = (c / totals)[side.groups] * side.weights * (side.values - means[side.groups])
    parts = _labeled_parts(deviation, np.zeros_like(deviation), side, True)
    if parts is None:
        return None
    variance = max(float(_combined(parts)[0, 0]), 0.0)
    estimate = float(c @ means)
    method = "judge only, cluster-robust t"
    return estimate, _interval(
        estimate, math.sqrt(variance), _labeled_df(parts, 0.0, True), confidence, method
    )


@dataclass(frozen=True)
class HumansNeeded:
    """The human answers a design needs beside ``judge`` judge answers: with the judge
    (``hybrid``, PPI++) and alone (``humans_only``), the tuning weight λ and the standard
    error reached; None where no number up to ``MAX_HUMANS`` reaches the target."""

    judge: int
    hybrid: int | None
    humans_only: int | None
    lam: float
    se: float
    correlation: float


MAX_HUMANS = 10_000_000
MIN_HUMANS = 2  # the rectifier needs two human answers at least (two units in the reports)


def humans_needed(pilot: PPIFit, judge: int, target_se: float) -> HumansNeeded:
    """The hybrid planning question: with ``judge`` judge answers (on items no human
    answers), how many human answers n bring the PPI++ standard error to ``target_se``?

    The pilot's variance terms, times its sample sizes, are per-answer variances that keep
    its clustering (answers per item, participants) as design effects: a = n₀V_yy,
    b = n₀V_yf, c = n₀V_ff and c_u = N₀V_uu. A design (n, N) then has
    V(λ) = (a − 2λb + λ²c)/n + λ²c_u/N, tuned as the reports tune it
    (λ = b/(c + c_u·n/N), clipped to [0, 1]); V decreases in n, so the least n is found by
    bisection. Assumes the study answers alike per item as the pilot, and the normal
    quantile (the reports' t has the humans' units − 1 degrees of freedom)."""
    a, b, c, c_u = (
        value * size for value, size in zip(pilot.terms, (pilot.n,) * 3 + (pilot.n_unlabeled,), strict=True)
    )
    if not c_u > 0:  # the pilot's judge had no answers alone: take its spread on the humans' items
        c_u = c

    def variance(n: int, with_judge: bool = True) -> tuple[float, float]:
        if not with_judge or c <= 0:
            return a / n, 0.0
        lam = float(np.clip(b / (c + c_u * n / judge), 0.0, 1.0))
        # a residual variance estimated at or below 0 (a near-perfect judge, or a two-way
        # estimate with few participants) counts as 0: the judge's own spread is then the rest
        return max(a - 2 * lam * b + lam**2 * c, 0.0) / n + lam**2 * c_u / judge, lam

    def least(with_judge: bool) -> int | None:
        if variance(MAX_HUMANS, with_judge)[0] > target_se**2:
            return None
        low, high = MIN_HUMANS, MAX_HUMANS
        while low < high:
            middle = (low + high) // 2
            if variance(middle, with_judge)[0] <= target_se**2:
                high = middle
            else:
                low = middle + 1
        return low

    hybrid = least(True)
    found_variance, lam = variance(hybrid or MAX_HUMANS)
    correlation = min(1.0, b / math.sqrt(a * c)) if a > 0 and c > 0 else math.nan
    return HumansNeeded(judge, hybrid, least(False), lam, math.sqrt(found_variance), correlation)


def target_se(
    *, width: float | None = None, difference: float | None = None, power: float = 0.8, alpha: float = 0.05
) -> float:
    """The standard error a target asks for: a (1 − alpha) interval of ``width``, or power
    ``power`` to detect ``difference`` with a two-sided test at ``alpha`` (normal)."""
    from scipy import stats  # imported on use: see stats/__init__.py

    z = float(stats.norm.ppf(1 - alpha / 2))
    if width is not None:
        return width / (2 * z)
    assert difference is not None
    return abs(difference) / (z + float(stats.norm.ppf(power)))
