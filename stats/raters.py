"""Who agrees with whom: pairs of raters, their Cohen's kappa, and the majority of a unit.

Works on one row per rating, ``(unit, rater, value code)``, the shape reports collect,
without a raters × units table (mostly empty for crowd data): every pair of ratings that
two different raters gave the same unit is listed once, and Cohen's kappa of each pair of
raters is computed from those pairs at once (``O(pairs × categories)``). The results are
the same as ``stats.kappa.cohen_kappa`` pair by pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .estimate import Estimate
from .groups import factorize
from .kappa import _check_weights, _weight_matrix

# Pairs of raters whose marginal counts are held at once (× categories numbers each).
PAIR_BLOCK = 1 << 15
# A majority needs a count per unit and value; beyond this many values it means little.
MAX_MAJORITY_VALUES = 64


def rating_pairs(units: np.ndarray, raters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)`` of ratings of the same unit by different raters, the rater of
    ``i`` before the rater of ``j`` (each pair once)."""
    unit_codes = factorize(np.asarray(units))[1]
    order = np.argsort(unit_codes, kind="stable")
    sorted_units = unit_codes[order]
    firsts, seconds = [], []
    offset = 1
    while offset < len(order):
        same = np.flatnonzero(sorted_units[offset:] == sorted_units[:-offset])
        if same.size == 0:
            break
        firsts.append(order[same])
        seconds.append(order[same + offset])
        offset += 1
    if not firsts:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    rater = np.asarray(raters)
    keep = rater[first] != rater[second]
    first, second = first[keep], second[keep]
    swap = rater[first] > rater[second]
    first[swap], second[swap] = second[swap], first[swap].copy()
    return first, second


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


def pair_kappas(
    first_rater: np.ndarray,
    second_rater: np.ndarray,
    first_code: np.ndarray,
    second_code: np.ndarray,
    categories: int,
    weights: str | None = None,
    positions: np.ndarray | None = None,
) -> PairKappas:
    """Cohen's kappa per pair of raters, from one row per shared unit (value codes in
    ``0 … categories-1``, in scale order for weighted kappa). Weighted kappa counts the
    distance between codes, or between their ``positions`` on the scale when given (a
    rating scale whose middle points nobody used is still measured in points)."""
    shared = SharedUnits.of(first_rater, second_rater, first_code, second_code)
    return shared.kappas(categories, weights, positions)


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

    @classmethod
    def of(cls, first_rater, second_rater, first_code, second_code, min_shared: int = 1) -> SharedUnits:
        first_rater = np.asarray(first_rater, dtype=np.int64)
        second_rater = np.asarray(second_rater, dtype=np.int64)
        first_code, second_code = np.asarray(first_code), np.asarray(second_code)
        if len(first_rater) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty, empty, empty, empty)
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
        order = np.argsort(pair, kind="stable")  # rows grouped by pair: later sorts are linear
        pair, first_code, second_code = pair[order], first_code[order], second_code[order]
        return cls(keys // span + low, keys % span + low, count, pair, first_code, second_code)

    def kappas(self, categories: int, weights: str | None = None, positions=None) -> PairKappas:
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


def majority_codes(
    unit_codes: np.ndarray, value_codes: np.ndarray, units: int, categories: int
) -> np.ndarray:
    """Per unit, the value code most of its ratings have (``-1``: none, or a tie)."""
    counts = np.bincount(unit_codes * categories + value_codes, minlength=units * categories)
    return _mode(counts.reshape(units, categories))


def majority_of_others(
    unit_codes: np.ndarray, value_codes: np.ndarray, units: int, categories: int
) -> np.ndarray:
    """Per rating, the majority of the *other* ratings of its unit (``-1``: none, or a tie):
    the leave-one-out reference a human is compared with."""
    counts = np.bincount(unit_codes * categories + value_codes, minlength=units * categories)
    counts = counts.reshape(units, categories)[unit_codes].copy()
    counts[np.arange(len(value_codes)), value_codes] -= 1
    return _mode(counts)


def _mode(counts: np.ndarray) -> np.ndarray:
    if counts.shape[1] == 0:
        return np.full(len(counts), -1, dtype=np.int64)
    best = counts.argmax(axis=1)
    top = counts[np.arange(len(counts)), best]
    ties = (counts == top[:, None]).sum(axis=1) > 1
    return np.where((top > 0) & ~ties, best, -1).astype(np.int64)


# --- calibrating a machine rater on the humans --------------------------------------------

# How far below the humans' own agreement a rater may stay and still count as calibrated
# (the site's setting ``RATER_CALIBRATION_MARGIN`` overrides it).
DEFAULT_CALIBRATION_MARGIN = 0.1
CALIBRATED, NOT_CALIBRATED, UNKNOWN, CEILING = "yes", "not calibrated", "unknown", "ceiling"


def unit_means(unit_codes: np.ndarray, values: np.ndarray, units: int) -> np.ndarray:
    """Per unit, the mean of its values (NaN for a unit without any)."""
    totals = np.bincount(unit_codes, weights=np.asarray(values, dtype=np.float64), minlength=units)
    counts = np.bincount(unit_codes, minlength=units)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def means_of_others(unit_codes: np.ndarray, values: np.ndarray, units: int) -> np.ndarray:
    """Per value, the mean of the *other* values of its unit (NaN when it is alone): the
    leave-one-out reference a human's rating is compared with."""
    values = np.asarray(values, dtype=np.float64)
    totals = np.bincount(unit_codes, weights=values, minlength=units)[unit_codes] - values
    others = np.bincount(unit_codes, minlength=units)[unit_codes] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(others > 0, totals / np.maximum(others, 1), np.nan)


def mean_absolute_error(values: np.ndarray, reference: np.ndarray) -> Estimate:
    """Mean of ``|value - reference|`` over the values that have a reference (not NaN);
    ``n`` = those values."""
    values = np.asarray(values, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    keep = ~np.isnan(reference) & ~np.isnan(values)
    if not keep.any():
        return Estimate.undefined("no rating with a human rating of the same unit to compare it with")
    return Estimate(float(np.abs(values[keep] - reference[keep]).mean()), n=int(keep.sum()))


def calibration_verdict(agreement: float | None, ceiling: float | None, margin: float) -> str:
    """``not calibrated`` when a rater's agreement with the humans is below the humans'
    agreement among themselves (the ceiling) by more than ``margin``; ``yes`` otherwise;
    ``unknown`` when either figure is undefined (nothing to judge on)."""
    if agreement is None or ceiling is None or np.isnan(agreement) or np.isnan(ceiling):
        return UNKNOWN
    return NOT_CALIBRATED if ceiling - agreement > margin else CALIBRATED
