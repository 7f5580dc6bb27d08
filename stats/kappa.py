"""Kappa statistics: Cohen's (two raters, optionally weighted) and Fleiss' (many raters per
item, not necessarily the same number). The reports' Cohen's kappa of many pairs of raters
at once is ``SharedUnits``, and ``cohen_kappa`` is its one pair: one computation.

Ratings are any hashable labels; ``None`` or ``NaN`` means "not rated" and such pairs are
left out. Categories are ordered by ``labels`` when given (weighted kappa needs the order),
else sorted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .bootstrap import (
    CONFIDENCE,
    UNIT_RESAMPLES,
    Interval,
    group_sums,
    resampled_interval,
    unit_groups,
    unit_multiplicities,
    unit_resamples,
)
from .estimate import Estimate

WEIGHTS = (None, "linear", "quadratic")
# Pairs of raters whose marginal counts are held at once (× categories numbers each).
PAIR_BLOCK = 1 << 15


def cohen_kappa(
    a: Sequence, b: Sequence, weights: str | None = None, labels: Sequence | None = None
) -> Estimate:
    """Cohen's kappa between two raters over the items both rated (``n`` = those items):
    the one pair of ``SharedUnits``, as the reports compute every pair's."""
    _check_weights(weights)
    if len(a) != len(b):
        raise ValueError("the two raters' sequences must have the same length")
    codes, categories = rating_codes([list(a), list(b)], labels)
    both = (codes[0] >= 0) & (codes[1] >= 0)
    n = int(both.sum())
    if n == 0:
        return Estimate.undefined("the raters share no rated item")
    if len(categories) < 2:
        return Estimate.undefined("fewer than two categories", n=n)
    raters = np.zeros(n, dtype=np.int64)
    shared = SharedUnits.of(raters, raters + 1, codes[0][both], codes[1][both])
    value = float(shared.kappas(len(categories), weights).value[0])
    if np.isnan(value):
        return Estimate.undefined("both raters used one and the same category: no chance disagreement", n=n)
    return Estimate(value, n=n)


def fleiss_kappa(counts) -> Estimate:
    """Fleiss' kappa from an items × categories table of how many raters chose each.

    Items may have different numbers of raters: each item's agreement is over its own
    rater pairs, chance agreement uses the pooled category shares. Items with fewer
    than two ratings are left out (``n`` = items used).
    """
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError("counts are an items × categories table (2-D)")
    raters = table.sum(axis=1)
    table, raters = table[raters >= 2], raters[raters >= 2]
    if len(table) == 0:
        return Estimate.undefined("no item has two or more ratings")
    per_item = ((table * table).sum(axis=1) - raters) / (raters * (raters - 1.0))
    shares = table.sum(axis=0) / raters.sum()
    chance = float((shares * shares).sum())
    if chance >= 1.0:
        return Estimate.undefined("every rating is the same category: no chance disagreement", n=len(table))
    return Estimate((float(per_item.mean()) - chance) / (1.0 - chance), n=len(table))


def fleiss_kappa_interval(
    counts, *, seed: int = 0, resamples: int = UNIT_RESAMPLES, confidence: float = CONFIDENCE
) -> Interval | None:
    """Percentile interval of Fleiss' kappa from a bootstrap over items (each drawn with all
    of its ratings; items with fewer than two ratings do not enter it)."""
    table = np.asarray(counts, dtype=np.float64)
    table = table[table.sum(axis=1) >= 2]
    if len(table) < 2:
        return None
    group, groups = unit_groups(len(table), seed)
    raters = table.sum(axis=1)
    per_item = ((table * table).sum(axis=1) - raters) / (raters * (raters - 1.0))
    sums = group_sums(group, groups, np.column_stack([per_item, np.ones(len(table)), raters, table]))
    rng = np.random.default_rng(seed)
    found = [
        _fleiss_of_sums(weights @ sums)
        for weights in unit_multiplicities(groups, unit_resamples(sums.size, resamples), rng)
    ]
    return resampled_interval(np.concatenate(found), confidence, draws=groups)


