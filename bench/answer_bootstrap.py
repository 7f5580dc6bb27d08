"""The answer-level bootstrap means per group, the reports' figure before the clustered
intervals (``stats.clustered``) replaced it: the "before" column of ``bench/coverage.py``
and ``bench/coverage_shares.py`` (``docs/statistics.md``). It resamples answers as if they
were independent, which is over-confident when items differ; no report uses it."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from stats.bootstrap import MAX_DISTINCT, mean_ci, mean_ci_from_counts, seed_for
from stats.counting import integer_codes
from stats.groups import GroupMean, group_index, plain

# Largest groups × values table of counts built at once (else the values are grouped one group at a time).
MAX_COUNTED_CELLS = 1 << 22
# Sums of whole numbers below this are exact in float64, in any order.
EXACT_SUMS = float(2**53)


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
