"""Krippendorff's alpha and pairwise percent agreement, through value counts.

Everything here goes one way: reliability data (coders × units, ``NaN`` = missing) →
value counts per unit, read in blocks of units → the *pairable values*: one (unit, value,
count) entry per value a unit with at least two values received, sorted by unit. Alpha is
``1 - D_o / D_e`` with Krippendorff's difference functions, and every level is computed
from these entries without the values × values coincidence matrix, so the number of
distinct values does not matter (continuous ratings included):

- nominal: ``D_o`` from ``m_u² - Σ n_uv²`` per unit, ``D_e`` from ``n² - Σ n_v²``;
- interval: the closed form, squared deviations from each unit's mean (``D_o``) and from
  the mean of all pairable values (``D_e``), O(entries); from a coders × units table with
  more than ``EQUALITY_VALUES`` values, the units' moments are read off the cells, O(cells);
- ordinal: Krippendorff's ordinal difference of two values is the squared difference of
  their *midpoints* ``t_v = Σ_{g<v} n_g + n_v / 2`` (cumulative marginals), so it is the
  interval closed form on ``t``: one sort of the values and a prefix sum, O(V log V + entries);
- ratio: ``((a - b) / (a + b))² = tanh²((log a - log b) / 2)`` for positive values, a
  smooth function of the difference of logarithms, whose pair sums are a spectral
  integral taken to rounding error (``_sech_pair_sums``), O(entries × nodes); small groups
  of values, and values below zero (meaningless on a ratio scale), are summed over their
  pairs directly (O(V²) time for the latter, bounded memory).

A coders × units table of a small numeric domain (``EQUALITY_VALUES`` values or fewer:
ratings, labels) takes a shorter road: its cells are counted per unit by comparing cache-
sized tiles with every value, and alpha is read off the values × values coincidences, one
small matrix product per block of units (``_Coincidences``), with no entries at all.

Memory: the entries (24 bytes each: at most one per non-missing cell, at most units ×
values), O(V) per-value arrays, and temporaries bounded by ``BLOCK_CELLS`` cells (about
32 MiB each) whatever the shape; no units × values² array is ever built, and a values²
one only for a small domain (16 × 16 at most).

Undefined cases (no unit with two values, no variation in the pairable values, fewer than
two distinct values) give ``NaN`` with a reason; they never raise.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

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
from .groups import factorize

LEVELS = ("nominal", "ordinal", "interval", "ratio")
# Cells of reliability data handled at once: bounds the temporary arrays (~32 MiB each).
BLOCK_CELLS = 1 << 22
# Cells compared at once when counting a small domain: small enough to stay in the CPU
# cache while each value is compared, so the table is read from memory once. Blocks of
# units are this wide, so a tile is one coder's row of a block (512 KiB of float64) unless
# the table has fewer units, and then as many rows as fit.
TILE_CELLS = 1 << 16
_SMALL_INTEGER_RANGE = 1 << 20
# Domains up to this size are counted by comparing with each value (fast for ratings);
# they are guessed from this many sampled cells and verified block by block.
EQUALITY_VALUES = 16
# Up to this many units × values cells, pair counts are made dense with bincount.
DENSE_COUNTS = 1 << 22
SAMPLE_CELLS = 1 << 16
# Ratio level: groups of values (a unit's, or all distinct values) up to this size are
# summed over their pairs; larger ones with the spectral form.
RATIO_DIRECT_VALUES = 256
PAIR_BLOCK = 1 << 20
# Spectral form of the ratio sums (see ``_sech_pair_sums``): the period margin and the
# highest frequency make the discretisation error below 1e-16 of the squared total.
_ALIAS_MARGIN = 40.0
_HIGHEST_FREQUENCY = 13.0


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
    Memory beyond the table: for a small numeric domain (``V`` values) about ``33 V + 9``
    bytes per unit of one block of ``TILE_CELLS`` units (11 MiB at 5 values, 35 MiB at 16),
    whatever the number of coders and units; else as the module docstring says.
    """
    level = check_level(level_of_measurement)
    table = _ReliabilityTable.from_data(reliability_data, value_domain, level)
    if table.compared:
        try:
            return _Coincidences.of_blocks(table.count_blocks(), table.domain).alpha(level)
        except _IncompleteDomain:
            table = table.discovered()
        if table.compared:
            return _Coincidences.of_blocks(table.count_blocks(), table.domain).alpha(level)
    if level == "interval" and table.numeric:
        return table.interval_alpha()
    pairable, domain = table.pairable()
    return _alpha(pairable, domain, level)


def alpha_from_value_counts(
    value_counts, level_of_measurement: str = "interval", *, value_domain=None
) -> Estimate:
    """Alpha from units × values counts (dense array or scipy sparse matrix).

    ``value_domain`` names the columns (default ``0 … V-1``); for the ordinal level it
    must be in order.
    """
    level = check_level(level_of_measurement)
    counts, domain = _counts_and_domain(value_counts, value_domain, level)
    return _alpha(_Pairable.gather([counts]), domain, level)


