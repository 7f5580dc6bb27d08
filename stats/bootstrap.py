"""Seeded percentile-bootstrap 95% confidence intervals.

``mean_ci`` resamples answers one by one, as if independent: no report uses it since the
means and shares got cluster-robust intervals (``stats.clustered``); it stays as the
answer-level reference the benches' "before" (``bench/answer_bootstrap.py``) and the
clustered intervals' tests compare against. The same seed gives the same interval. Values
with few distinct levels (points 0-5, Likert ratings, 0/1 shares) are resampled as
multinomial counts over the distinct values, which has exactly the distribution of
resampling the observations one by one and costs nothing per observation. Other values are
resampled directly, in batches; beyond ``MAX_DRAWS`` observations × resamples the normal
approximation is used (said in ``method``).

The agreement figures are bootstrapped over *units* instead (``unit_multiplicities``: a
resample is how often each unit was drawn, each unit with all of its answers), with a cost
rule for large studies (``unit_resamples``, ``unit_groups``) and expanded percentiles for
few units (``resampled_interval``); the figures' own modules turn multiplicities into
figures (``stats.agreement``, ``stats.kappa``, ``stats.reliability``).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from .counting import distinct_counts

RESAMPLES = 2000
CONFIDENCE = 0.95
# Resamples of units (agreement figures: each resample recomputes the figure from the
# resampled units' values), and the cost rule for large studies: at most ``UNIT_WORK``
# numbers (units or entries × resamples) are visited, so a study with more units gets fewer
# resamples, never fewer than ``MIN_UNIT_RESAMPLES`` (its interval is narrow anyway, and
# 200 resamples place a 95% percentile interval's ends to about 0.15 standard errors).
UNIT_RESAMPLES = 1000
MIN_UNIT_RESAMPLES = 200
UNIT_WORK = 40_000_000
# Resamples are drawn this many units × resamples at a time (8 bytes each: 32 MiB).
UNIT_BATCH_CELLS = 1 << 22
# A study with more units than this is bootstrapped over this many random groups of its units
# (``unit_groups``): the figures are functions of sums over units, and the sums of random
# groups are independent draws as the units are, so the groups' bootstrap has the units'
# spread (to a factor (G - 1) / G) at a cost that no longer grows with the study.
MAX_UNIT_DRAWS = 4096
MAX_DISTINCT = 256
MAX_DRAWS = 20_000_000
_BATCH_DRAWS = 2_000_000


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str


def seed_for(*parts: object) -> int:
    """A stable seed from labels (metric, group…): the same figure always gets the same draws."""
    return zlib.crc32("|".join(map(str, parts)).encode())


def mean_ci(
    values, *, seed: int = 0, resamples: int = RESAMPLES, confidence: float = CONFIDENCE
) -> Interval | None:
    """Percentile-bootstrap interval of the mean; None with fewer than two observations."""
    x = np.asarray(values, dtype=np.float64)
    missing = np.isnan(x)
    if missing.any():  # a copy only when there is something to leave out
        x = x[~missing]
    if x.size < 2:
        return None
    distinct, counts = distinct_counts(x)
    if distinct.size <= MAX_DISTINCT:
        return mean_ci_from_counts(distinct, counts, seed=seed, resamples=resamples, confidence=confidence)
    rng = np.random.default_rng(seed)
    if x.size * resamples > MAX_DRAWS:
        half = _normal_quantile(confidence) * x.std(ddof=1) / np.sqrt(x.size)
        return Interval(float(x.mean() - half), float(x.mean() + half), "normal")
    means = _resampled(x.size, resamples, rng, lambda index: x[index].mean(axis=1))
    return _percentile(means, confidence, "bootstrap")


def mean_ci_from_counts(
    distinct: np.ndarray,
    counts: np.ndarray,
    *,
    seed: int = 0,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Interval | None:
    """``mean_ci`` of values given as their sorted distinct values (at most ``MAX_DISTINCT``,
    each with a count above 0) and how often each occurs: the same interval, without the values."""
    size = int(counts.sum())
    if size < 2:
        return None
    if distinct.size == 1:
        return Interval(float(distinct[0]), float(distinct[0]), "bootstrap")
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(size, counts / size, size=resamples)
    means = draws @ distinct / size
    return _percentile(means, confidence, "bootstrap")


def unit_resamples(size: int, resamples: int = UNIT_RESAMPLES) -> int:
    """How many resamples of ``size`` units (or entries) the cost rule allows: ``resamples``
    while ``size × resamples`` stays within ``UNIT_WORK``, fewer beyond, at least
    ``MIN_UNIT_RESAMPLES``."""
    return int(min(resamples, max(MIN_UNIT_RESAMPLES, UNIT_WORK // max(size, 1))))


def unit_groups(units: int, seed: int) -> tuple[np.ndarray, int]:
    """Each unit's group (its own index up to ``MAX_UNIT_DRAWS`` units, else one of
    ``MAX_UNIT_DRAWS`` random groups of nearly equal size, seeded) and the number of groups."""
    if units <= MAX_UNIT_DRAWS:
        return np.arange(units), units
    order = np.random.default_rng([seed, 1]).permutation(units)
    group = np.empty(units, dtype=np.int64)
    group[order] = np.arange(units) % MAX_UNIT_DRAWS
    return group, MAX_UNIT_DRAWS


def group_sums(group: np.ndarray, groups: int, values: np.ndarray) -> np.ndarray:
    """Per group, the sum of its units' rows of ``values`` (units × anything)."""
    from scipy import sparse  # imported on use: see stats/__init__.py

    flat = values.reshape(len(values), -1)
    summing = sparse.csr_matrix(
        (np.ones(len(group)), (group, np.arange(len(group)))), shape=(groups, len(group))
    )
    return np.asarray(summing @ flat).reshape(groups, *values.shape[1:])