def fleiss_kappas_of_multiplicities(counts, multiplicities) -> np.ndarray:
    """Fleiss' kappa with item ``i`` counted ``multiplicities[b, i]`` times, per resample
    ``b`` (items of two ratings or more): the mean item agreement and the pooled shares are
    weighted sums."""
    table = np.asarray(counts, dtype=np.float64)
    weights = np.asarray(multiplicities, dtype=np.float64)
    raters = table.sum(axis=1)
    per_item = ((table * table).sum(axis=1) - raters) / (raters * (raters - 1.0))
    value = _fleiss_of_sums(weights @ np.column_stack([per_item, np.ones(len(table)), raters, table]))
    value[np.count_nonzero(weights, axis=1) < 2] = np.nan
    return value


def _fleiss_of_sums(sums: np.ndarray) -> np.ndarray:
    """Fleiss' kappa per resample from its weighted sums of (item agreement, items, ratings,
    ratings per category)."""
    agreement = sums[:, 0] / sums[:, 1]
    shares = sums[:, 3:] / sums[:, 2:3]
    chance = (shares * shares).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (agreement - chance) / (1.0 - chance)
    value[chance >= 1.0] = np.nan
    return value


def rating_codes(table, labels: Sequence | None = None) -> tuple[np.ndarray, list]:
    """Raters × items labels → integer codes (``-1`` = missing) and the category list
    (``labels`` in their order, else the labels present, sorted)."""
    rows = [list(row) for row in table]
    present = {value for row in rows for value in row if not _missing(value)}
    if labels is None:
        categories = sorted(present)
    else:
        categories = list(labels)
        unknown = present - set(categories)
        if unknown:
            raise ValueError(f"ratings outside the given labels: {sorted(map(str, unknown))}")
    index = {value: code for code, value in enumerate(categories)}
    codes = np.array([[-1 if _missing(v) else index[v] for v in row] for row in rows], dtype=np.int64)
    return codes.reshape(len(rows), -1), categories


@dataclass(frozen=True)
class PairKappas:
    """Cohen's kappa of each pair of raters ``(first[p], second[p])``: ``value`` (NaN when
    undefined) and ``n`` (units both rated)."""

    first: np.ndarray
    second: np.ndarray
    value: np.ndarray
    n: np.ndarray

    def mean(self, reason: str, min_shared: int = 2) -> Estimate:
        """Mean over the pairs sharing ``min_shared`` units (undefined ones counted apart)."""
        enough = self.n >= min_shared
        defined = enough & ~np.isnan(self.value)
        details = {"pairs_undefined": int((enough & ~defined).sum())}
        if not defined.any():
            return Estimate.undefined(reason, **details)
        return Estimate(float(self.value[defined].mean()), n=int(defined.sum()), details=details)

    def averaged(self, min_shared: int = 2) -> np.ndarray:
        """The defined kappas ``mean`` averages (for its bootstrap interval)."""
        return self.value[(self.n >= min_shared) & ~np.isnan(self.value)]

    def estimate(self, index: int) -> Estimate:
        value, n = float(self.value[index]), int(self.n[index])
        if np.isnan(value):
            return Estimate.undefined("no variation in the two raters' shared ratings to compare", n=n)
        return Estimate(value, n=n)


