"""Krippendorff's alpha and pairwise percent agreement, through value counts.

Everything here goes one way: reliability data (coders × units, ``NaN`` = missing) →
value counts per unit (units × values) → the coincidence matrix ``o`` (values × values),
built as a matrix product ``(C / (m - 1))ᵀ C`` over units with at least two values. The
reliability data is read in blocks of units, so memory stays at one block plus the
values × values matrices, whatever the number of units; no units × values² tensor is
ever built. Alpha is ``1 - D_o / D_e`` with Krippendorff's own difference functions for
the nominal, ordinal (ranks through the marginal counts), interval and ratio levels.

Undefined cases (no unit with two values, no variation in the pairable values, fewer than
two distinct values) give ``NaN`` with a reason; they never raise.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .estimate import Estimate
from .groups import factorize

LEVELS = ("nominal", "ordinal", "interval", "ratio")
# Cells of reliability data handled at once: bounds the temporary arrays (~32 MiB each).
BLOCK_CELLS = 1 << 22
_SMALL_INTEGER_RANGE = 1 << 20
# Domains up to this size are counted by comparing with each value (fast for ratings);
# they are guessed from this many sampled cells and verified block by block.
EQUALITY_VALUES = 16
# Up to this many units × values cells, pair counts are made dense with bincount.
DENSE_COUNTS = 1 << 22
SAMPLE_CELLS = 1 << 16


def check_level(level: str) -> str:
    """A level of measurement Krippendorff's alpha knows (the kinds' observations use it too)."""
    if level not in LEVELS:
        raise ValueError(f"level_of_measurement must be one of {LEVELS}, not {level!r}")
    return level


# --- public functions ---------------------------------------------------------------------


def krippendorff_alpha(
    reliability_data, level_of_measurement: str = "interval", *, value_domain: Sequence | None = None
) -> Estimate:
    """Krippendorff's alpha of a coders × units table (``NaN`` or ``None`` = missing).

    ``value_domain`` orders the values for the ordinal level (required for ordinal text
    labels) and may list values nobody used. ``n`` is the number of pairable values (in
    units with at least two); ``details`` has ``units`` (pairable units) and ``values``.
    """
    level = check_level(level_of_measurement)
    stats, domain = _ReliabilityTable.from_data(reliability_data, value_domain, level).stats()
    return _alpha(stats, domain, level)


def alpha_from_value_counts(
    value_counts, level_of_measurement: str = "interval", *, value_domain=None
) -> Estimate:
    """Alpha from units × values counts (dense array or scipy sparse matrix).

    ``value_domain`` names the columns (default ``0 … V-1``); for the ordinal level it
    must be in order.
    """
    level = check_level(level_of_measurement)
    counts = value_counts if sparse.issparse(value_counts) else np.asarray(value_counts)
    if counts.ndim != 2:
        raise ValueError("value counts are a units × values table (2-D)")
    domain = np.arange(counts.shape[1]) if value_domain is None else np.asarray(value_domain)
    if len(domain) != counts.shape[1]:
        raise ValueError("value_domain must name every column of the value counts")
    if level in ("interval", "ratio"):
        domain = _as_numbers(domain)
    return _alpha(_CountStats.accumulate([counts], counts.shape[1]), domain, level)


def alpha_from_pairs(units: Sequence, values: Sequence, level_of_measurement: str) -> Estimate:
    """Alpha from one (unit, value) pair per rating: the shape reports collect.

    Which coder gave a value does not enter alpha, only how the values fall into units,
    so ratings need no coder × unit table (which would be mostly empty for crowd data).
    Numbers are ordered numerically; text values are only allowed at the nominal level.
    """
    level = check_level(level_of_measurement)
    counts, domain = value_counts_from_pairs(units, values)
    if level != "nominal" and domain.dtype.kind not in "biuf":
        raise ValueError(f"{level} values must be numbers")
    return alpha_from_value_counts(counts, level, value_domain=domain)


def percent_agreement(reliability_data) -> Estimate:
    """Share of agreeing pairs among all pairs of values given to the same unit.

    Every pair of ratings of a unit counts once (a unit with three ratings gives three
    pairs), which is how pairwise agreement is usually quoted for crowd annotations.
    """
    stats, _ = _ReliabilityTable.from_data(reliability_data, None, "nominal").stats()
    return _percent(stats)


def percent_agreement_from_pairs(units: Sequence, values: Sequence) -> Estimate:
    counts, _ = value_counts_from_pairs(units, values)
    return percent_agreement_from_value_counts(counts)


def percent_agreement_from_value_counts(value_counts) -> Estimate:
    counts = value_counts if sparse.issparse(value_counts) else np.asarray(value_counts)
    return _percent(_CountStats.accumulate([counts], counts.shape[1]))


def value_counts_from_pairs(
    units: Sequence, values: Sequence
) -> tuple[np.ndarray | sparse.csr_matrix, np.ndarray]:
    """Units × values counts (dense when small, else sparse) and the sorted value domain,
    from (unit, value) pairs."""
    units = np.asarray(units)
    values = np.asarray(values)
    if units.shape != values.shape or units.ndim != 1:
        raise ValueError("units and values must be two sequences of the same length")
    if values.dtype.kind == "f":
        keep = ~np.isnan(values)
        units, values = units[keep], values[keep]
    unit_codes = factorize(units)[1]
    domain, value_codes = factorize(values)
    n_units = int(unit_codes.max()) + 1 if unit_codes.size else 0
    if n_units * len(domain) <= DENSE_COUNTS:
        dense = np.bincount(unit_codes * len(domain) + value_codes, minlength=n_units * len(domain))
        return dense.reshape(n_units, len(domain)), domain
    counts = sparse.csr_matrix(
        (np.ones(unit_codes.size, dtype=np.float64), (unit_codes, value_codes)),
        shape=(n_units, len(domain)),
    )
    counts.sum_duplicates()
    return counts, domain


def difference_matrix(level: str, domain: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """Krippendorff's squared differences between every two values of the domain.

    ``marginals`` (n_v, the pairable values per domain value) define the ordinal
    difference: the number of values between two ranks, halving the two end points.
    """
    size = len(domain)
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "ordinal":
        index = np.arange(size)
        low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
        cumulative = np.concatenate([[0.0], np.cumsum(marginals, dtype=np.float64)])
        between = cumulative[high + 1] - cumulative[low] - (marginals[low] + marginals[high]) / 2.0
        return between**2
    values = domain.astype(np.float64)
    difference = np.subtract.outer(values, values)
    if level == "interval":
        return difference**2
    total = np.add.outer(values, values)
    ratio = np.divide(difference, total, out=np.zeros_like(difference), where=total != 0)
    return ratio**2


# --- the coincidence route ----------------------------------------------------------------


@dataclass
class _CountStats:
    """What alpha and percent agreement need from the value counts, summed block by block."""

    coincidences: np.ndarray
    pairable: int
    units: int
    agreeing_pairs: float
    pairs: float

    @classmethod
    def accumulate(cls, blocks: Iterable, size: int) -> _CountStats:
        o = np.zeros((size, size))
        self_pairs = np.zeros(size)
        pairable = units = 0
        agreeing = pairs = 0.0
        for counts in blocks:
            per_unit = np.asarray(counts.sum(axis=1)).ravel()
            keep = per_unit >= 2
            if not keep.any():
                continue
            block = counts[keep]
            m = per_unit[keep].astype(np.float64)
            weights = 1.0 / (m - 1.0)
            if sparse.issparse(block):
                weighted = sparse.csr_matrix(block.multiply(weights[:, None]))
                o += (weighted.T @ block).toarray()
                self_pairs += np.asarray(weighted.sum(axis=0)).ravel()
                agreeing += float(block.multiply(block).sum() - block.sum())
            else:
                block = block.astype(np.float64)
                weighted = block * weights[:, None]
                o += weighted.T @ block
                self_pairs += weighted.sum(axis=0)
                agreeing += float((block * (block - 1.0)).sum())
            pairable += int(m.sum())
            units += int(keep.sum())
            pairs += float((m * (m - 1.0)).sum())
        o[np.diag_indices(size)] -= self_pairs
        return cls(o, pairable, units, agreeing, pairs)


def _alpha(stats: _CountStats, domain: np.ndarray, level: str) -> Estimate:
    details = {"units": stats.units, "values": len(domain), "level": level}
    if len(domain) < 2:
        return Estimate.undefined("fewer than two distinct values: nothing to disagree on", **details)
    if stats.units == 0:
        return Estimate.undefined("no unit has two or more values", **details)
    o = stats.coincidences
    marginals = o.sum(axis=0)
    n = marginals.sum()
    d = difference_matrix(level, domain, marginals)
    observed = float((o * d).sum())
    expected = float((np.outer(marginals, marginals) * d).sum() / (n - 1.0))
    if expected == 0.0:
        return Estimate.undefined(
            "all pairable values are the same: no expected disagreement", n=stats.pairable, **details
        )
    return Estimate(1.0 - observed / expected, n=stats.pairable, details=details)


def _percent(stats: _CountStats) -> Estimate:
    details = {"units": stats.units, "pairs": int(stats.pairs / 2)}
    if stats.pairs == 0:
        return Estimate.undefined("no unit has two or more values", **details)
    return Estimate(stats.agreeing_pairs / stats.pairs, n=int(stats.pairs / 2), details=details)


# --- reading reliability data in blocks ---------------------------------------------------


class _IncompleteDomain(Exception):
    """A value outside the domain guessed from a sample turned up: discover it in full."""


@dataclass
class _ReliabilityTable:
    """Reliability data (numbers, or text coded as indices with missing = ``len(domain)``)
    turned into units × values counts one block of units at a time.

    Small numeric domains (``EQUALITY_VALUES`` values or fewer: ratings, labels) are
    counted with one comparison per value, and guessed from a sample of cells; a block
    whose counts miss some of its values reveals a wrong guess, and the whole table is then
    read again with the domain discovered in full. Larger domains are coded through a
    sorted search and counted with ``bincount``.
    """

    data: np.ndarray
    domain: np.ndarray
    numeric: bool
    guessed: bool = False

    @property
    def size(self) -> int:
        return len(self.domain)

    @classmethod
    def from_data(cls, reliability_data, value_domain, level: str) -> _ReliabilityTable:
        data = np.asarray(reliability_data)
        if data.ndim != 2:
            raise ValueError("reliability data is a coders × units table (2-D)")
        if data.dtype.kind == "O":
            data = _object_table(data)
        if data.dtype.kind in "biuf":
            if value_domain is not None:
                return cls(data, _given_numeric_domain(data, value_domain), numeric=True)
            guess = _sampled_distinct(data)
            if len(guess) <= EQUALITY_VALUES:
                return cls(data, guess, numeric=True, guessed=True)
            return cls(data, _distinct_numbers(data), numeric=True)
        if data.dtype.kind not in "US":
            raise ValueError(f"cannot read reliability data of dtype {data.dtype}")
        if level in ("interval", "ratio"):
            raise ValueError(f"{level} alpha needs numbers, not text labels")
        if level == "ordinal" and value_domain is None:
            raise ValueError("ordinal alpha on text labels needs an ordered value_domain")
        codes, domain = _text_codes(data, value_domain)
        return cls(codes, domain, numeric=False)

    def stats(self) -> tuple[_CountStats, np.ndarray]:
        """Accumulated count statistics and the value domain they refer to."""
        try:
            return _CountStats.accumulate(self.count_blocks(), self.size), self.domain
        except _IncompleteDomain:
            full = _ReliabilityTable(self.data, _distinct_numbers(self.data), numeric=True)
            return _CountStats.accumulate(full.count_blocks(), full.size), full.domain

    def count_blocks(self) -> Iterator[np.ndarray]:
        coders, units = self.data.shape
        width = max(1, BLOCK_CELLS // max(coders, 1))
        for start in range(0, units, width):
            block = self.data[:, start : start + width]
            if self.numeric and self.size <= EQUALITY_VALUES:
                yield self._compared(block)
            else:
                yield self._binned(self._codes(block) if self.numeric else block)

    def _compared(self, block: np.ndarray) -> np.ndarray:
        counts = np.empty((block.shape[1], self.size), dtype=np.int64)
        for index, value in enumerate(self.domain):
            counts[:, index] = np.count_nonzero(block == value, axis=0)
        if self.guessed:
            missing = np.count_nonzero(np.isnan(block)) if block.dtype.kind == "f" else 0
            if counts.sum() != block.size - missing:
                raise _IncompleteDomain
        return counts

    def _binned(self, codes: np.ndarray) -> np.ndarray:
        size = self.size
        n_units = codes.shape[1]
        keys = codes + (np.arange(n_units, dtype=np.intp) * (size + 1))[None, :]
        counts = np.bincount(keys.ravel(), minlength=n_units * (size + 1))
        return counts.reshape(n_units, size + 1)[:, :size]

    def _codes(self, block: np.ndarray) -> np.ndarray:
        # NaN sorts after every number, so searchsorted maps it to len(domain): "missing".
        return np.searchsorted(self.domain, block).astype(np.intp, copy=False)


def _given_numeric_domain(data: np.ndarray, value_domain) -> np.ndarray:
    domain = _as_numbers(np.asarray(value_domain))
    if not np.isin(_distinct_numbers(data), domain).all():
        raise ValueError("the reliability data holds values outside value_domain")
    if not (np.diff(domain) > 0).all():
        raise ValueError("a numeric value_domain must be in increasing order")
    return domain


def _sampled_distinct(data: np.ndarray) -> np.ndarray:
    """Distinct values among a fixed sample of cells: a guess, checked while counting."""
    if data.size > SAMPLE_CELLS:
        rng = np.random.default_rng(0)
        cells = data[
            rng.integers(0, data.shape[0], SAMPLE_CELLS), rng.integers(0, data.shape[1], SAMPLE_CELLS)
        ]
    else:
        cells = data.ravel()
    values = cells[~np.isnan(cells)] if cells.dtype.kind == "f" else cells
    return np.unique(values)


def _distinct_numbers(data: np.ndarray) -> np.ndarray:
    """Sorted distinct non-missing values, block by block (integers counted, not sorted)."""
    coders, units = data.shape
    width = max(1, BLOCK_CELLS // max(coders, 1))
    found = []
    for start in range(0, units, width):
        block = data[:, start : start + width]
        values = block[~np.isnan(block)] if block.dtype.kind == "f" else block.ravel()
        if values.size:
            found.append(_distinct_block(values))
    if not found:
        return np.zeros(0)
    return np.unique(np.concatenate(found))


def _distinct_block(values: np.ndarray) -> np.ndarray:
    low, high = values.min(), values.max()
    if values.dtype.kind == "b" or high - low >= _SMALL_INTEGER_RANGE:
        return np.unique(values)
    as_int = values.astype(np.int64)
    if values.dtype.kind == "f" and not np.array_equal(as_int, values):
        return np.unique(values)
    offset = int(as_int.min())
    seen = np.flatnonzero(np.bincount(as_int - offset)) + offset
    return seen.astype(values.dtype)


def _object_table(data: np.ndarray) -> np.ndarray:
    """Object arrays (lists with ``None``): numbers become floats, anything else text."""
    flat = data.ravel()
    missing = np.array([_is_missing(v) for v in flat], dtype=bool)
    present = flat[~missing]
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in present):
        numbers_ = np.full(flat.shape, np.nan)
        numbers_[~missing] = present.astype(np.float64)
        return numbers_.reshape(data.shape)
    text = np.array(["nan" if m else str(v) for v, m in zip(flat, missing, strict=True)])
    return text.reshape(data.shape)


def _is_missing(value) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    return isinstance(value, str) and value == "nan"


def _text_codes(data: np.ndarray, value_domain) -> tuple[np.ndarray, np.ndarray]:
    missing = data == "nan"
    present = np.unique(data[~missing])
    domain = present if value_domain is None else np.asarray(value_domain).astype(str)
    if value_domain is not None and not np.isin(present, domain).all():
        raise ValueError("the reliability data holds values outside value_domain")
    order = np.argsort(domain, kind="stable")
    position = np.searchsorted(domain, data, sorter=order)
    codes = order[np.minimum(position, len(domain) - 1)] if len(domain) else np.zeros_like(position)
    codes = np.where(missing, len(domain), codes).astype(np.intp)
    return codes, domain


def _as_numbers(domain: np.ndarray) -> np.ndarray:
    if domain.dtype.kind not in "biuf":
        try:
            return domain.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("interval and ratio alpha need numeric values") from None
    return domain