def alpha_and_percent_from_value_counts(
    value_counts, level_of_measurement: str = "interval", *, value_domain=None
) -> tuple[Estimate, Estimate]:
    """``alpha_from_value_counts`` and ``percent_agreement_from_value_counts`` of the same
    counts, which gather the pairable values once for both (a report asks for both)."""
    level = check_level(level_of_measurement)
    counts, domain = _counts_and_domain(value_counts, value_domain, level)
    pairable = _Pairable.gather([counts])
    return _alpha(pairable, domain, level), _percent(pairable)


def _counts_and_domain(value_counts, value_domain, level: str):
    from scipy import sparse  # imported on use: see stats/__init__.py

    counts = value_counts if sparse.issparse(value_counts) else np.asarray(value_counts)
    if counts.ndim != 2:
        raise ValueError("value counts are a units × values table (2-D)")
    domain = np.arange(counts.shape[1]) if value_domain is None else np.asarray(value_domain)
    if len(domain) != counts.shape[1]:
        raise ValueError("value_domain must name every column of the value counts")
    if level in ("interval", "ratio"):
        domain = _as_numbers(domain)
    return counts, domain


def alpha_from_pairs(
    units: Sequence | np.ndarray, values: Sequence | np.ndarray, level_of_measurement: str
) -> Estimate:
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
    pairable, _ = _ReliabilityTable.from_data(reliability_data, None, "nominal").pairable()
    return _percent(pairable)


def percent_agreement_from_pairs(units: Sequence | np.ndarray, values: Sequence | np.ndarray) -> Estimate:
    counts, _ = value_counts_from_pairs(units, values)
    return percent_agreement_from_value_counts(counts)


def percent_agreement_from_value_counts(value_counts) -> Estimate:
    from scipy import sparse  # imported on use: see stats/__init__.py

    counts = value_counts if sparse.issparse(value_counts) else np.asarray(value_counts)
    return _percent(_Pairable.gather([counts]))


def value_counts_from_pairs(
    units: Sequence | np.ndarray, values: Sequence | np.ndarray
) -> tuple[np.ndarray | sparse.csr_matrix, np.ndarray]:
    """Units × values counts (dense when small, else sparse) and the sorted value domain,
    from (unit, value) pairs."""
    unit_array, value_array = np.asarray(units), np.asarray(values)
    if unit_array.shape != value_array.shape or unit_array.ndim != 1:
        raise ValueError("units and values must be two sequences of the same length")
    if value_array.dtype.kind == "f":
        missing = np.isnan(value_array)
        if missing.any():  # copies only when there is something to leave out
            unit_array, value_array = unit_array[~missing], value_array[~missing]
    unit_codes = factorize(unit_array)[1]
    domain, value_codes = factorize(value_array)
    n_units = int(unit_codes.max()) + 1 if unit_codes.size else 0
    if n_units * len(domain) <= DENSE_COUNTS:
        dense = np.bincount(unit_codes * len(domain) + value_codes, minlength=n_units * len(domain))
        return dense.reshape(n_units, len(domain)), domain
    from scipy import sparse  # imported on use: see stats/__init__.py

    counts = sparse.csr_matrix(
        (np.ones(unit_codes.size, dtype=np.float64), (unit_codes, value_codes)),
        shape=(n_units, len(domain)),
    )
    counts.sum_duplicates()
    return counts, domain


# --- intervals: a bootstrap over units -----------------------------------------------------


