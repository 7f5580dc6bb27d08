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
small-sample correction is statsmodels' (CR1: ``G/(G-1) · (N-1)/(N-K)`` per clustering)
and the interval uses Student's t with ``G-1`` degrees of freedom for the smaller
clustering, as statsmodels' ``OLS.fit(cov_type="cluster", use_t=True)`` does; the unit
tests check every figure against statsmodels itself. The formula is written out here
(a few lines of numpy) because statsmodels (with pandas and patsy) is a development
dependency only: the web process computes reports with numpy and scipy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .bootstrap import CONFIDENCE, Interval
from .counting import count_distinct
from .groups import GroupMean, factorize

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
    df: int
    clusters: tuple[int, ...]

    def interval(self, method: str, confidence: float = CONFIDENCE) -> Interval:
        from scipy import stats  # imported on use: see stats/__init__.py

        half = float(stats.t.ppf(0.5 + confidence / 2.0, self.df)) * self.se
        return Interval(self.estimate - half, self.estimate + half, method)


def cluster_robust_ols(y, design, groups: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, int]:
    """OLS coefficients of ``y`` on ``design`` (n × k), their cluster-robust covariance and
    the t degrees of freedom, clustered one way (``groups`` of one code array) or two ways
    (two arrays: V = V₁ + V₂ − V₁∩₂, each with its own CR1 correction, as statsmodels'
    ``cov_cluster_2groups``). A two-way covariance that is not positive (it can be, with
    few clusters) falls back to the larger one-way covariance, Cameron et al.'s advice."""
    x = np.asarray(design, dtype=np.float64).reshape(len(y), -1)
    values = np.asarray(y, dtype=np.float64)
    bread = np.linalg.inv(x.T @ x)
    beta = bread @ (x.T @ values)
    scores = x * (values - x @ beta)[:, None]
    codes = [factorize(g)[1] for g in groups]
    sizes = tuple(int(c.max()) + 1 for c in codes)
    if len(codes) == 1:
        covariance = _one_way(bread, scores, codes[0], sizes[0])
    else:
        both = factorize(codes[0].astype(np.int64) * sizes[1] + codes[1])[1]
        ways = [_one_way(bread, scores, c, s) for c, s in zip(codes, sizes, strict=True)]
        covariance = ways[0] + ways[1] - _one_way(bread, scores, both, int(both.max()) + 1)
        if np.any(np.diag(covariance) <= 0):
            covariance = max(ways, key=lambda way: float(np.trace(way)))
    return beta, covariance, min(sizes) - 1


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
    person = np.asarray(participants)
    if count_distinct(person) < 2:
        return False
    pairs = np.unique(np.stack([factorize(person)[1], factorize(items)[1]]), axis=1)
    return bool(pairs.shape[1] > count_distinct(person))


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
    person = None if participants is None else np.asarray(participants)[keep]
    groups = [item, person] if crossed(item, person) else [item]
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
    person = None if participants is None else np.asarray(participants)[keep][both]
    groups = [source, person] if crossed(source, person) else [source]
    fit = _coefficient(centred_x, centred_side[:, None], groups, 0)
    method = SOURCES_AND_PARTICIPANTS if len(groups) == 2 else SOURCES
    return fit, fit.interval(method, confidence)


def _centred(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    size = int(codes.max()) + 1
    sums = np.bincount(codes, weights=values, minlength=size)
    return values - (sums / np.bincount(codes, minlength=size))[codes]


def _coefficient(y: np.ndarray, design: np.ndarray, groups: list[np.ndarray], index: int) -> ClusteredFit:
    beta, covariance, df = cluster_robust_ols(y, design, groups)
    se = math.sqrt(max(float(covariance[index, index]), 0.0))
    clusters = tuple(count_distinct(g) for g in groups)
    return ClusteredFit(float(beta[index]), se, df, clusters)


def clustered_group_means(values, keys, units, participants=None) -> list[GroupMean]:
    """``clustered_mean`` for every distinct value of ``keys`` (a system per answer), in
    sorted order, each ``GroupMean.key`` the one-value tuple ``grouped_means`` would give.
    ``units``: per answer, what its answers share an effect with (the item, or the source
    when several items show one source)."""
    from .groups import group_index

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


def design_units(sources, items) -> np.ndarray:
    """The unit answers cluster in, as codes: the source (``provenance.source_id``) where
    the item has one, since the items of one source share its text and so its effect, else
    the item itself."""
    labels, codes = factorize(np.asarray(sources, dtype=object))
    blank = labels == ""
    has_source = ~blank[codes] if blank.any() else np.ones(len(codes), dtype=bool)
    item = np.asarray(items, dtype=np.int64)
    return np.where(has_source, codes, len(labels) + item)
