"""Reference kappas the tests measure the production paths against: averages of Cohen's
kappa over dense raters × items tables, pair by pair (``stats.kappa.cohen_kappa``), the way
a textbook computes them. The reports compute the same figures for every pair of raters at
once (``stats.kappa.SharedUnits``); nothing outside the tests needs these.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from stats.estimate import Estimate
from stats.kappa import PairKappas, SharedUnits, cohen_kappa, rating_codes


def pairwise_cohen_kappa(
    ratings, weights: str | None = None, *, labels: Sequence | None = None, min_shared: int = 2
) -> Estimate:
    """Average Cohen's kappa over every pair of raters (rows) who share ``min_shared`` items.

    ``ratings`` is raters × items with missing entries. Pairs whose kappa is undefined
    (one of them used a single category) are counted in ``details`` but not averaged.
    """
    rows = [list(row) for row in ratings]
    codes, categories = rating_codes(rows, labels)
    present = (codes >= 0).astype(np.int64)
    shared = present @ present.T
    kappas = [
        cohen_kappa(rows[i], rows[j], weights, labels=categories)
        for i, j in itertools.combinations(range(len(rows)), 2)
        if shared[i, j] >= min_shared
    ]
    return _average(kappas, "no two raters share enough items with a defined kappa")


def human_model_kappa(
    human_ratings,
    model_ratings: Sequence | np.ndarray,
    weights: str | None = None,
    *,
    labels: Sequence | None = None,
    min_shared: int = 2,
) -> Estimate:
    """Average over human raters of Cohen's kappa between that human and the model.

    ``human_ratings`` is humans × items, ``model_ratings`` the model's answer per item; a
    human counts when they share ``min_shared`` items with the model.
    """
    humans = [list(row) for row in np.asarray(human_ratings, dtype=object)]
    model = list(model_ratings)
    codes, categories = rating_codes([*humans, model], labels)
    kappas = [
        cohen_kappa(human, model, weights, labels=categories)
        for human, human_codes in zip(humans, codes[:-1], strict=True)
        if int(((human_codes >= 0) & (codes[-1] >= 0)).sum()) >= min_shared
    ]
    return _average(kappas, "no human shares enough items with the model for a defined kappa")


def pair_kappas(
    first_rater: np.ndarray,
    second_rater: np.ndarray,
    first_code: np.ndarray,
    second_code: np.ndarray,
    categories: int,
    weights: str | None = None,
    positions: np.ndarray | None = None,
) -> PairKappas:
    """Cohen's kappa per pair of raters through the reports' path, from one row per shared
    unit (value codes in ``0 … categories-1``)."""
    shared = SharedUnits.of(first_rater, second_rater, first_code, second_code)
    return shared.kappas(categories, weights, positions)


def _average(kappas: list[Estimate], reason: str) -> Estimate:
    values = [kappa.value for kappa in kappas if kappa.defined]
    details = {"pairs_undefined": len(kappas) - len(values)}
    if not values:
        return Estimate.undefined(reason, **details)
    return Estimate(float(np.mean(values)), n=len(values), details=details)
