"""Means and shares per group (system, question, p…), each with its bootstrap interval."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .bootstrap import Interval, mean_ci, seed_for


@dataclass(frozen=True)
class GroupMean:
    key: tuple
    mean: float
    sd: float
    n: int
    ci: Interval | None


def group_index(*keys: Sequence) -> tuple[list[tuple], np.ndarray]:
    """Distinct key tuples (sorted) and, per observation, the index of its tuple."""
    if not keys or len(keys[0]) == 0:
        return [], np.zeros(0, dtype=np.intp)
    codes, levels = [], []
    for key in keys:
        distinct, code = np.unique(np.asarray(key), return_inverse=True)
        levels.append(distinct)
        codes.append(code.ravel())
    combined = np.ravel_multi_index(codes, [len(level) for level in levels])
    present, index = np.unique(combined, return_inverse=True)
    tuples = [
        tuple(_plain(levels[k][i]) for k, i in enumerate(np.unravel_index(value, [len(lv) for lv in levels])))
        for value in present
    ]
    return tuples, index.ravel()


def grouped_means(values, *keys: Sequence, label: str = "", ci: bool = True) -> list[GroupMean]:
    """Mean, sd, n and a seeded bootstrap CI of ``values`` for every combination of keys.

    NaN values are left out; ``label`` (the metric name) seeds the bootstrap per group.
    """
    x = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(x)
    x = x[keep]
    tuples, index = group_index(*[np.asarray(key)[keep] for key in keys])
    if not tuples:
        return []
    order = np.argsort(index, kind="stable")
    bounds = np.searchsorted(index[order], np.arange(len(tuples) + 1))
    out = []
    for g, key in enumerate(tuples):
        part = x[order[bounds[g] : bounds[g + 1]]]
        interval = mean_ci(part, seed=seed_for(label, key)) if ci else None
        sd = float(part.std(ddof=1)) if part.size > 1 else float("nan")
        out.append(GroupMean(key, float(part.mean()), sd, int(part.size), interval))
    return out


def overall_mean(values, *, label: str = "", ci: bool = True) -> GroupMean | None:
    x = np.asarray(values, dtype=np.float64)
    groups = grouped_means(x, np.zeros(len(x), dtype=np.int8), label=label, ci=ci)
    if not groups:
        return None
    only = groups[0]
    return GroupMean((), only.mean, only.sd, only.n, only.ci)


def _plain(value):
    """NumPy scalars → Python values (they go into JSON groups)."""
    return value.item() if isinstance(value, np.generic) else value
