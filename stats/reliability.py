"""Reliability of rating scales: ICC(2,k), Cronbach's alpha and within-k-points agreement.

ICC and Cronbach's alpha come from the same two-way analysis of variance of a complete
table (rows = rated targets, columns = raters or statements): with mean squares of rows
``MSR``, columns ``MSC`` and residual ``MSE`` of ``n`` rows and ``k`` columns,

- ICC(2,k), two-way random effects, absolute agreement, mean of k raters (Shrout & Fleiss
  1979): ``(MSR - MSE) / (MSR + (MSC - MSE) / n)``; the single-rater ICC(2,1) is given
  beside it, and the F test of ``MSR / MSE`` on ``(n - 1, (n - 1)(k - 1))`` degrees;
- Cronbach's alpha of k statements answered together: ``1 - MSE / MSR`` (the same as
  ``k / (k - 1) · (1 - Σ var_item / var_total)``), with Feldt's F-based 95% interval.

Within-k-points agreement counts pairs of values given to the same unit, like percent
agreement, but calls a pair agreeing when the two values are at most ``k`` apart.
Undefined cases give ``NaN`` with a reason; nothing here raises on data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bootstrap import (
    CONFIDENCE,
    UNIT_RESAMPLES,
    Interval,
    group_sums,
    ratio_interval,
    resampled_interval,
    unit_groups,
    unit_multiplicities,
    unit_resamples,
)
from .estimate import Estimate

# Within-k agreement builds a values × values band; ordinal scales have a handful of values.
MAX_WITHIN_VALUES = 1000


@dataclass(frozen=True)
class TwoWay:
    """Mean squares of a complete rows × columns table (one value per cell)."""

    rows: int
    columns: int
    ms_rows: float
    ms_columns: float
    ms_error: float

    @classmethod
    def of(cls, table: np.ndarray) -> TwoWay:
        n, k = table.shape
        grand = table.mean()
        ss_rows = k * float(((table.mean(axis=1) - grand) ** 2).sum())
        ss_columns = n * float(((table.mean(axis=0) - grand) ** 2).sum())
        ss_error = float(((table - grand) ** 2).sum()) - ss_rows - ss_columns
        return cls(n, k, ss_rows / (n - 1), ss_columns / (k - 1), max(ss_error, 0.0) / ((n - 1) * (k - 1)))

    @property
    def dof(self) -> tuple[int, int]:
        return self.rows - 1, (self.rows - 1) * (self.columns - 1)

    def details(self) -> dict:
        return {
            "targets": self.rows,
            "raters": self.columns,
            "ms_rows": self.ms_rows,
            "ms_columns": self.ms_columns,
            "ms_error": self.ms_error,
        }


def complete_rows(table) -> tuple[np.ndarray, int]:
    """The rows of a numeric table without a missing cell, and how many were dropped."""
    array = np.asarray(table, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError("the table must be 2-D (rows × columns)")
    keep = ~np.isnan(array).any(axis=1)
    return array[keep], int((~keep).sum())


def _check_shape(table: np.ndarray, dropped: int, what: str) -> Estimate | None:
    n, k = table.shape
    if k < 2:
        return Estimate.undefined(f"fewer than two {what}", n=n, rows_dropped=dropped)
    if n < 2:
        return Estimate.undefined("fewer than two complete rows", n=n, rows_dropped=dropped)
    return None


def icc_2k(table) -> Estimate:
    """ICC(2,k) of a targets × raters table of numbers; rows with a missing cell are left out.

    ``n`` = complete targets; ``details``: ``icc2_1``, ``statistic`` (F), ``dof``,
    ``p_value`` (F test that targets differ), the mean squares, ``rows_dropped``.
    """
    array, dropped = complete_rows(table)
    problem = _check_shape(array, dropped, "raters")
    if problem is not None:
        return problem
    anova = TwoWay.of(array)
    n, k = anova.rows, anova.columns
    details = {**anova.details(), "rows_dropped": dropped, "dof": list(anova.dof)}
    denominator = anova.ms_rows + (anova.ms_columns - anova.ms_error) / n
    if anova.ms_error == 0.0 or denominator <= 0.0:
        return Estimate.undefined("no variation between targets and raters to compare", n=n, **details)
    single = (anova.ms_rows - anova.ms_error) / (
        anova.ms_rows + (k - 1) * anova.ms_error + k * (anova.ms_columns - anova.ms_error) / n
    )
    statistic = anova.ms_rows / anova.ms_error
    details |= {
        "icc2_1": single,
        "statistic": statistic,
        "p_value": _f_sf(statistic, *anova.dof),
    }
    return Estimate((anova.ms_rows - anova.ms_error) / denominator, n=n, details=details)


def icc_2k_interval(
    table, *, seed: int = 0, resamples: int = UNIT_RESAMPLES, confidence: float = CONFIDENCE
) -> Interval | None:
    """Percentile interval of ICC(2,k) from a bootstrap over the targets (the complete rows
    drawn with replacement, each with all of its raters' values; the raters stay the
    same). The raters are the study's own: the interval is conditional on them."""
    array, _ = complete_rows(table)
    n, k = array.shape
    if n < 2 or k < 2:
        return None
    group, groups = unit_groups(n, seed)
    sums = _icc_row_sums(array)
    if groups < n:  # a large table: random groups of its rows (their sums are what ICC reads)
        sums = group_sums(group, groups, sums)
    rng = np.random.default_rng(seed)
    found = [
        _icc_of_sums(weights @ sums, k)
        for weights in unit_multiplicities(groups, unit_resamples(array.size, resamples), rng)
    ]
    return resampled_interval(np.concatenate(found), confidence, draws=groups)