@dataclass(frozen=True)
class SharedUnits:
    """The rows of each pair of raters who share at least ``min_shared`` units, grouped once
    so that several weightings reuse the grouping."""

    first: np.ndarray  # per pair of raters
    second: np.ndarray
    count: np.ndarray
    pair: np.ndarray  # per row: its pair of raters
    first_code: np.ndarray
    second_code: np.ndarray
    unit: np.ndarray  # per row: the unit (0 … units-1) the two ratings are of

    @classmethod
    def of(
        cls, first_rater, second_rater, first_code, second_code, min_shared: int = 1, unit=None
    ) -> SharedUnits:
        """``unit``: per row, the unit both ratings are of (any labels), which the unit
        bootstrap of ``resampled`` draws; without it every row is its own unit."""
        first_rater = np.asarray(first_rater, dtype=np.int64)
        second_rater = np.asarray(second_rater, dtype=np.int64)
        first_code, second_code = np.asarray(first_code), np.asarray(second_code)
        unit = np.arange(len(first_rater)) if unit is None else np.asarray(unit)
        if len(first_rater) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty, empty, empty, empty, empty)
        low = min(int(first_rater.min()), int(second_rater.min()))
        span = max(int(first_rater.max()), int(second_rater.max())) - low + 1
        keys, pair = np.unique((first_rater - low) * span + (second_rater - low), return_inverse=True)
        pair = pair.ravel()
        count = np.bincount(pair, minlength=len(keys))
        if min_shared > 1:
            enough = count >= min_shared
            renumber = np.cumsum(enough) - 1
            rows = enough[pair]
            keys, count = keys[enough], count[enough]
            pair, first_code, second_code = renumber[pair[rows]], first_code[rows], second_code[rows]
            unit = unit[rows]
        order = np.argsort(pair, kind="stable")  # rows grouped by pair: later sorts are linear
        pair, first_code, second_code = pair[order], first_code[order], second_code[order]
        unit = np.unique(unit[order], return_inverse=True)[1].ravel()
        return cls(keys // span + low, keys % span + low, count, pair, first_code, second_code, unit)

    def kappas(self, categories: int, weights: str | None = None, positions=None) -> PairKappas:
        """Cohen's kappa of each pair (value codes in ``0 … categories-1``, in scale order for
        weighted kappa). Weighted kappa counts the distance between codes, or between their
        ``positions`` on the scale when given (a rating scale whose middle points nobody
        used is still measured in points)."""
        _check_weights(weights)
        if len(self.count) == 0:
            empty = np.zeros(0)
            return PairKappas(empty, empty, empty, empty.astype(np.int64))
        w = _weight_matrix(categories, weights)
        if positions is not None and weights is not None:
            distance = np.abs(np.subtract.outer(positions, positions)).astype(np.float64)
            w = distance if weights == "linear" else distance**2
        count = self.count.astype(np.float64)
        observed = np.bincount(self.pair, w[self.first_code, self.second_code], minlength=len(count)) / count
        chance = _chance_disagreement(self.pair, self.first_code, self.second_code, len(count), w) / count**2
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(chance > 0, 1.0 - observed / chance, np.nan)
        if categories < 2:
            value[:] = np.nan
        return PairKappas(self.first, self.second, value, self.count)


@dataclass(frozen=True)
class ResampledKappas:
    """Each pair's kappa in each resample of the units (``value``: resamples × pairs, NaN
    where undefined or where the pair shares fewer than ``min_shared`` units in the resample)."""

    value: np.ndarray
    draws: int  # units each resample drew (the expanded percentiles' n)

    def mean_interval(self, confidence: float = CONFIDENCE) -> Interval | None:
        """The interval of the mean over the pairs with a kappa (as ``PairKappas.mean``)."""
        defined = ~np.isnan(self.value)
        with np.errstate(invalid="ignore"):
            means = np.where(defined, self.value, 0.0).sum(axis=1) / defined.sum(axis=1)
        return resampled_interval(means, confidence, draws=self.draws)

    def pair_interval(self, index: int, confidence: float = CONFIDENCE) -> Interval | None:
        return resampled_interval(self.value[:, index], confidence, draws=self.draws)


def resampled_kappas(
    shared: SharedUnits,
    categories: int,
    weights: str | None = None,
    positions=None,
    *,
    min_shared: int = 2,
    seed: int = 0,
    resamples: int = UNIT_RESAMPLES,
) -> ResampledKappas:
    """Every pair's kappa in each of ``resamples`` bootstrap resamples of the units: a unit
    is drawn with all of its ratings, so the pairs that share it (every pair of its raters)
    move together, as they do from one study to the next. Kappa of a resample: the rows
    weighted by how often their unit was drawn (``kappas_of_multiplicities``)."""
    units = int(shared.unit.max()) + 1 if len(shared.unit) else 0
    if units < 2:
        return ResampledKappas(np.full((0, len(shared.count)), np.nan), units)
    group, groups = unit_groups(units, seed)
    grouped = replace(shared, unit=group[shared.unit])  # a study of many units: random groups
    rng = np.random.default_rng(seed)
    count = unit_resamples(len(shared.pair) * max(categories, 1), resamples)
    batches = [
        kappas_of_multiplicities(grouped, categories, w, weights, positions, min_shared=min_shared)
        for w in unit_multiplicities(groups, count, rng)
    ]
    return ResampledKappas(np.concatenate(batches), groups)


def kappas_of_multiplicities(
    shared: SharedUnits,
    categories: int,
    multiplicities: np.ndarray,
    weights: str | None = None,
    positions=None,
    *,
    min_shared: int = 2,
) -> np.ndarray:
    """Each pair's kappa (resamples × pairs) when unit ``u`` counts ``multiplicities[b, u]``
    times in resample ``b``: a unit drawn twice adds its ratings twice, as if rated twice.
    Each pair's rows, agreement and marginal counts are summed per unit once (sparse units ×
    pairs matrices), so a batch of resamples is four sparse products, O(rows + pairs ×
    categories) per resample."""
    _check_weights(weights)
    w = _weight_matrix(categories, weights)
    if positions is not None and weights is not None:
        distance = np.abs(np.subtract.outer(positions, positions)).astype(np.float64)
        w = distance if weights == "linear" else distance**2
    from scipy import sparse  # imported on use: see stats/__init__.py

    pairs, units = len(shared.count), int(shared.unit.max()) + 1 if len(shared.unit) else 0
    ones = np.ones(len(shared.pair))

    def per_unit(columns: np.ndarray, size: int, values: np.ndarray = ones):
        """Units × ``size`` sums of ``values`` of the rows: a resample's sums are its
        multiplicities times this matrix."""
        return sparse.csc_matrix((values, (shared.unit, columns)), shape=(units, size))

    count_of = per_unit(shared.pair, pairs)
    observed_of = per_unit(shared.pair, pairs, w[shared.first_code, shared.second_code])
    first_of = per_unit(shared.pair * categories + shared.first_code, pairs * categories)
    second_of = per_unit(shared.pair * categories + shared.second_code, pairs * categories)
    out = []
    step = max(1, (1 << 22) // max(pairs * categories, units, 1))
    for begin in range(0, len(multiplicities), step):
        rows = np.asarray(multiplicities[begin : begin + step], dtype=np.float64)
        count = (count_of.T @ rows.T).T
        observed = (observed_of.T @ rows.T).T
        first = (first_of.T @ rows.T).T.reshape(len(rows), pairs, categories)
        second = (second_of.T @ rows.T).T.reshape(len(rows), pairs, categories)
        chance = np.einsum("bpc,cd,bpd->bp", first, w, second)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = 1.0 - (observed / count) / (chance / count**2)
        value[(chance <= 0) | (count < min_shared) | (categories < 2)] = np.nan
        out.append(value)
    return np.concatenate(out) if out else np.zeros((0, pairs))


def _chance_disagreement(
    pair: np.ndarray, first_code: np.ndarray, second_code: np.ndarray, pairs: int, w: np.ndarray
) -> np.ndarray:
    """Per pair of raters, ``Σ_c,d rows_c · w_cd · columns_d`` of their marginal counts, a
    block of pairs at a time (memory bounded by ``PAIR_BLOCK`` × categories)."""
    categories = len(w)
    order = np.argsort(pair, kind="stable")
    starts = np.arange(0, pairs + PAIR_BLOCK, PAIR_BLOCK).clip(max=pairs)
    bounds = np.searchsorted(pair[order], starts)
    out = np.empty(pairs)
    for block in range(len(starts) - 1):
        begin, end = starts[block], starts[block + 1]
        if begin == end:
            continue
        chosen = order[bounds[block] : bounds[block + 1]]
        local = (pair[chosen] - begin) * categories
        size = (end - begin) * categories
        rows = np.bincount(local + first_code[chosen], minlength=size).reshape(-1, categories)
        columns = np.bincount(local + second_code[chosen], minlength=size).reshape(-1, categories)
        out[begin:end] = np.einsum("pc,pc->p", rows @ w, columns)
    return out


def _weight_matrix(size: int, weights: str | None) -> np.ndarray:
    index = np.arange(size)
    distance = np.abs(np.subtract.outer(index, index)).astype(np.float64)
    if weights is None:
        return (distance > 0).astype(np.float64)
    return distance if weights == "linear" else distance**2


def _check_weights(weights) -> None:
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, not {weights!r}")


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)
