"""Agreement on set-valued answers (a questionnaire's ``multi`` questions): Krippendorff's
alpha with the MASI distance (Passonneau 2006).

MASI weighs the Jaccard overlap of two sets by how they relate: ``1 - J × M`` with ``J`` the
Jaccard index and ``M`` 1 for equal sets, 2/3 when one holds the other, 1/3 when they only
overlap, 0 when they are disjoint. Two empty sets are equal (distance 0); an empty set and
another are disjoint (distance 1). Alpha is ``1 - D_o / D_e`` over the pairable values
(units with two answers or more), as ``stats.agreement`` computes it for the other levels:
``D_o`` averages the distance over the pairs within a unit (each unit's pairs weighted by
``1 / (m_u - 1)``), ``D_e`` over all pairs of pairable values.

Sets are held as bit masks of their elements (at most ``MAX_ELEMENTS`` distinct ones: a
multi question has at most 30 options), so distances are computed on arrays: the pairs
within units from the units' entries (at most ``sum m_u²``), the expected disagreement from
the distinct sets' counts in blocks of ``BLOCK_PAIRS``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from .agreement import alpha_from_disagreements
from .estimate import Estimate
from .groups import factorize

MAX_ELEMENTS = 63
BLOCK_PAIRS = 1 << 20


def masi_distance(first: Iterable[Hashable], second: Iterable[Hashable]) -> float:
    """The MASI distance of two sets (0: the same, 1: disjoint)."""
    a, b = set(first), set(second)
    if a == b:
        return 0.0
    shared = len(a & b)
    if shared == 0:
        return 1.0
    monotonicity = 2 / 3 if shared == min(len(a), len(b)) else 1 / 3
    return 1.0 - shared / len(a | b) * monotonicity


def masi_alpha(units: Sequence[Hashable], values: Sequence[Iterable[Hashable]]) -> Estimate:
    """Krippendorff's alpha with the MASI distance: ``values[i]`` is the set one annotator
    gave for unit ``units[i]`` (one per annotator and unit). ``n`` is the number of pairable
    values; ``details`` has ``units`` (pairable units) and ``values`` (distinct sets given)."""
    masks = _masks(values)
    unit_codes = factorize(np.asarray(list(units), dtype=object))[1]
    keys = np.stack([unit_codes, masks.astype(np.uint64).view(np.int64)], axis=1)
    entries, counts = np.unique(keys, axis=0, return_counts=True)  # (unit, set) → count, by unit
    per_unit = np.bincount(entries[:, 0], weights=counts).astype(np.int64)
    pairable = per_unit[entries[:, 0]] >= 2
    entries, counts = entries[pairable], counts[pairable]
    sets, inverse = np.unique(entries[:, 1].view(np.uint64), return_inverse=True)
    set_counts = np.bincount(inverse.ravel(), weights=counts, minlength=len(sets))
    n = int(counts.sum())
    n_units = int(np.count_nonzero(per_unit >= 2))

    def disagreements() -> tuple[float, float]:
        observed = _within_units(entries[:, 0], entries[:, 1].view(np.uint64), counts, per_unit) / n
        expected = _all_pairs(sets, set_counts) / (n * (n - 1))
        return observed, expected

    return alpha_from_disagreements(
        disagreements,
        level="masi",
        values=len(np.unique(masks)),
        units=n_units,
        n=n,
        varied=len(sets) >= 2,
    )


def _masks(values: Sequence[Iterable[Hashable]]) -> np.ndarray:
    """Each set as a bit mask over the elements seen (in order of first appearance)."""
    bits: dict[Hashable, int] = {}
    masks = np.zeros(len(values), dtype=np.uint64)
    for index, value in enumerate(values):
        mask = 0
        for element in set(value):
            bit = bits.setdefault(element, len(bits))
            if bit >= MAX_ELEMENTS:
                raise ValueError(f"MASI alpha takes sets of at most {MAX_ELEMENTS} distinct elements.")
            mask |= 1 << bit
        masks[index] = mask
    return masks


def _distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MASI distances of bit masks, elementwise."""
    shared = np.bitwise_count(a & b).astype(np.float64)
    union = np.bitwise_count(a | b).astype(np.float64)
    smaller = np.minimum(np.bitwise_count(a), np.bitwise_count(b)).astype(np.float64)
    monotonicity = np.where(a == b, 1.0, np.where(shared == smaller, 2 / 3, np.where(shared > 0, 1 / 3, 0.0)))
    jaccard = np.divide(shared, union, out=np.ones_like(shared), where=union > 0)  # two empty sets: equal
    return 1.0 - jaccard * monotonicity


def _within_units(unit: np.ndarray, mask: np.ndarray, counts: np.ndarray, per_unit: np.ndarray) -> float:
    """``Σ_u Σ_{v,w} n_uv n_uw δ(v, w) / (m_u - 1)`` over the units' entries (sorted by unit)."""
    starts = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]])
    sizes = np.diff(np.r_[starts, len(unit)])
    size_of = np.repeat(sizes, sizes)  # per entry: how many entries its unit has
    start_of = np.repeat(starts, sizes)
    first = np.repeat(np.arange(len(unit)), size_of)
    offset = np.arange(len(first)) - np.repeat(np.cumsum(size_of) - size_of, size_of)
    second = np.repeat(start_of, size_of) + offset
    weights = counts[first] * counts[second] / (per_unit[unit[first]] - 1)
    return float(np.sum(weights * _distances(mask[first], mask[second])))


def _all_pairs(sets: np.ndarray, counts: np.ndarray) -> float:
    """``Σ_{v,w} n_v n_w δ(v, w)`` over the distinct sets, in blocks of rows."""
    total = 0.0
    rows = max(1, BLOCK_PAIRS // max(1, len(sets)))
    for start in range(0, len(sets), rows):
        block = sets[start : start + rows]
        distances = _distances(block[:, None], sets[None, :])
        total += float(counts[start : start + rows] @ distances @ counts)
    return total
