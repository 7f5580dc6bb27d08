"""Kappa statistics: Cohen's (two raters, optionally weighted), Fleiss' (many raters per
item, not necessarily the same number), and averages of Cohen's over a group of raters or
between humans and a model simulator.

Ratings are any hashable labels; ``None`` or ``NaN`` means "not rated" and such pairs are
left out. Categories are ordered by ``labels`` when given (weighted kappa needs the order),
else sorted.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from .estimate import Estimate

WEIGHTS = (None, "linear", "quadratic")


def cohen_kappa(
    a: Sequence, b: Sequence, weights: str | None = None, labels: Sequence | None = None
) -> Estimate:
    """Cohen's kappa between two raters over the items both rated (``n`` = those items)."""
    _check_weights(weights)
    if len(a) != len(b):
        raise ValueError("the two raters' sequences must have the same length")
    codes, categories = factorize([list(a), list(b)], labels)
    return _kappa_from_codes(codes[0], codes[1], len(categories), weights)


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


def pairwise_cohen_kappa(
    ratings, weights: str | None = None, *, labels: Sequence | None = None, min_shared: int = 2
) -> Estimate:
    """Average Cohen's kappa over every pair of raters (rows) who share ``min_shared`` items.

    ``ratings`` is raters × items with missing entries. Pairs whose kappa is undefined
    (one of them used a single category) are counted in ``details`` but not averaged.
    """
    _check_weights(weights)
    codes, categories = factorize(ratings, labels)
    present = (codes >= 0).astype(np.int64)
    shared = present @ present.T
    values, undefined = [], 0
    for i, j in itertools.combinations(range(len(codes)), 2):
        if shared[i, j] < min_shared:
            continue
        kappa = _kappa_from_codes(codes[i], codes[j], len(categories), weights)
        if kappa.defined:
            values.append(kappa.value)
        else:
            undefined += 1
    return _average(values, undefined, "no two raters share enough items with a defined kappa")


def human_model_kappa(
    human_ratings,
    model_ratings: Sequence | np.ndarray,
    weights: str | None = None,
    *,
    labels: Sequence | None = None,
    min_shared: int = 2,
) -> Estimate:
    """Average over human raters of Cohen's kappa between that human and the model.

    ``human_ratings`` is humans × items, ``model_ratings`` the model's answer per item
    (an LLM simulator or an automatic rater); a human counts when they share
    ``min_shared`` items with the model.
    """
    _check_weights(weights)
    humans = [list(row) for row in np.asarray(human_ratings, dtype=object)]
    codes, categories = factorize([*humans, list(model_ratings)], labels)
    model = codes[-1]
    values, undefined = [], 0
    for human in codes[:-1]:
        if int(((human >= 0) & (model >= 0)).sum()) < min_shared:
            continue
        kappa = _kappa_from_codes(human, model, len(categories), weights)
        if kappa.defined:
            values.append(kappa.value)
        else:
            undefined += 1
    return _average(values, undefined, "no human shares enough items with the model for a defined kappa")


def factorize(table, labels: Sequence | None = None) -> tuple[np.ndarray, list]:
    """Raters × items labels → integer codes (``-1`` = missing) and the category list."""
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


def _kappa_from_codes(x: np.ndarray, y: np.ndarray, size: int, weights: str | None) -> Estimate:
    both = (x >= 0) & (y >= 0)
    n = int(both.sum())
    if n == 0:
        return Estimate.undefined("the raters share no rated item")
    if size < 2:
        return Estimate.undefined("fewer than two categories", n=n)
    observed = np.bincount(x[both] * size + y[both], minlength=size * size).reshape(size, size) / n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    w = _weight_matrix(size, weights)
    chance = float((w * expected).sum())
    if chance == 0.0:
        return Estimate.undefined("both raters used one and the same category: no chance disagreement", n=n)
    return Estimate(1.0 - float((w * observed).sum()) / chance, n=n)


def _weight_matrix(size: int, weights: str | None) -> np.ndarray:
    index = np.arange(size)
    distance = np.abs(np.subtract.outer(index, index)).astype(np.float64)
    if weights is None:
        return (distance > 0).astype(np.float64)
    return distance if weights == "linear" else distance**2


def _average(values: list[float], undefined: int, reason: str) -> Estimate:
    details = {"pairs_undefined": undefined}
    if not values:
        return Estimate.undefined(reason, **details)
    return Estimate(float(np.mean(values)), n=len(values), details=details)


def _check_weights(weights) -> None:
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, not {weights!r}")


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)
