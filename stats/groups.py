"""Means and shares per group (system, question, p…), each with its bootstrap interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .bootstrap import MAX_DISTINCT, Interval, mean_ci, mean_ci_from_counts, seed_for
from .counting import integer_codes

# Largest groups × values table of counts built at once (else the values are grouped one group at a time).
MAX_COUNTED_CELLS = 1 << 22
# Sums of whole numbers below this are exact in float64, in any order.
EXACT_SUMS = float(2**53)


@dataclass(frozen=True)
class GroupMean:
    key: tuple
    mean: float
    sd: float
    n: int
    ci: Interval | None


def group_index(*keys: Sequence | np.ndarray) -> tuple[list[tuple], np.ndarray]:
    """Distinct key tuples (sorted) and, per observation, the index of its tuple."""
    if not keys or len(keys[0]) == 0:
        return [], np.zeros(0, dtype=np.intp)
    codes, levels = [], []
    for key in keys:
        distinct, code = factorize(key)
        levels.append(distinct)
        codes.append(code)
    if len(keys) == 1:
        return [(plain(value),) for value in levels[0]], codes[0]
    combined = np.ravel_multi_index(codes, [len(level) for level in levels])
    present, index = factorize(combined)
    tuples = [
        tuple(plain(levels[k][i]) for k, i in enumerate(np.unravel_index(value, [len(lv) for lv in levels])))
        for value in present
    ]
    return tuples, index.ravel()


def factorize(values: Sequence | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and each value's index among them (the codes may be the
    array given, when it already holds codes from 0: read them, never write into them).

    Text (object arrays) is factorised through a dictionary, which is much faster than
    sorting a million Python strings; numbers through ``np.unique``.
    """
    array = np.asarray(values)
    if is_repeated(array):  # one value on every row: nothing to compare
        return array[:1].copy(), np.zeros(len(array), dtype=np.intp)
    if array.dtype.kind != "O":
        fast = integer_codes(array)
        if fast is not None and fast[2] is not None:
            return fast[0], fast[2]
        distinct, codes = np.unique(array, return_inverse=True)
        return distinct, codes.ravel()
    few = _few_labels(array)
    if few is not None:
        return few
    seen: dict = {}
    codes = np.fromiter((seen.setdefault(v, len(seen)) for v in array), dtype=np.intp, count=len(array))
    labels = list(seen)
    order = sorted(range(len(labels)), key=lambda i: labels[i])
    rank = np.empty(len(labels), dtype=np.intp)
    rank[order] = np.arange(len(labels))
    return np.array([labels[i] for i in order], dtype=object), rank[codes]


