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
- systems never shown on the same case are compared on their own items instead: the
  difference of their means with a cluster-robust interval over items and participants
  (``stats.clustered.unpaired_difference``) and a **two-sided Mann-Whitney U test** on the
  per-item mean ratings (ordinal as well; its unit is the item);
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
from .clustered import ClusteredFit, paired_difference, unpaired_difference
from .estimate import Estimate
from .groups import factorize
from .ranking import holm_defined

EXACT_UP_TO = 50


@dataclass(frozen=True)
class PairComparison:
    """One pair of systems on one question: ``system`` against ``over``."""

    system: str
    over: str
    difference: ClusteredFit
    interval: Interval
    test: Estimate  # two-sided p (``details``: statistic, medians…)
    p_holm: float
    # "paired": on shared cases, Wilcoxon signed-rank; "unpaired": on item means, Mann-Whitney U
    design: str = "paired"

    def mirrored(self) -> PairComparison:
        """The same comparison read the other way (over against system)."""
        fit = self.difference
        flipped = ClusteredFit(-fit.estimate, fit.se, fit.df, fit.clusters)
        interval = Interval(-self.interval.high, -self.interval.low, self.interval.method)
        details = dict(self.test.details)
        if "median_difference" in details:
            details["median_difference"] = -details["median_difference"]
        test = Estimate(self.test.value, n=self.test.n, reason=self.test.reason, details=details)
        return PairComparison(self.over, self.system, flipped, interval, test, self.p_holm, self.design)


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
    statistic, p = wilcoxon_rows(x[None, :], y[None, :])
    details["statistic"] = float(statistic[0])
    details["method"] = wilcoxon_method(difference)
    return Estimate(float(p[0]), n=int(x.size), details=details)


def wilcoxon_rows(first, second) -> tuple[np.ndarray, np.ndarray]:
    """The statistic and two-sided p of ``wilcoxon_signed_rank`` for each row of paired
    values (studies × pairs), every row by its own ``wilcoxon_method``; NaN where no pair
    differs. The reports test one row, ``stats.planning`` thousands of simulated studies:
    the same test, vectorised."""
    x = np.atleast_2d(np.asarray(first, dtype=np.float64))
    y = np.atleast_2d(np.asarray(second, dtype=np.float64))
    difference = x - y
    exact = np.array([wilcoxon_method(row) == "exact" for row in difference], dtype=bool)
    defined = np.count_nonzero(difference, axis=1) > 0
    return _by_method(
        lambda rows, method: _scipy_stats().wilcoxon(
            x[rows], y[rows], axis=1, alternative="two-sided", zero_method="wilcox", method=method
        ),
        exact,
        defined,
    )


def mann_whitney(first, second) -> Estimate:
    """Two-sided Mann-Whitney U test of two independent samples (per-item mean ratings of
    two systems shown on different items). ``median_difference``: the difference of the
    medians; exact without ties up to ``EXACT_UP_TO`` values, else the normal approximation."""
    x = np.asarray(first, dtype=np.float64)
    y = np.asarray(second, dtype=np.float64)
    details: dict[str, Any] = {
        "median_difference": float(np.median(x) - np.median(y)),
        "alternative": "two-sided",
    }
    both = np.concatenate([x, y])
    if np.all(both == both[0]):
        return Estimate.undefined("no item differs", n=int(both.size), **details)
    statistic, p = mann_whitney_rows(x[None, :], y[None, :])
    details["statistic"] = float(statistic[0])
    details["method"] = _mann_whitney_method(both)
    return Estimate(float(p[0]), n=int(both.size), details=details)


def mann_whitney_rows(first, second) -> tuple[np.ndarray, np.ndarray]:
    """The statistic and two-sided p of ``mann_whitney`` for each row of two independent
    samples (studies × values per system), every row by its own method; NaN where every
    value of the row is equal (as ``wilcoxon_rows``)."""
    x = np.atleast_2d(np.asarray(first, dtype=np.float64))
    y = np.atleast_2d(np.asarray(second, dtype=np.float64))
    both = np.concatenate([x, y], axis=1)
    exact = np.array([_mann_whitney_method(row) == "exact" for row in both], dtype=bool)
    defined = np.any(both != both[:, :1], axis=1)
    return _by_method(
        lambda rows, method: _scipy_stats().mannwhitneyu(
            x[rows], y[rows], axis=1, alternative="two-sided", method=method
        ),
        exact,
        defined,
    )


def _mann_whitney_method(both: np.ndarray) -> str:
    """Exact without ties up to ``EXACT_UP_TO`` values, else the normal approximation."""
    return "exact" if both.size <= EXACT_UP_TO and np.unique(both).size == both.size else "asymptotic"


