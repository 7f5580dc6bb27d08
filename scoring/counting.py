"""Distinct values and their counts without sorting, when the values allow it.

Points, ratings, sentence numbers and item indices are whole numbers in a small range;
for them ``bincount`` does in one pass what ``np.unique`` does with a sort, which matters
when a report groups a million responses a dozen times.
"""

from __future__ import annotations

import numpy as np

SMALL_RANGE = 1 << 22


def integer_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(sorted distinct values, their counts, each value's index) for whole numbers in a
    small range; None for anything else (the caller sorts instead)."""
    x = values.astype(np.int64) if values.dtype.kind == "b" else values
    if x.size == 0 or x.dtype.kind not in "iuf":
        return None
    low, high = x.min(), x.max()
    if not (np.isfinite(low) and np.isfinite(high)) or high - low >= SMALL_RANGE:
        return None
    offset = x - low
    as_int = offset.astype(np.intp)
    if x.dtype.kind == "f" and not np.array_equal(as_int, offset):
        return None
    counts = np.bincount(as_int)
    present = np.flatnonzero(counts)
    lookup = np.zeros(counts.size, dtype=np.intp)
    lookup[present] = np.arange(present.size)
    distinct = (present + low).astype(values.dtype if values.dtype.kind != "b" else np.int64)
    return distinct, counts[present], lookup[as_int]


def distinct_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and how often each occurs."""
    fast = integer_codes(values)
    if fast is not None:
        return fast[0], fast[1]
    return np.unique(values, return_counts=True)


def count_distinct(values: np.ndarray) -> int:
    """How many different values (whole numbers counted with bincount)."""
    fast = integer_codes(values)
    return len(fast[0]) if fast is not None else int(np.unique(values).size)