def first_given(
    first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """``factorize(np.where(a != "", a, b))`` from ``factorize(a)`` and ``factorize(b)``
    (texts of one length): each row's first non-empty text, without comparing a text per
    row, only one per pair of codes that occurs."""
    (first_labels, first_codes), (second_labels, second_codes) = first, second
    width = max(len(second_labels), 1)
    pairs, index = factorize(first_codes.astype(np.intp) * width + second_codes)
    a, b = np.divmod(pairs, width)
    a_texts = first_labels[a]
    chosen = np.where(a_texts != "", a_texts, second_labels[b] if len(second_labels) else "")
    labels, codes = factorize(np.asarray(chosen, dtype=object))
    return labels, codes[index]


def repeated(value, size: int) -> np.ndarray:
    """``value`` on each of ``size`` rows, as a read-only view of one element (a question
    or level label on every observation): no memory and no work per row, and
    ``factorize`` and ``Columns.take`` see at once that every row holds it."""
    one = np.empty(1, dtype=object)
    one[0] = value
    return np.broadcast_to(one, (size,))


def is_repeated(array: np.ndarray) -> bool:
    """Whether every element of a 1-D array is one and the same (a zero-stride view)."""
    return array.ndim == 1 and array.size > 1 and array.strides[0] == 0


def _few_labels(array: np.ndarray, probe: int = 1000, most: int = 8):
    """Text repeating a handful of labels (a question id, a level, a system): one
    comparison per label instead of a dictionary lookup per element; None otherwise."""
    labels = sorted(set(array[:probe].tolist()), key=str)
    if len(labels) > most or not all(isinstance(label, str) for label in labels):
        return None
    if len(labels) == 1:  # one question, one level: a single comparison pass
        return (
            (np.array(labels, dtype=object), np.zeros(len(array), dtype=np.intp))
            if (array == labels[0]).all()
            else None
        )
    codes = np.full(len(array), -1, dtype=np.intp)
    for index, label in enumerate(labels):
        codes[array == label] = index
    if (codes < 0).any():
        return None
    return np.array(labels, dtype=object), codes


def grouped_means(
    values,
    *keys: Sequence | np.ndarray,
    label: str = "",
    ci: bool = True,
    key_labels: np.ndarray | None = None,
) -> list[GroupMean]:
    """Mean, sd, n and a seeded bootstrap CI of ``values`` for every combination of keys.

    NaN values are left out; ``label`` (the metric name) seeds the bootstrap per group.
    ``key_labels``: with one key of codes, the sorted values the codes stand for; the groups
    (their keys, order and seeds) are then those the values themselves would give, without
    grouping a million values that only take a few.
    """
    x = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(x)
    every = keep.all()  # then no copies
    x = x if every else x[keep]
    tuples, index = group_index(*[np.asarray(key) if every else np.asarray(key)[keep] for key in keys])
    if not tuples:
        return []
    if key_labels is not None:
        tuples = [(plain(key_labels[code]),) for (code,) in tuples]
    counted = _counted_means(x, index, tuples, label, ci)
    if counted is not None:
        return counted
    # a stable sort of small integers is a radix sort in NumPy: linear time
    order = np.argsort(index.astype(np.int16) if len(tuples) < 1 << 15 else index, kind="stable")
    bounds = np.searchsorted(index[order], np.arange(len(tuples) + 1))
    out = []
    for g, key in enumerate(tuples):
        part = x[order[bounds[g] : bounds[g + 1]]]
        interval = mean_ci(part, seed=seed_for(label, key)) if ci else None
        sd = float(part.std(ddof=1)) if part.size > 1 else float("nan")
        out.append(GroupMean(key, float(part.mean()), sd, int(part.size), interval))
    return out


def _counted_means(
    x: np.ndarray, index: np.ndarray, tuples: list[tuple], label: str, ci: bool
) -> list[GroupMean] | None:
    """The groups' figures from one count per group and value, when the values are a few
    whole numbers (points, ratings, 0/1 shares): one counting pass, not a pass per group.
    The means and intervals are exactly those of the values (sums of whole numbers are exact
    in any order); the sd comes from the same counts, so it no longer depends on the order
    the rows were read in. None when the values are anything else."""
    found = _few_whole_numbers(x, codes=True)
    if found is None or len(tuples) * len(found[0]) > MAX_COUNTED_CELLS:
        return None
    distinct, _, codes = found
    counts = np.bincount(index * len(distinct) + codes, minlength=len(tuples) * len(distinct))
    return [
        _from_counts(key, distinct, count, label, ci)
        for key, count in zip(tuples, counts.reshape(len(tuples), len(distinct)), strict=True)
    ]


def _few_whole_numbers(x: np.ndarray, *, codes: bool):
    """``integer_codes`` of ``x`` (distinct values as floats) when they are at most
    ``MAX_DISTINCT`` whole numbers whose sums stay exact; else None."""
    fast = integer_codes(x, codes=codes)
    if fast is None or len(fast[0]) > MAX_DISTINCT:
        return None
    distinct = fast[0].astype(np.float64)
    if not np.array_equal(distinct, np.round(distinct)) or np.abs(distinct).max() * x.size >= EXACT_SUMS:
        return None
    return distinct, fast[1], fast[2]


def _from_counts(key: tuple, distinct: np.ndarray, count: np.ndarray, label: str, ci: bool) -> GroupMean:
    n = int(count.sum())
    mean = float(count @ distinct) / n
    sd = math.sqrt(float(count @ (distinct - mean) ** 2) / (n - 1)) if n > 1 else float("nan")
    present = count > 0
    interval = (
        mean_ci_from_counts(distinct[present], count[present], seed=seed_for(label, key)) if ci else None
    )
    return GroupMean(key, mean, sd, n, interval)


def overall_mean(values, *, label: str = "", ci: bool = True) -> GroupMean | None:
    """``grouped_means`` with one group (the same figures, its seed included), without
    grouping a million values to find that every one is in it."""
    x = np.asarray(values, dtype=np.float64)
    missing = np.isnan(x)
    if missing.any():
        x = x[~missing]
    if x.size == 0:
        return None
    found = _few_whole_numbers(x, codes=False)
    if found is not None:  # (0,): the one group's key, as grouped_means names it
        only = _from_counts((0,), found[0], found[1], label, ci)
        return GroupMean((), only.mean, only.sd, only.n, only.ci)
    interval = mean_ci(x, seed=seed_for(label, (0,))) if ci else None
    sd = float(x.std(ddof=1)) if x.size > 1 else float("nan")
    return GroupMean((), float(x.mean()), sd, int(x.size), interval)


def plain(value):
    """NumPy scalars → Python values (they go into JSON groups)."""
    return value.item() if isinstance(value, np.generic) else value