def icc_2k_of_multiplicities(table: np.ndarray, multiplicities: np.ndarray) -> np.ndarray:
    """ICC(2,k) of the complete ``table`` with row ``r`` repeated ``multiplicities[b, r]``
    times, per resample ``b``: ``TwoWay``'s sums of squares as products of the
    multiplicities with per-row sums, no table built. NaN where undefined, as ``icc_2k``."""
    weights = np.asarray(multiplicities, dtype=np.float64)
    value = _icc_of_sums(weights @ _icc_row_sums(table), table.shape[1])
    value[np.count_nonzero(weights, axis=1) < 2] = np.nan
    return value


def _icc_row_sums(table: np.ndarray) -> np.ndarray:
    """Per row what ``TwoWay``'s sums of squares add up: 1, its mean, its mean squared, its
    sum of squares, its values."""
    row_means = table.mean(axis=1)
    return np.column_stack([np.ones(len(table)), row_means, row_means**2, (table**2).sum(axis=1), table])


def _icc_of_sums(sums: np.ndarray, k: int) -> np.ndarray:
    """ICC(2,k) per resample from its weighted row sums (``_icc_row_sums``)."""
    rows, means, mean_squares, squares = sums[:, :4].T
    column_means = sums[:, 4:] / rows[:, None]
    grand = means / rows
    ss_rows = k * (mean_squares - rows * grand**2)
    ss_columns = rows * ((column_means - grand[:, None]) ** 2).sum(axis=1)
    ss_error = np.maximum(squares - rows * k * grand**2 - ss_rows - ss_columns, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ms_rows, ms_columns = ss_rows / (rows - 1), ss_columns / (k - 1)
        ms_error = ss_error / ((rows - 1) * (k - 1))
        denominator = ms_rows + (ms_columns - ms_error) / rows
        value = (ms_rows - ms_error) / denominator
    value[(ms_error == 0) | (denominator <= 0) | (rows < 2)] = np.nan
    return value


def cronbach_alpha(table, confidence: float = 0.95) -> tuple[Estimate, tuple[float, float] | None]:
    """Cronbach's alpha of a respondents × statements table and Feldt's interval.

    Respondents (rows) with a missing answer are left out (``details.rows_dropped``).
    """
    array, dropped = complete_rows(table)
    problem = _check_shape(array, dropped, "statements")
    if problem is not None:
        return problem, None
    anova = TwoWay.of(array)
    details = {"statements": anova.columns, "rows_dropped": dropped, "dof": list(anova.dof)}
    if anova.ms_rows == 0.0:
        return Estimate.undefined("no variation between respondents", n=anova.rows, **details), None
    alpha = 1.0 - anova.ms_error / anova.ms_rows
    tail = (1.0 - confidence) / 2.0
    low = 1.0 - (1.0 - alpha) * _f_ppf(1.0 - tail, *anova.dof)
    high = 1.0 - (1.0 - alpha) * _f_ppf(tail, *anova.dof)
    return Estimate(alpha, n=anova.rows, details=details), (low, high)


def within_points_from_value_counts(value_counts, domain, points: float) -> Estimate:
    """Share of pairs of values of the same unit at most ``points`` apart.

    ``value_counts`` is units × values (dense or sparse), ``domain`` the numeric value of
    each column. ``n`` = pairs; ``points = 0`` is percent agreement.
    """
    if len(domain) > MAX_WITHIN_VALUES:
        return Estimate.undefined(f"more than {MAX_WITHIN_VALUES} distinct values: not a rating scale")
    agreeing, pairs = _within_points_per_unit(value_counts, domain, points)
    total = float(pairs.sum())
    if total == 0:
        return Estimate.undefined("no unit has two or more values")
    return Estimate(float(agreeing.sum()) / total, n=int(total), details={"points": points})


def within_points_interval(
    value_counts, domain, points: float, *, seed: int = 0, resamples: int = UNIT_RESAMPLES
) -> Interval | None:
    """The interval of ``within_points_from_value_counts`` from a bootstrap over units: each
    unit brings all of its pairs (``stats.bootstrap.ratio_interval``)."""
    if len(domain) > MAX_WITHIN_VALUES:
        return None
    agreeing, pairs = _within_points_per_unit(value_counts, domain, points)
    return ratio_interval(agreeing, pairs, seed=seed, resamples=resamples)


def _within_points_per_unit(value_counts, domain, points: float) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, its pairs of values at most ``points`` apart and all its pairs."""
    values = np.asarray(domain, dtype=np.float64)
    band = (np.abs(np.subtract.outer(values, values)) <= points).astype(np.float64)
    from scipy import sparse  # imported on use: see stats/__init__.py

    if sparse.issparse(value_counts):
        counts = sparse.csr_matrix(value_counts, dtype=np.float64)
        per_unit = np.asarray(counts.sum(axis=1)).ravel()
        close = np.asarray(counts.multiply(counts @ band).sum(axis=1)).ravel()
    else:
        counts = np.asarray(value_counts, dtype=np.float64)
        per_unit = counts.sum(axis=1)
        close = (counts * (counts @ band)).sum(axis=1)
    return (close - per_unit) / 2.0, per_unit * (per_unit - 1.0) / 2.0


def _f_sf(statistic: float, dfn: float, dfd: float) -> float:
    """The F distribution's survival function, ``scipy.stats.f.sf`` (which computes it with
    this very ``fdtrc``). From ``scipy.special``, imported on use: ``scipy.stats`` costs
    about 0.6 CPU seconds more to import, which each process that computes a study's
    reports (each Celery worker's pool process) paid when ICC was all it needed."""
    from scipy.special import fdtrc

    return float(fdtrc(dfn, dfd, statistic))


def _f_ppf(q: float, dfn: float, dfd: float) -> float:
    """The F distribution's quantile, ``scipy.stats.f.ppf`` (its ``fdtri``): see ``_f_sf``."""
    from scipy.special import fdtri

    return float(fdtri(dfn, dfd, q))
