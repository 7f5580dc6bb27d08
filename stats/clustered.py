"""Means and differences between systems whose intervals respect the study's design.

Answers are not independent draws: every answer to one item shares that item's own
difficulty, and every answer of one participant shares that participant's leniency. An
interval that resamples answers one by one (``stats.bootstrap.mean_ci``) then behaves as
if the study had as many items as answers and covers 83-88% instead of 95% once items
differ (``docs/statistics.md``, "Intervals that respect items and participants").

The figures here are ordinary least-squares estimates (a mean is the intercept of
``y ~ 1``; a paired difference the slope of ``y ~ system`` within sources) with
**cluster-robust (sandwich) standard errors**: one-way by item, or two-way by item and
participant (Cameron, Gelbach & Miller 2011) when participants answer several items. The
small-sample correction is statsmodels' (CR1: ``G/(G-1) · (N-1)/(N-K)`` per clustering),
and so is the covariance: the unit tests check it against statsmodels'
``OLS.fit(cov_type="cluster")`` one and two ways. The interval uses Student's t with G − 1
degrees of freedom one way; two ways, Satterthwaite's for the sum of the one-way parts
(``Sandwich.df``) rather than statsmodels' min(G) − 1, which over-covers (0.99) when a
handful of participants carry little of the variance. The formula is written out here
(a few lines of numpy) because statsmodels (with pandas and patsy) is a development
dependency only: the web process computes reports with numpy and scipy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .bootstrap import CONFIDENCE, Interval
from .counting import count_distinct
from .groups import GroupMean, factorize, group_index

ITEMS = "cluster-robust t (items)"
ITEMS_AND_PARTICIPANTS = "cluster-robust t (items x participants)"
SOURCES = "cluster-robust t (sources)"
SOURCES_AND_PARTICIPANTS = "cluster-robust t (sources x participants)"


@dataclass(frozen=True)
class ClusteredFit:
    """One coefficient of a cluster-robust fit: estimate, standard error, the t degrees of
    freedom, and how many clusters of each kind it rests on."""

    estimate: float
    se: float
    df: float
    clusters: tuple[int, ...]

    def interval(self, method: str, confidence: float = CONFIDENCE) -> Interval:
        from scipy import stats  # imported on use: see stats/__init__.py

        half = float(stats.t.ppf(0.5 + confidence / 2.0, self.df)) * self.se
        return Interval(self.estimate - half, self.estimate + half, method)


@dataclass(frozen=True)
class Sandwich:
    """A cluster-robust fit: coefficients, covariance, and the one-way covariances it is
    made of with their numbers of clusters and signs (+V₁, +V₂, −V₁∩₂ for two ways)."""

    beta: np.ndarray
    covariance: np.ndarray
    parts: tuple[tuple[np.ndarray, int, int], ...]

    def df(self, index: int) -> float:
        """Degrees of freedom of coefficient ``index``'s t interval. One way: G − 1. Two
        ways: Satterthwaite's for a sum of variance components, each read as a χ² with its
        clusters − 1 degrees of freedom, kept between min(G) − 1 (statsmodels' choice,
        which is very conservative when one clustering has a handful of clusters that
        carry little of the variance: 4 participants give t₃) and max(G) − 1."""
        sizes = [size for _, size, _ in self.parts]
        if len(self.parts) == 1:
            return float(sizes[0] - 1)
        total = float(self.covariance[index, index])
        spread = sum(float(part[index, index]) ** 2 / (size - 1) for part, size, _ in self.parts)
        outer = sorted(sizes[:2])
        found = total**2 / spread if spread > 0 else float(outer[0] - 1)
        return float(min(max(found, outer[0] - 1), outer[1] - 1))


def cluster_robust_ols(y, design, groups: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, int]:
    """OLS coefficients of ``y`` on ``design`` (n × k), their cluster-robust covariance and
    statsmodels' t degrees of freedom (min(G) − 1), clustered one way (``groups`` of one
    code array) or two ways (two arrays: V = V₁ + V₂ − V₁∩₂, each with its own CR1
    correction, as statsmodels' ``cov_cluster_2groups``)."""
    fit = sandwich(y, design, groups)
    return fit.beta, fit.covariance, min(size for _, size, _ in fit.parts[:2]) - 1


def sandwich(y, design, groups: list[np.ndarray]) -> Sandwich:
    """``cluster_robust_ols`` with its parts. A two-way covariance that is not positive (it
    can be, with few clusters) falls back to the larger one-way covariance, as Cameron,
    Gelbach & Miller advise."""
    x = np.asarray(design, dtype=np.float64).reshape(len(y), -1)
    values = np.asarray(y, dtype=np.float64)
    bread = np.linalg.inv(x.T @ x)
    beta = bread @ (x.T @ values)
    scores = x * (values - x @ beta)[:, None]
    codes = [factorize(g)[1] for g in groups]
    sizes = [int(c.max()) + 1 for c in codes]
    if len(codes) == 2:
        both = factorize(codes[0].astype(np.int64) * sizes[1] + codes[1])[1]
        codes.append(both)
        sizes.append(int(both.max()) + 1)
    parts = tuple(
        (_one_way(bread, scores, c, size), size, -1 if k == 2 else 1)
        for k, (c, size) in enumerate(zip(codes, sizes, strict=True))
    )
    covariance = np.sum([sign * part for part, _, sign in parts], axis=0)
    if len(parts) == 3 and np.any(np.diag(covariance) <= 0):
        larger = max(parts[:2], key=lambda part: float(np.trace(part[0])))
        parts = (larger,)
        covariance = larger[0]
    return Sandwich(beta, covariance, parts)


def _one_way(bread: np.ndarray, scores: np.ndarray, codes: np.ndarray, size: int) -> np.ndarray:
    """The CR1 sandwich of one clustering: bread · Σ_g s_g s_gᵀ · bread, s_g the scores'
    sum within cluster g, scaled by G/(G-1) · (N-1)/(N-K)."""
    n, k = scores.shape
    sums = np.stack([np.bincount(codes, weights=scores[:, j], minlength=size) for j in range(k)], axis=1)
    correction = size / (size - 1) * (n - 1) / (n - k)
    return correction * bread @ (sums.T @ sums) @ bread


def crossed(items, participants) -> bool:
    """Whether participants cross items: at least two participants, and one of them
    answered two items or more (else participant effects are answer-level noise, which a
    one-way clustering by item already covers)."""
    if participants is None:
        return False
    person_labels, person = factorize(participants)
    if len(person_labels) < 2:
        return False
    unit = factorize(items)[1]
    # one pass, no sort: a participant crosses units when one of their answers is to
    # another unit than the last one written for them
    seen = np.empty(len(person_labels), dtype=unit.dtype)
    seen[person] = unit
    return bool(np.any(seen[person] != unit))


def clustered_mean(values, items, participants=None, *, confidence: float = CONFIDENCE) -> GroupMean | None:
    """The mean of the answers (NaN left out) with a cluster-robust t interval: by item, or
    by item and participant where participants cross items. Estimand: the expected answer
    over items (and participants) like the study's. No interval with fewer than two items
    (there is nothing to tell item effects from); None without answers."""
    x = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(x)
    x, item = x[keep], np.asarray(items)[keep]
    if x.size == 0:
        return None
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if x.size > 1 else math.nan
    if count_distinct(item) < 2:
        return GroupMean((), mean, sd, int(x.size), None)
    groups = [item]
    if participants is not None and crossed(item, person := np.asarray(participants)[keep]):
        groups.append(person)
    fit = _coefficient(x, np.ones((x.size, 1)), groups, 0)
    method = ITEMS_AND_PARTICIPANTS if len(groups) == 2 else ITEMS
    return GroupMean((), mean, sd, int(x.size), fit.interval(method, confidence))


def paired_difference(
    values, first, sources, participants=None, *, confidence: float = CONFIDENCE
) -> tuple[ClusteredFit, Interval] | None:
    """The difference first − second within sources, with a cluster-robust t interval.

    ``first`` marks the answers of the first system (the others are the second's); only
    sources answered for both count. The answers and the indicator are centred within each
    source (source fixed effects), so every source is compared with itself; the slope is
    then a weighted mean of the per-source differences (weights nₐn_b/(nₐ+n_b), equal
    weights when every source has as many answers per system). Clustered by source, and by
    participant where participants cross sources. None with fewer than two such sources.
    """
    x = np.asarray(values, dtype=np.float64)
    side = np.asarray(first, dtype=bool)
    source = factorize(np.asarray(sources))[1]
    keep = ~np.isnan(x)
    x, side, source = x[keep], side[keep], source[keep]
    size = int(source.max()) + 1 if source.size else 0
    has_first = np.bincount(source[side], minlength=size) > 0
    has_second = np.bincount(source[~side], minlength=size) > 0
    both = (has_first & has_second)[source]
    if count_distinct(source[both]) < 2:
        return None
    x, side, source = x[both], side[both].astype(np.float64), source[both]
    centred_x, centred_side = _centred(x, source), _centred(side, source)
    groups = [source]
    if participants is not None and crossed(source, person := np.asarray(participants)[keep][both]):
        groups.append(person)
    fit = _coefficient(centred_x, centred_side[:, None], groups, 0)
    method = SOURCES_AND_PARTICIPANTS if len(groups) == 2 else SOURCES
    return fit, fit.interval(method, confidence)


def unpaired_difference(
    values, first, units, participants=None, *, confidence: float = CONFIDENCE
) -> tuple[ClusteredFit, Interval] | None:
    """The difference of the means of two systems shown on different units (no case in
    common): the slope of ``y ~ 1 + first`` with a cluster-robust t interval by unit, and by
    participant where participants cross units. None unless each system has two units."""
    x = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(x)
    x, side, unit = x[keep], np.asarray(first, dtype=bool)[keep], np.asarray(units)[keep]
    if count_distinct(unit[side]) < 2 or count_distinct(unit[~side]) < 2:
        return None
    design = np.column_stack([np.ones(x.size), side.astype(np.float64)])
    groups = [unit]
    if participants is not None and crossed(unit, person := np.asarray(participants)[keep]):
        groups.append(person)
    fit = _coefficient(x, design, groups, 1)
    method = ITEMS_AND_PARTICIPANTS if len(groups) == 2 else ITEMS
    return fit, fit.interval(method, confidence)


def _centred(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    size = int(codes.max()) + 1
    sums = np.bincount(codes, weights=values, minlength=size)
    return values - (sums / np.bincount(codes, minlength=size))[codes]


def _coefficient(y: np.ndarray, design: np.ndarray, groups: list[np.ndarray], index: int) -> ClusteredFit:
    fit = sandwich(y, design, groups)
    se = math.sqrt(max(float(fit.covariance[index, index]), 0.0))
    clusters = tuple(count_distinct(g) for g in groups)
    return ClusteredFit(float(fit.beta[index]), se, fit.df(index), clusters)


def clustered_group_means(values, keys, units, participants=None) -> list[GroupMean]:
    """``clustered_mean`` for every distinct value of ``keys`` (a system per answer), in
    sorted order, each ``GroupMean.key`` the one-value tuple ``grouped_means`` would give.
    ``units``: per answer, what its answers share an effect with (the item, or the source
    when several items show one source)."""
    x = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(x)
    tuples, index = group_index(np.asarray(keys)[keep])
    unit = np.asarray(units)[keep]
    person = None if participants is None else np.asarray(participants)[keep]
    out = []
    for code, key in enumerate(tuples):
        mask = index == code
        found = clustered_mean(x[keep][mask], unit[mask], None if person is None else person[mask])
        if found is not None:
            out.append(GroupMean(key, found.mean, found.sd, found.n, found.ci))
    return out


def case_codes(sources) -> np.ndarray:
    """Each row's case (``provenance.source_id``) as a code from 0, -1 where it has none:
    computed once per item (a study's few thousand texts), then read per answer."""
    labels, codes = factorize(np.asarray(sources, dtype=object))
    blank = np.flatnonzero(labels == "")
    if blank.size == 0:
        return codes.astype(np.int64)
    shifted = codes.astype(np.int64)
    shifted[codes == blank[0]] = -1
    shifted[codes > blank[0]] -= 1
    return shifted


def design_units(cases, items) -> np.ndarray:
    """The unit answers cluster in, as codes: the case (``case_codes``) where the item has
    one, since the items of one case share its text and so its effect, else the item
    itself."""
    case = np.asarray(cases, dtype=np.int64)
    item = np.asarray(items, dtype=np.int64)
    return np.where(case >= 0, case, int(case.max(initial=-1)) + 1 + item)