def _by_method(test, exact: np.ndarray, defined: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``test`` (a SciPy test over rows) run on the defined rows, the exact ones and the
    others apart; statistic and p, NaN on undefined rows."""
    statistic = np.full(exact.size, np.nan)
    p = np.full(exact.size, np.nan)
    for rows, method in ((defined & exact, "exact"), (defined & ~exact, "asymptotic")):
        if rows.any():
            result = test(rows, method)
            statistic[rows], p[rows] = result.statistic, result.pvalue
    return statistic, p


def _scipy_stats():
    from scipy import stats  # imported on use: see stats/__init__.py

    return stats


def system_comparisons(values, systems, sources, participants=None, units=None) -> list[PairComparison]:
    """Every unordered pair of (non-blank) systems, in sorted order (``system`` < ``over``),
    Holm-adjusted together. A pair with two cases or more rated for both is compared on
    them (paired); otherwise, given ``units`` (per answer, its item or case), on the two
    systems' items (unpaired). ``sources`` are codes (``stats.clustered.case_codes``: -1 for
    an item of no case) or labels ("" for none). Pairs that can be compared neither way are
    left out."""
    x = np.asarray(values, dtype=np.float64)
    source = np.asarray(sources)
    has_source = source >= 0 if source.dtype.kind in "iu" else source != ""
    usable = (np.asarray(systems) != "") & ~np.isnan(x)
    if not usable.any():
        return []
    x, source, has_source = x[usable], source[usable], has_source[usable]
    names, system = factorize(np.asarray(systems)[usable])  # codes: integer comparisons per pair
    person = None if participants is None else np.asarray(participants)[usable]
    unit = None if units is None else factorize(np.asarray(units)[usable])[1]
    codes = np.full(x.size, -1, dtype=np.int64)
    if has_source.any():
        codes[has_source] = factorize(source[has_source])[1]
    found = []
    for first, second in itertools.combinations(range(len(names)), 2):
        pair = _paired(x, system, codes, person, first, second)
        if pair is None and unit is not None:
            pair = _unpaired(x, system, unit, person, first, second)
        if pair is not None:
            found.append((str(names[first]), str(names[second]), *pair))
    return _holm_adjusted(found)


def _paired(x, system, codes, person, first, second) -> tuple | None:
    """The difference (fit, interval), the Wilcoxon test and the design of systems
    ``first`` and ``second`` (codes) on their shared cases; None with fewer than two."""
    mask = ((system == first) | (system == second)) & (codes >= 0)
    fitted = paired_difference(
        x[mask], system[mask] == first, codes[mask], None if person is None else person[mask]
    )
    if fitted is None:
        return None
    means = paired_by_source(codes[mask], system[mask], x[mask], first, second)
    return (fitted[0], fitted[1], wilcoxon_signed_rank(*means), "paired")


def _unpaired(x, system, unit, person, first, second) -> tuple | None:
    """The same on each system's own items: the difference of means clustered by item (and
    participant), the Mann-Whitney test on the per-item means."""
    mask = (system == first) | (system == second)
    side = system[mask] == first
    fitted = unpaired_difference(x[mask], side, unit[mask], None if person is None else person[mask])
    if fitted is None:
        return None
    means = [_unit_means(x[mask][chosen], unit[mask][chosen]) for chosen in (side, ~side)]
    return (fitted[0], fitted[1], mann_whitney(*means), "unpaired")


def _unit_means(values: np.ndarray, units: np.ndarray) -> np.ndarray:
    size = int(units.max()) + 1
    counts = np.bincount(units, minlength=size)
    sums = np.bincount(units, weights=values, minlength=size)
    present = counts > 0
    return sums[present] / counts[present]


def _holm_adjusted(found: list[tuple]) -> list[PairComparison]:
    """Holm over the pairs whose test is defined (an undefined test is no hypothesis tested)."""
    adjusted = holm_defined([pair[4] for pair in found])
    return [
        PairComparison(name, over, fit, interval, test, float("nan") if p is None else p, design)
        for (name, over, fit, interval, test, design), p in zip(found, adjusted, strict=True)
    ]


def wilcoxon_method(difference: np.ndarray) -> str:
    """The exact null distribution for small samples without ties, else the normal
    approximation; never SciPy's random permutations (a stored p-value must not jitter)."""
    nonzero = np.abs(difference[difference != 0])
    small = nonzero.size <= EXACT_UP_TO
    return "exact" if small and np.unique(nonzero).size == nonzero.size else "asymptotic"