def alpha_interval(
    value_counts,
    level_of_measurement: str = "interval",
    *,
    value_domain=None,
    clusters=None,
    seed: int = 0,
    resamples: int = UNIT_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Interval | None:
    """Percentile interval of alpha from a bootstrap over units (units × values counts).

    A resample draws the pairable units (those with two values or more: the others do not
    enter alpha) with replacement, each with all of its values, and recomputes alpha, the
    expected disagreement included (Zapf et al. 2016 recommend this bootstrap for alpha).
    Units are the independent draws; the values within one unit may depend on each other
    in any way. ``clusters`` (one label per row of the counts) draws groups of units instead,
    each with all of its units, when units are not independent of each other (a machine
    rater's pairs with the humans of one item are units of alpha, the item is the draw).
    Resamples where alpha is undefined (one distinct unit, one value) are left out; None with
    fewer than two draws or when most resamples are undefined. ``resamples`` shrink for
    large studies by ``stats.bootstrap.unit_resamples``.
    """
    level = check_level(level_of_measurement)
    counts, domain = _counts_and_domain(value_counts, value_domain, level)
    pairable = _Pairable.gather([counts])
    if clusters is None:
        draw = np.arange(pairable.units)
    else:
        pairable_rows = np.asarray(counts.sum(axis=1)).ravel() >= 2
        draw = factorize(np.asarray(clusters)[pairable_rows])[1]
    draws = int(draw.max()) + 1 if draw.size else 0
    if draws < 2:
        return None
    group, groups = unit_groups(draws, seed)
    resampler = _UnitResampler.of(pairable, domain, level, group[draw], groups)
    rng = np.random.default_rng(seed)
    count = unit_resamples(resampler.cost, resamples)
    alphas = [resampler.alphas(w) for w in unit_multiplicities(groups, count, rng)]
    return resampled_interval(np.concatenate(alphas), confidence, draws=groups)


def percent_interval(
    value_counts, *, seed: int = 0, resamples: int = UNIT_RESAMPLES, confidence: float = CONFIDENCE
) -> Interval | None:
    """Percent agreement's interval from the same bootstrap over units: each unit brings its
    agreeing pairs and its pairs (``stats.bootstrap.ratio_interval``)."""
    from scipy import sparse  # imported on use: see stats/__init__.py

    counts = value_counts if sparse.issparse(value_counts) else np.asarray(value_counts)
    pairable = _Pairable.gather([counts])
    per_unit = pairable.per_unit(pairable.count)
    agreeing = pairable.per_unit(pairable.count * (pairable.count - 1.0))
    return ratio_interval(
        agreeing, per_unit * (per_unit - 1.0), seed=seed, resamples=resamples, confidence=confidence
    )


def alphas_of_multiplicities(
    value_counts, level_of_measurement: str, multiplicities, *, value_domain=None
) -> np.ndarray:
    """Alpha of each resample given as how often each unit (row of ``value_counts``) is in
    it (resamples × units): the computation ``alpha_interval`` bootstraps, open to checking
    against any implementation run on the resampled data."""
    level = check_level(level_of_measurement)
    counts, domain = _counts_and_domain(value_counts, value_domain, level)
    weights = np.asarray(multiplicities, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[1] != counts.shape[0]:
        raise ValueError("multiplicities are resamples × units, one column per row of the value counts")
    per_unit = np.asarray(counts.sum(axis=1)).ravel()
    pairable = _Pairable.gather([counts])
    resampler = _UnitResampler.of(pairable, domain, level, np.arange(pairable.units), pairable.units)
    return resampler.alphas(weights[:, per_unit >= 2])


@dataclass
class _UnitResampler:
    """Alpha of resamples of the pairable units, each resample given by how often each
    *group* of units was drawn (a group is one unit, or the units of one cluster or of one
    random group of a large study: ``stats.bootstrap.unit_groups``).

    A unit drawn ``w`` times adds ``w`` times its within-unit disagreement and ``w`` times its
    values to the marginals, so every resample is a few products of the multiplicities with
    per-group sums computed once:

    - small domains (``EQUALITY_VALUES`` values or fewer), every level: the groups' value
      counts and observed disagreements; a resample's marginals are one matrix product,
      O(groups × values). At the ordinal level the differences are the squared differences
      of the resample's midpoints ``t``, and a unit's observed part, ``2 (m_u Σ_v n_uv t_v² -
      (Σ_v n_uv t_v)²) / (m_u - 1)``, is a linear and a quadratic form in ``t``: per group the
      sums of ``2 m_u n_u / (m_u - 1)`` and of ``2 n_u n_uᵀ / (m_u - 1)``, O(groups × values²);
    - interval level, more values: each group's disagreement and moments (count, sum, sum of
      squares), O(groups) per resample;
    - otherwise (nominal, ordinal or ratio with many distinct values): the resample's
      pairable values are rebuilt and passed to the level's disagreement, O(entries).
    """

    pairable: _Pairable
    domain: np.ndarray
    level: str
    group: np.ndarray  # per pairable unit
    groups: int

    @classmethod
    def of(cls, pairable: _Pairable, domain: np.ndarray, level: str, group: np.ndarray, groups: int):
        return cls(pairable, domain, level, group, groups)

    @property
    def small(self) -> bool:
        return len(self.domain) <= EQUALITY_VALUES

    @property
    def cost(self) -> int:
        """Numbers visited per resample (the cost rule's size)."""
        if self.small:
            return self.groups * max(1, len(self.domain)) ** (2 if self.level == "ordinal" else 1)
        if self.level == "interval":
            return self.groups
        return max(self.pairable.units, len(self.pairable.unit))

    def alphas(self, weights: np.ndarray) -> np.ndarray:
        if self.small:
            observed, expected = self._small_domain_disagreements(weights)
        elif self.level == "interval":
            observed, expected = self._moment_disagreements(weights)
        else:
            observed, expected = self._rebuilt_disagreements(weights[:, self.group])
        with np.errstate(divide="ignore", invalid="ignore"):
            alphas = np.where(expected > 0, 1.0 - observed / np.where(expected > 0, expected, 1.0), np.nan)
        alphas[np.count_nonzero(weights, axis=1) < 2] = np.nan  # one draw: alpha says nothing
        return alphas

    @functools.cached_property
    def _small_domain_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Per group: value counts, and the observed disagreement (the ordinal level: the
        linear and the quadratic coefficients in the midpoints, flattened)."""
        size, units = len(self.domain), self.pairable.units
        counts = np.zeros((units, size))
        counts[self.pairable.unit, self.pairable.code] = self.pairable.count
        per_unit = counts.sum(axis=1)
        scale = 2.0 / (per_unit - 1.0)
        grouped = group_sums(self.group, self.groups, counts)
        if self.level != "ordinal":
            differences = _value_differences(self.domain, np.ones(size), self.level)
            observed = ((counts @ differences) * counts).sum(axis=1) / (per_unit - 1.0)
            return grouped, group_sums(self.group, self.groups, observed), None
        linear = group_sums(self.group, self.groups, (scale * per_unit)[:, None] * counts)
        quadratic = np.zeros((self.groups, size * size))
        step = max(1, BLOCK_CELLS // (size * size))
        for start in range(0, units, step):
            block = counts[start : start + step]
            outer = (block[:, :, None] * block[:, None, :]).reshape(len(block), -1)
            outer *= scale[start : start + step, None]
            quadratic += group_sums(self.group[start : start + step], self.groups, outer)
        return grouped, linear, quadratic

    def _small_domain_disagreements(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts, observed_part, quadratic = self._small_domain_sums
        size = len(self.domain)
        marginals = weights @ counts
        total = marginals.sum(axis=1)
        if quadratic is None:
            differences = _value_differences(self.domain, np.ones(size), self.level)
            expected = np.einsum("bv,vk,bk->b", marginals, differences, marginals) / (total - 1.0)
            return weights @ observed_part, expected
        midpoints = np.cumsum(marginals, axis=1) - marginals / 2.0
        square = ((weights @ observed_part) * midpoints**2).sum(axis=1)
        form = np.einsum("bvk,bv,bk->b", (weights @ quadratic).reshape(-1, size, size), midpoints, midpoints)
        spread = total * (marginals * midpoints**2).sum(axis=1) - (marginals * midpoints).sum(axis=1) ** 2
        return square - form, 2.0 * spread / (total - 1.0)

    def _moment_disagreements(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        moments = _UnitMoments.of_entries(self.pairable, np.asarray(self.domain, dtype=np.float64))
        count, mean, spread = moments.count, moments.mean, moments.spread
        per_unit = np.column_stack(
            [2.0 * count / (count - 1.0) * spread, count, count * mean, spread + count * mean**2]
        )
        observed, n, total, squares = (weights @ group_sums(self.group, self.groups, per_unit)).T
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = 2.0 * n * (squares - total**2 / n) / (n - 1.0)
        return observed, np.maximum(expected, 0.0)

    def _rebuilt_disagreements(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pairable = self.pairable
        entries = np.bincount(pairable.unit, minlength=pairable.units)
        starts = np.cumsum(entries) - entries
        observed, expected = np.zeros(len(weights)), np.zeros(len(weights))
        for b, row in enumerate(weights.astype(np.int64)):
            drawn = np.repeat(np.arange(pairable.units), row)
            lengths = entries[drawn]
            index = np.repeat(starts[drawn] - np.cumsum(lengths) + lengths, lengths) + np.arange(
                lengths.sum()
            )
            resample = _Pairable(
                np.repeat(np.arange(len(drawn)), lengths),
                pairable.code[index],
                pairable.count[index],
                len(drawn),
            )
            marginals = resample.per_value(len(self.domain))
            if np.count_nonzero(marginals) < 2:
                continue  # expected 0: undefined
            observed[b], expected[b] = _DISAGREEMENTS[self.level](resample, self.domain, marginals)
        return observed, expected


# --- the pairable values --------------------------------------------------------------------


@dataclass
class _Pairable:
    """The values of units with at least two, as (unit, value code, count) entries sorted
    by unit: everything alpha and percent agreement need, at any number of distinct values.
    """

    unit: np.ndarray
    code: np.ndarray
    count: np.ndarray
    units: int

    @classmethod
    def gather(cls, blocks: Iterable) -> _Pairable:
        """Entries from units × values count blocks (dense or sparse), units numbered in order."""
        units, codes, counts = [], [], []
        offset = 0
        for block in blocks:
            unit, code, count, pairable_units = _block_entries(block)
            units.append(unit + offset)
            codes.append(code)
            counts.append(count)
            offset += pairable_units
        if not units:
            return cls(np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0), 0)
        return cls(np.concatenate(units), np.concatenate(codes), np.concatenate(counts), offset)

    def per_unit(self, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.unit, weights, minlength=self.units)

    def per_value(self, size: int) -> np.ndarray:
        return np.bincount(self.code, self.count, minlength=size)


def _block_entries(counts) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(unit, code, count) of the units with two or more values in one count block."""
    from scipy import sparse  # imported on use: see stats/__init__.py

    if sparse.issparse(counts):
        rows = sparse.csr_matrix(counts)
        keep = np.asarray(rows.sum(axis=1)).ravel() >= 2
        kept = rows[keep]
        kept.sum_duplicates()  # sorted by value within each unit (nothing to do when already so)
        kept = kept.tocoo()
        present = kept.data != 0
        unit, code = kept.row[present].astype(np.intp), kept.col[present].astype(np.intp)
        return unit, code, kept.data[present].astype(np.float64), int(keep.sum())
    keep = counts.sum(axis=1) >= 2
    kept = counts if keep.all() else counts[keep]  # every unit pairable (a crowd study): no copy
    kept = np.ascontiguousarray(kept)
    # np.nonzero's entries in its order (by unit, then value), from one pass over the flat table
    flat = np.flatnonzero(kept)
    unit, code = np.divmod(flat, kept.shape[1]) if kept.shape[1] else (flat, flat)
    return unit, code, kept.ravel()[flat].astype(np.float64), int(keep.sum())


def _alpha(pairable: _Pairable, domain: np.ndarray, level: str) -> Estimate:
    marginals = pairable.per_value(len(domain))
    return alpha_from_disagreements(
        lambda: _DISAGREEMENTS[level](pairable, domain, marginals),
        level=level,
        values=len(domain),
        units=pairable.units,
        n=int(marginals.sum()),
        varied=bool(np.count_nonzero(marginals) >= 2),
    )


ONE_UNIT = "only one item has two or more answers: alpha compares items, so it needs at least two"


def alpha_from_disagreements(
    disagreements: Callable[[], tuple[float, float]],
    *,
    level: str,
    values: int,
    units: int,
    n: int,
    varied: bool,
) -> Estimate:
    """``1 - observed / expected``, or why alpha is undefined (``varied``: the pairable values
    are not all the same): the undefined cases every alpha here shares, whatever its distance
    (the levels below, ``stats.sets``' MASI)."""
    details: dict[str, Any] = {"units": units, "values": values, "level": level}
    if values < 2:
        return Estimate.undefined("fewer than two distinct values: nothing to disagree on", **details)
    if units == 0:
        return Estimate.undefined("no unit has two or more values", **details)
    if units == 1:
        # With one unit the expected disagreement is the observed one: alpha is 0 by
        # construction, whatever the answers, which says nothing about agreement.
        return Estimate.undefined(ONE_UNIT, n=n, **details)
    same = "all pairable values are the same: no expected disagreement"
    if not varied:
        return Estimate.undefined(same, n=n, **details)
    observed, expected = disagreements()
    if expected == 0.0:
        return Estimate.undefined(same, n=n, **details)
    return Estimate(1.0 - observed / expected, n=n, details=details)


def _percent(pairable: _Pairable) -> Estimate:
    per_unit = pairable.per_unit(pairable.count)
    pairs = float((per_unit * (per_unit - 1.0)).sum())
    details = {"units": pairable.units, "pairs": int(pairs / 2)}
    if pairs == 0:
        return Estimate.undefined("no unit has two or more values", **details)
    agreeing = float((pairable.count * (pairable.count - 1.0)).sum())
    return Estimate(agreeing / pairs, n=int(pairs / 2), details=details)


# --- disagreements: (Σ_u Σ_{i,j in u} δ / (m_u - 1), Σ_{c,k} n_c n_k δ / (n - 1)) ---------------


def _nominal(pairable: _Pairable, domain: np.ndarray, marginals: np.ndarray) -> tuple[float, float]:
    """Pairs of different values: ``m_u² - Σ_v n_uv²`` within units, ``n² - Σ n_v²`` overall."""
    per_unit = pairable.per_unit(pairable.count)
    squares = pairable.per_unit(pairable.count**2)
    n = marginals.sum()
    observed = float(((per_unit**2 - squares) / (per_unit - 1.0)).sum())
    return observed, float((n**2 - (marginals**2).sum()) / (n - 1.0))


def _interval(pairable: _Pairable, domain: np.ndarray, marginals: np.ndarray) -> tuple[float, float]:
    return _UnitMoments.of_entries(pairable, np.asarray(domain, dtype=np.float64)).disagreements()


def _ordinal(pairable: _Pairable, domain: np.ndarray, marginals: np.ndarray) -> tuple[float, float]:
    """Krippendorff's ordinal difference of values ``c < k`` is ``(Σ_{g=c..k} n_g - (n_c +
    n_k) / 2)²``, the squared difference of the midpoints ``t_v = Σ_{g<v} n_g + n_v / 2``:
    the interval form on ``t`` (the domain is already in order)."""
    midpoints = np.cumsum(marginals) - marginals / 2.0
    return _UnitMoments.of_entries(pairable, midpoints).disagreements()


@dataclass
class _UnitMoments:
    """Per pairable unit: its number of values, their mean and their sum of squared deviations
    from it. The interval form needs nothing else: ``Σ_{i,j} (x_i - x_j)² = 2 m Σ (x_i - x̄)²``
    within a unit and over all pairable values, the latter from the units' moments."""

    count: np.ndarray
    mean: np.ndarray
    spread: np.ndarray

    @classmethod
    def of_entries(cls, pairable: _Pairable, x: np.ndarray) -> _UnitMoments:
        """Moments of the values ``x[code]`` of the entries, O(entries)."""
        count = pairable.per_unit(pairable.count)
        value = x[pairable.code]
        mean = pairable.per_unit(pairable.count * value) / count
        spread = pairable.per_unit(pairable.count * (value - mean[pairable.unit]) ** 2)
        return cls(count, mean, spread)

    @classmethod
    def of_cells(cls, block: np.ndarray) -> tuple[_UnitMoments, float, float]:
        """Moments of the units with two or more values in a coders × units block of numbers,
        O(cells), and the lowest and highest of their values."""
        present = ~np.isnan(block) if block.dtype.kind == "f" else np.ones(block.shape, dtype=bool)
        keep = present.sum(axis=0) >= 2
        values, present = block[:, keep].astype(np.float64, copy=False), present[:, keep]
        if not keep.any():
            return cls(np.zeros(0), np.zeros(0), np.zeros(0)), math.inf, -math.inf
        count = present.sum(axis=0).astype(np.float64)
        mean = np.where(present, values, 0.0).sum(axis=0) / count
        spread = (np.where(present, values - mean, 0.0) ** 2).sum(axis=0)
        low, high = np.fmin.reduce(values, axis=None), np.fmax.reduce(values, axis=None)
        return cls(count, mean, spread), float(low), float(high)

    @classmethod
    def join(cls, parts: Iterable[_UnitMoments]) -> _UnitMoments:
        parts = [cls(np.zeros(0), np.zeros(0), np.zeros(0)), *parts]
        return cls(
            *(np.concatenate([getattr(part, name) for part in parts]) for name in ("count", "mean", "spread"))
        )

    def disagreements(self) -> tuple[float, float]:
        count, mean, spread = self.count, self.mean, self.spread
        observed = float((2.0 * count / (count - 1.0) * spread).sum())
        n = count.sum()
        overall = (count * mean).sum() / n
        total_spread = spread.sum() + (count * (mean - overall) ** 2).sum()
        return observed, float(2.0 * n * total_spread / (n - 1.0))


def _ratio(pairable: _Pairable, domain: np.ndarray, marginals: np.ndarray) -> tuple[float, float]:
    x = np.asarray(domain, dtype=np.float64)
    per_unit = pairable.per_unit(pairable.count)
    within = _ratio_pair_sums(x[pairable.code], pairable.count, pairable.unit, pairable.units)
    observed = float((2.0 * within / (per_unit - 1.0)).sum())
    used = np.flatnonzero(marginals)
    overall = _ratio_pair_sums(x[used], marginals[used], np.zeros(len(used), np.intp), 1)[0]
    return observed, 2.0 * float(overall) / (marginals.sum() - 1.0)


_DISAGREEMENTS = {"nominal": _nominal, "ordinal": _ordinal, "interval": _interval, "ratio": _ratio}


@dataclass
class _Coincidences:
    """A small domain's values × values coincidences, ``o_ck = Σ_u n_uc n_uk / (m_u - 1)``
    over the pairable units, with their marginals: the textbook route, taken where the
    values are few and the counts dense (a table compared with each value). One small
    matrix product per block of units replaces the per-value entries, O(units × values²).
    The diagonal is not corrected to ``n_uc (n_uc - 1)``: every difference function is 0
    there. Memory: three copies of a block's counts, 24 bytes per value and unit, and O(V²).
    """

    matrix: np.ndarray
    marginals: np.ndarray
    units: int
    domain: np.ndarray

    @classmethod
    def of_blocks(cls, blocks: Iterable[np.ndarray], domain: np.ndarray) -> _Coincidences:
        """From dense units × values count blocks."""
        size = len(domain)
        matrix, marginals, units = np.zeros((size, size)), np.zeros(size), 0
        for counts in blocks:
            per_unit = counts.sum(axis=1)
            keep = per_unit >= 2
            kept = counts[keep].astype(np.float64)
            matrix += (kept / (per_unit[keep] - 1.0)[:, None]).T @ kept
            marginals += kept.sum(axis=0)
            units += int(np.count_nonzero(keep))
        return cls(matrix, marginals, units, domain)

    def alpha(self, level: str) -> Estimate:
        return alpha_from_disagreements(
            lambda: self.disagreements(level),
            level=level,
            values=len(self.domain),
            units=self.units,
            n=int(self.marginals.sum()),
            varied=bool(np.count_nonzero(self.marginals) >= 2),
        )

    def disagreements(self, level: str) -> tuple[float, float]:
        differences = _value_differences(self.domain, self.marginals, level)
        expected = self.marginals @ differences @ self.marginals / (self.marginals.sum() - 1.0)
        return float((self.matrix * differences).sum()), float(expected)


def _value_differences(domain: np.ndarray, marginals: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's difference of every two values of a small domain (values × values)."""
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    x = np.cumsum(marginals) - marginals / 2.0 if level == "ordinal" else np.asarray(domain, np.float64)
    if level == "ratio":
        return _ratio_difference(x[:, None], x[None, :])
    return (x[:, None] - x[None, :]) ** 2


# --- ratio: pair sums of ((a - b) / (a + b))² ---------------------------------------------------


def _ratio_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = a + b
    return np.divide(a - b, total, out=np.zeros_like(total), where=total != 0) ** 2


def _ratio_pair_sums(values: np.ndarray, amounts: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """Per group, ``Σ_{i<j} a_i a_j ((x_i - x_j) / (x_i + x_j))²`` over its entries (entries
    sorted by group). Groups up to ``RATIO_DIRECT_VALUES`` entries, or with a value below
    zero, are summed pair by pair; the others with the spectral form."""
    sizes = np.bincount(group, minlength=groups)
    negative = np.bincount(group, values < 0, minlength=groups) > 0
    direct = ((sizes <= RATIO_DIRECT_VALUES) | negative)[group]
    sums = np.zeros(groups)
    for chosen, summed in ((direct, _direct_pair_sums), (~direct, _spectral_pair_sums)):
        if chosen.any():
            present, local = np.unique(group[chosen], return_inverse=True)
            sums[present] = summed(values[chosen], amounts[chosen], local, len(present))
    return sums


def _direct_pair_sums(values: np.ndarray, amounts: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """Every pair within each group, ``PAIR_BLOCK`` pairs at a time: O(Σ size²) time, memory
    about 80 bytes per pair of the block (more only for a group over ``PAIR_BLOCK`` values)."""
    ends = np.cumsum(np.bincount(group, minlength=groups))[group]
    partners = ends - np.arange(len(values)) - 1
    reach = np.cumsum(partners)
    sums = np.zeros(groups)
    first = 0
    while first < len(values):
        done = reach[first - 1] if first else 0
        last = max(first + 1, int(np.searchsorted(reach, done + PAIR_BLOCK, side="right")))
        rows = np.arange(first, last)
        count = partners[first:last]
        left = np.repeat(rows, count)
        right = left + 1 + np.arange(left.size) - np.repeat(np.cumsum(count) - count, count)
        terms = amounts[left] * amounts[right] * _ratio_difference(values[left], values[right])
        sums += np.bincount(group[left], terms, minlength=groups)
        first = last
    return sums


def _spectral_pair_sums(
    values: np.ndarray, amounts: np.ndarray, group: np.ndarray, groups: int
) -> np.ndarray:
    """The ratio pair sums of values ≥ 0: a zero differs by 1 from any positive value, and two
    positive values by ``1 - sech²((log a - log b) / 2)``."""
    positive = values > 0
    zeros = np.bincount(group[~positive], amounts[~positive], minlength=groups)
    totals = np.bincount(group[positive], amounts[positive], minlength=groups)
    sech = _sech_pair_sums(np.log(values[positive]), amounts[positive], group[positive], groups)
    return zeros * totals + (totals**2 - sech) / 2.0


def _sech_pair_sums(y: np.ndarray, amounts: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
    """Per group ``Σ_{i,j} a_i a_j sech²((y_i - y_j) / 2)``, from the Fourier transform of
    sech²(d/2), ``4πω / sinh(πω)``: the sum is ``(1/2π) ∫ 4πω/sinh(πω) |Σ_i a_i e^{iωy_i}|² dω``.

    The trapezoidal rule with step ``h`` is exact for the kernel made periodic with period
    ``2π/h``; with that period ``_ALIAS_MARGIN`` beyond the span of ``y`` the copies add less
    than ``8e^{-40}`` (3e-17) of ``(Σa)²``, and cutting the integral at ``_HIGHEST_FREQUENCY``
    drops less than 7e-17 of it. Nodes: ``13 (span + 40) / 2π`` (83 for one value, 97 for
    values within a factor 1000 of each other); time O(entries × nodes), memory 32 bytes per
    entry of at most about ``BLOCK_CELLS / 4`` entries at a time (or one whole group).
    """
    sums = np.zeros(groups)
    if not y.size:
        return sums
    low, high = float(y.min()), float(y.max())
    step = 2.0 * math.pi / (high - low + _ALIAS_MARGIN)
    frequencies = step * np.arange(1, math.ceil(_HIGHEST_FREQUENCY / step) + 1)
    weights = 4.0 * math.pi * frequencies / np.sinh(math.pi * frequencies)
    sizes = np.bincount(group, minlength=groups)
    present = np.flatnonzero(sizes)
    starts = np.concatenate([[0], np.cumsum(sizes[present])])
    for first, last in _chunks(starts, BLOCK_CELLS >> 2):
        chunk = slice(starts[first], starts[last])
        local = starts[first:last] - starts[first]
        rotation = np.exp(1j * step * (y[chunk] - (low + high) / 2.0))
        term = amounts[chunk].astype(np.complex128)
        total = np.add.reduceat(term.real, local)
        spectrum = np.zeros(last - first)
        for weight in weights:
            term *= rotation
            transform = np.add.reduceat(term, local)
            spectrum += weight * (transform.real**2 + transform.imag**2)
        sums[present[first:last]] = step / (2.0 * math.pi) * (4.0 * total**2 + 2.0 * spectrum)
    return sums


def _chunks(starts: np.ndarray, size: int) -> Iterator[tuple[int, int]]:
    """Runs of whole groups (``starts`` = group boundaries) of about ``size`` entries."""
    first = 0
    groups = len(starts) - 1
    while first < groups:
        last = max(first + 1, int(np.searchsorted(starts, starts[first] + size, side="right")) - 1)
        last = min(last, groups)
        yield first, last
        first = last


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

    @property
    def compared(self) -> bool:
        """Small numeric domains are counted by comparing with each value."""
        return self.numeric and self.size <= EQUALITY_VALUES

    def interval_alpha(self) -> Estimate:
        """Interval alpha from the units' moments read off the cells, O(cells): the values
        need no coding, whatever their number."""
        coders, units = self.data.shape
        width = max(1, BLOCK_CELLS // max(coders, 1))
        parts, low, high = [], math.inf, -math.inf
        for start in range(0, units, width):
            moments, block_low, block_high = _UnitMoments.of_cells(self.data[:, start : start + width])
            parts.append(moments)
            low, high = min(low, block_low), max(high, block_high)
        moments = _UnitMoments.join(parts)
        return alpha_from_disagreements(
            moments.disagreements,
            level="interval",
            values=self.size,
            units=len(moments.count),
            n=int(moments.count.sum()),
            varied=low < high,
        )

    def pairable(self) -> tuple[_Pairable, np.ndarray]:
        """The pairable values and the value domain their codes refer to."""
        try:
            return _Pairable.gather(self.count_blocks()), self.domain
        except _IncompleteDomain:
            full = self.discovered()
            return _Pairable.gather(full.count_blocks()), full.domain

    def discovered(self) -> _ReliabilityTable:
        """The same numbers with their domain read in full (the sampled guess missed a value)."""
        return _ReliabilityTable(self.data, _distinct_numbers(self.data), numeric=True)

    def count_blocks(self) -> Iterator[np.ndarray | sparse.csr_matrix]:
        """Units × values counts, one block of units at a time."""
        coders, units = self.data.shape
        compared = self.compared
        # Comparing goes tile by tile, so its blocks can be wide whatever the coders.
        width = max(1, TILE_CELLS if compared else BLOCK_CELLS // max(coders, 1))
        for start in range(0, units, width):
            block = self.data[:, start : start + width]
            if compared:
                yield self._compared(block)
            else:
                yield self._binned(self._codes(block) if self.numeric else block)

    def _compared(self, block: np.ndarray) -> np.ndarray:
        """Counts by comparing with each value, a cache-sized tile of coders at a time.

        A tile is compared with all values at once, and each value's hits are added as bytes
        into narrow running totals per unit (``uint8``, or ``uint16`` for the tall tiles of a
        table with few units), flushed into ``int64`` counts before they could overflow:
        adding bytes to bytes is plain SIMD with no widening, several times faster than
        reducing hits into wider integers. Missing cells (``NaN``) are counted the same way,
        as one more value, to check a guessed domain. Memory, for ``V`` values: hits, running
        totals and counts, about ``11 (V + 1)`` bytes per unit of the block (4.1 MiB at 5).
        """
        coders, width = block.shape
        rows = max(1, TILE_CELLS // width)
        total = np.uint8 if rows <= np.iinfo(np.uint8).max else np.uint16
        limit = int(np.iinfo(total).max)
        rows = max(1, min(rows, limit, coders))
        size = self.size
        tested = size + int(self.guessed and block.dtype.kind == "f")  # the last: NaN
        values = self.domain.reshape(size, 1, 1)
        counts = np.zeros((tested, width), dtype=np.int64)
        running = np.zeros((tested, width), dtype=total)
        summed = np.empty((tested, width), dtype=total)
        hits = np.empty((tested, rows, width), dtype=bool)
        pending = 0
        for top in range(0, coders, rows):
            tile = block[top : top + rows]
            if pending + tile.shape[0] > limit:
                counts += running
                running[:] = 0
                pending = 0
            pending += tile.shape[0]
            tile_hits = hits[:, : tile.shape[0]]
            np.equal(tile, values, out=tile_hits[:size])
            if tested > size:
                np.isnan(tile, out=tile_hits[size])
            _add_hits(running, tile_hits.view(np.uint8), summed)
        counts += running
        if self.guessed and counts.sum() != block.size:
            raise _IncompleteDomain
        return counts[:size].T

    def _binned(self, codes: np.ndarray) -> np.ndarray | sparse.csr_matrix:
        """Counts of codes (missing = ``size``): dense with bincount while units × values is
        small, else sparse from the distinct (unit, code) keys of the block."""
        size = self.size
        n_units = codes.shape[1]
        keys = codes + (np.arange(n_units, dtype=np.intp) * (size + 1))[None, :]
        if n_units * (size + 1) <= DENSE_COUNTS:
            counts = np.bincount(keys.ravel(), minlength=n_units * (size + 1))
            return counts.reshape(n_units, size + 1)[:, :size]
        distinct, counts = np.unique(keys[codes < size], return_counts=True)
        unit, code = np.divmod(distinct, size + 1)
        from scipy import sparse  # imported on use: see stats/__init__.py

        return sparse.csr_matrix((counts.astype(np.float64), (unit, code)), shape=(n_units, size))

    def _codes(self, block: np.ndarray) -> np.ndarray:
        # NaN sorts after every number, so searchsorted maps it to len(domain): "missing".
        return np.searchsorted(self.domain, block).astype(np.intp, copy=False)


def _add_hits(running: np.ndarray, hits: np.ndarray, summed: np.ndarray) -> None:
    """Adds a tile's hits (values × rows × units, as bytes) to the running totals per value
    and unit."""
    if hits.shape[1] == 1:
        np.add(running, hits[:, 0], out=running)
    else:
        np.add.reduce(hits, axis=1, dtype=summed.dtype, out=summed)
        np.add(running, summed, out=running)


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
