"""Ratings on a scale (Likert questions, questionnaire ``scale`` questions): system pairs
compared on the same source (edit case).

Items of different systems written for the same case share ``provenance.source_id``; a
system pair is compared on the cases both have ratings for. Every pair of a question gets:

- the **difference** in rating (first − second) within sources, with a cluster-robust t
  interval over sources and participants (``stats.clustered.paired_difference``): the
  effect size and its direction;
- a **two-sided Wilcoxon signed-rank test** on the per-source mean ratings: an ordinal test
  (it uses only the order of the per-source differences' sizes, not the distances between
  scale points) whose unit is the source, so that several answers to one item, which share
  the item's own effect, count once and the test keeps its level when items repeat;
- **Holm's adjustment** over the question's pairs (``stats.ranking.holm``): the family is
  every pair of systems compared on the question, so "some pair differs" keeps its 5% level
  with 3, 4 or more systems.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bootstrap import Interval
from .clustered import ClusteredFit, paired_difference
from .estimate import Estimate
from .groups import factorize
from .ranking import holm

EXACT_UP_TO = 50


@dataclass(frozen=True)
class PairComparison:
    """One pair of systems on one question: ``system`` against ``over``."""

    system: str
    over: str
    difference: ClusteredFit
    interval: Interval
    test: Estimate  # two-sided Wilcoxon signed-rank p (``details``: statistic, medians…)
    p_holm: float

    def mirrored(self) -> PairComparison:
        """The same comparison read the other way (over against system)."""
        fit = self.difference
        flipped = ClusteredFit(-fit.estimate, fit.se, fit.df, fit.clusters)
        interval = Interval(-self.interval.high, -self.interval.low, self.interval.method)
        details = dict(self.test.details)
        if "median_difference" in details:
            details["median_difference"] = -details["median_difference"]
        test = Estimate(self.test.value, n=self.test.n, reason=self.test.reason, details=details)
        return PairComparison(self.over, self.system, flipped, interval, test, self.p_holm)


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


def wilcoxon_signed_rank(first, second) -> Estimate:
    """Two-sided Wilcoxon signed-rank test of paired values (per-source mean ratings).

    ``value`` is the p-value; ``n`` the number of pairs; zero differences are dropped
    (Wilcoxon's convention), and with no non-zero difference the test is undefined.
    """
    x = np.asarray(first, dtype=np.float64)
    y = np.asarray(second, dtype=np.float64)
    difference = x - y
    details: dict[str, Any] = {
        "median_difference": float(np.median(difference)) if difference.size else float("nan"),
        "alternative": "two-sided",
    }
    if np.count_nonzero(difference) == 0:
        return Estimate.undefined("no pair differs", n=int(x.size), **details)
    from scipy import stats  # imported on use: see stats/__init__.py

    method = wilcoxon_method(difference)
    result = stats.wilcoxon(x, y, alternative="two-sided", zero_method="wilcox", method=method)
    details["statistic"] = float(result.statistic)
    details["method"] = method
    return Estimate(float(result.pvalue), n=int(x.size), details=details)


def system_comparisons(values, systems, sources, participants=None) -> list[PairComparison]:
    """Every unordered pair of (non-blank) systems compared on the sources both were rated
    on, in sorted order (``system`` < ``over``), Holm-adjusted together. ``sources`` are
    codes (``stats.clustered.case_codes``: -1 for an item of no source, left out) or labels
    ("" for none); pairs with fewer than two shared sources have no interval and are left
    out."""
    x = np.asarray(values, dtype=np.float64)
    source = np.asarray(sources)
    system = np.asarray(systems)
    person = None if participants is None else np.asarray(participants)
    has_source = source >= 0 if source.dtype.kind in "iu" else source != ""
    paired = has_source & (system != "") & ~np.isnan(x)
    if not paired.any():
        return []
    x, source = x[paired], source[paired]
    names, system = factorize(system[paired])  # codes: integer comparisons per pair
    person = None if person is None else person[paired]
    codes = factorize(source)[1]
    found = []
    for first, second in itertools.combinations(range(len(names)), 2):
        pair = _one_pair(x, system, codes, person, first, second)
        if pair is not None:
            found.append((str(names[first]), str(names[second]), *pair))
    return _holm_adjusted(found)


def _one_pair(x, system, codes, person, first, second) -> tuple | None:
    """The difference (fit, interval) and the Wilcoxon test of systems ``first`` and
    ``second`` (codes)."""
    mask = (system == first) | (system == second)
    fitted = paired_difference(
        x[mask], system[mask] == first, codes[mask], None if person is None else person[mask]
    )
    if fitted is None:
        return None
    means = paired_by_source(codes[mask], system[mask], x[mask], first, second)
    return (fitted[0], fitted[1], wilcoxon_signed_rank(*means))


def _holm_adjusted(found: list[tuple]) -> list[PairComparison]:
    """Holm over the pairs whose test is defined (an undefined test is no hypothesis tested)."""
    tested = [k for k, pair in enumerate(found) if pair[4].defined]
    adjusted = dict(zip(tested, holm([found[k][4].value for k in tested]), strict=True))
    return [
        PairComparison(name, over, fit, interval, test, float(adjusted.get(k, float("nan"))))
        for k, (name, over, fit, interval, test) in enumerate(found)
    ]


def wilcoxon_method(difference: np.ndarray) -> str:
    """The exact null distribution for small samples without ties, else the normal
    approximation; never SciPy's random permutations (a stored p-value must not jitter)."""
    nonzero = np.abs(difference[difference != 0])
    small = nonzero.size <= EXACT_UP_TO
    return "exact" if small and np.unique(nonzero).size == nonzero.size else "asymptotic"
