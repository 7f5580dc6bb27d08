"""Distinct values and their counts without sorting, when the values allow it.

Points, ratings, sentence numbers and item indices are whole numbers in a small range;
for them ``bincount`` does in one pass what ``np.unique`` does with a sort, which matters
when a report groups a million responses a dozen times.
"""

from __future__ import annotations

import numpy as np

SMALL_RANGE = 1 << 22


def integer_codes(
    values: np.ndarray, *, codes: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """(sorted distinct values, their counts, each value's index) for whole numbers in a
    small range (or values on a whole-number grid); None for anything else (the caller
    sorts instead). ``codes=False`` leaves out the index (None): a pass fewer."""
    x = values.view(np.int8) if values.dtype.kind == "b" else values
    if x.size == 0 or x.dtype.kind not in "iuf":
        return None
    low, high = x.min(), x.max()
    if not (np.isfinite(low) and np.isfinite(high)) or high - low >= SMALL_RANGE:
        return None
    if x.dtype.kind == "f":
        offset = x - low if low != 0 else x  # points, shares and counts start at 0: no shifted copy
        as_int = offset.astype(np.intp)
        if not np.array_equal(as_int, offset):
            return None
    else:  # whole numbers already: shifted in place on one copy (none for codes from 0)
        as_int = x.astype(np.intp, copy=False)
        if low != 0:
            as_int = as_int - int(low)
    counts = np.bincount(as_int)
    present = np.flatnonzero(counts)
    distinct = (present + low).astype(values.dtype if values.dtype.kind != "b" else np.int64)
    if not codes:
        return distinct, counts[present], None
    if present.size == counts.size:  # every value in the range occurs: the offsets are the codes
        return distinct, counts, as_int
    lookup = np.zeros(counts.size, dtype=np.intp)
    lookup[present] = np.arange(present.size)
    return distinct, counts[present], lookup[as_int]


def distinct_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and how often each occurs."""
    fast = integer_codes(values, codes=False)
    if fast is not None:
        return fast[0], fast[1]
    return np.unique(values, return_counts=True)


def count_distinct(values: np.ndarray) -> int:
    """How many different values (whole numbers counted with bincount)."""
    fast = integer_codes(values, codes=False)
    return len(fast[0]) if fast is not None else int(np.unique(values).size)


def row_numbers(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted(ids, values)`` for sorted distinct whole-number ``ids``: each value's
    row among them. Ids that span a small range (a study's items and participants, inserted
    together) go through a table indexed by id, one lookup per value instead of a binary
    search; any value that is not one of the ids falls back to the search, so the answer is
    always the search's."""
    if ids.size == 0 or values.size == 0 or ids.dtype.kind not in "iuf" or values.dtype.kind not in "iuf":
        return np.searchsorted(ids, values)
    first, last = ids[0], ids[-1]
    if not (np.isfinite(first) and np.isfinite(last)) or last - first >= max(4 * ids.size, SMALL_RANGE // 4):
        return np.searchsorted(ids, values)
    first, span = int(first), int(last) - int(first) + 1
    offsets = ids.astype(np.int64) - first
    if not np.array_equal(offsets + first, ids) or (np.diff(offsets) <= 0).any():  # not whole, or repeated
        return np.searchsorted(ids, values)
    table = np.full(span, -1, dtype=np.intp)
    table[offsets] = np.arange(ids.size)
    with np.errstate(invalid="ignore"):  # NaN or huge: caught by the checks below
        wanted = values.astype(np.int64)
    wanted -= first
    if wanted.min() < 0 or wanted.max() >= span:
        return np.searchsorted(ids, values)
    rows = table[wanted]
    wanted += first
    if rows.min() < 0 or not np.array_equal(wanted, values):  # not an id, or not a whole number
        return np.searchsorted(ids, values)
    return rows