def unit_multiplicities(units: int, resamples: int, rng: np.random.Generator):
    """Batches of resamples × units counts: how often each unit is drawn when ``units`` units
    are drawn with replacement (a unit bootstrap), at most ``UNIT_BATCH_CELLS`` counts per
    batch. Drawn as indices and counted, so the draws are those of resampling the units one
    by one."""
    batch = max(1, UNIT_BATCH_CELLS // max(units, 1))
    for start in range(0, resamples, batch):
        rows = min(batch, resamples - start)
        drawn = rng.integers(0, units, (rows, units)) + (np.arange(rows) * units)[:, None]
        yield np.bincount(drawn.ravel(), minlength=rows * units).reshape(rows, units).astype(np.float64)


def resampled_interval(
    values: np.ndarray,
    confidence: float = CONFIDENCE,
    method: str = "unit bootstrap",
    *,
    draws: int | None = None,
):
    """The percentile interval of resampled figures, NaN (undefined resamples) left out; None
    when more than half are undefined (the figure is then too fragile to bound).

    ``draws``: how many independent units each resample drew. The percentiles are then
    *expanded* for small samples (Hesterberg 2015): the tail ``(1 − confidence) / 2`` is
    replaced by ``Φ(√(n / (n − 1)) · t_{(1 − confidence)/2, n − 1})``, which undoes the
    bootstrap's narrowness with few units (its spread is that of a plug-in variance, and
    its tails are normal rather than Student's): 1.6% instead of 2.5% at 20 units, 2.3% at
    100, the plain percentiles beyond a few hundred."""
    defined = values[~np.isnan(values)]
    if defined.size < max(2, values.size // 2):
        return None
    return _percentile(defined, confidence, method, _expanded_tail(draws, confidence))


def _expanded_tail(draws: int | None, confidence: float) -> float | None:
    """The expanded percentile's lower tail for ``draws`` units (None: the plain one)."""
    if draws is None or draws < 3:
        return None
    from scipy.special import ndtr, stdtrit  # imported on use: see stats/__init__.py

    return float(ndtr(np.sqrt(draws / (draws - 1.0)) * stdtrit(draws - 1, (1.0 - confidence) / 2.0)))


def ratio_interval(
    numerators,
    denominators,
    *,
    seed: int = 0,
    resamples: int = UNIT_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Interval | None:
    """Unit bootstrap of ``Σ numerators / Σ denominators`` (one entry per unit: a share of
    pairs where each unit brings its pairs, as percent and within-k agreement): the units are
    drawn with replacement, each with all of its pairs. None with fewer than two units that
    have a denominator."""
    numerator = np.asarray(numerators, dtype=np.float64)
    denominator = np.asarray(denominators, dtype=np.float64)
    kept = denominator > 0
    numerator, denominator = numerator[kept], denominator[kept]
    if numerator.size < 2:
        return None
    rng = np.random.default_rng(seed)
    group, groups = unit_groups(numerator.size, seed)
    per_group = group_sums(group, groups, np.column_stack([numerator, denominator]))
    shares = []
    for weights in unit_multiplicities(groups, unit_resamples(groups, resamples), rng):
        found, pairs = (weights @ per_group).T
        shares.append(found / pairs)
    return resampled_interval(np.concatenate(shares), confidence, draws=groups)


def _resampled(size: int, resamples: int, rng: np.random.Generator, reduce) -> np.ndarray:
    batch = max(1, _BATCH_DRAWS // size)
    out = []
    for start in range(0, resamples, batch):
        rows = min(batch, resamples - start)
        out.append(reduce(rng.integers(0, size, (rows, size))))
    return np.concatenate(out)


def _percentile(values: np.ndarray, confidence: float, method: str, tail: float | None = None) -> Interval:
    tail = ((1.0 - confidence) / 2.0 if tail is None else tail) * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return Interval(float(low), float(high), method)


def _normal_quantile(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2.0))
