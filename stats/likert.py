"""Likert ratings: paired comparisons of systems on the same source (edit case).

Items of different systems written for the same case share ``provenance.source_id``; a
system pair is compared on the cases both have ratings for, with each side's ratings
of that case averaged first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .estimate import Estimate

EXACT_UP_TO = 50


def paired_by_source(sources, systems, values, first, second) -> tuple[np.ndarray, np.ndarray]:
    """Per source rated for both systems: the mean rating of ``first`` and of ``second``."""
    source = np.asarray(sources, dtype=np.int64)
    system = np.asarray(systems)
    x = np.asarray(values, dtype=np.float64)
    size = int(source.max()) + 1 if source.size else 0
    means = []
    for name in (first, second):
        mask = (system == name) & ~np.isnan(x)
        counts = np.bincount(source[mask], minlength=size)
        sums = np.bincount(source[mask], weights=x[mask], minlength=size)
        means.append((counts, sums))
    both = (means[0][0] > 0) & (means[1][0] > 0)
    return means[0][1][both] / means[0][0][both], means[1][1][both] / means[1][0][both]


def wilcoxon_greater(first, second) -> Estimate:
    """One-sided Wilcoxon signed-rank test that ``first`` is rated higher than ``second``.

    ``value`` is the p-value; ``n`` the number of pairs; zero differences are dropped
    (Wilcoxon's convention), and with no non-zero difference the test is undefined.
    """
    x = np.asarray(first, dtype=np.float64)
    y = np.asarray(second, dtype=np.float64)
    difference = x - y
    details: dict[str, Any] = {
        "median_difference": float(np.median(difference)) if difference.size else float("nan")
    }
    if np.count_nonzero(difference) == 0:
        return Estimate.undefined("no pair differs", n=int(x.size), **details)
    from scipy import stats  # imported on use: see stats/__init__.py

    result = stats.wilcoxon(x, y, alternative="greater", zero_method="wilcox", method=_method(difference))
    details["statistic"] = float(result.statistic)
    details["method"] = _method(difference)
    return Estimate(float(result.pvalue), n=int(x.size), details=details)


def _method(difference: np.ndarray) -> str:
    """The exact null distribution for small samples without ties, else the normal
    approximation; never SciPy's random permutations (a stored p-value must not jitter)."""
    nonzero = np.abs(difference[difference != 0])
    small = nonzero.size <= EXACT_UP_TO
    return "exact" if small and np.unique(nonzero).size == nonzero.size else "asymptotic"
