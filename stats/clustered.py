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

from .bootstrap import CONFIDENCE, Interval, seed_for
from .counting import count_distinct
from .estimate import Estimate
from .groups import GroupMean, factorize, group_index

ITEMS = "cluster-robust t (items)"
ITEMS_AND_PARTICIPANTS = "cluster-robust t (items x participants)"
SOURCES = "cluster-robust t (sources)"
SOURCES_AND_PARTICIPANTS = "cluster-robust t (sources x participants)"
# A bounded figure (a share) whose every answer sits on one bound: no spread to estimate, so
# the interval is Clopper-Pearson's for "0 of G" (or "G of G") units.
SIGN_OVER_UNITS = "sign test over units (every comparison one way)"
WALD = "cluster-robust Wald (items), Hotelling F"
WALD_PERMUTATION = "cluster-robust Wald (items), permutation p"
# Up to this many units, ``independence_test`` takes its p from relabellings of the systems
# (``_permutation_p``); beyond, from Hotelling's F, which holds its level there
# (``docs/statistics.md``). Cost rule: PERMUTATIONS relabellings, each costing q₀·(G + q₀²)
# (its scores and the eigen-decomposition of its covariance, q₀ differences), fewer where
# they would pass PERMUTATION_WORK, never under MIN_PERMUTATIONS: 999 up to q₀ = 30 at
# 100 units (six systems, seven options), about 10 ms a test for four systems and three.
PERMUTATION_UNITS = 100
PERMUTATIONS = 999
MIN_PERMUTATIONS = 199
PERMUTATION_WORK = 30_000_000
AT_BOUND = "Clopper-Pearson over units (every answer at the bound)"


@dataclass(frozen=True)
class ClusteredFit:
    """One coefficient of a cluster-robust fit: estimate, standard error, the t degrees of
    freedom, and how many clusters of each kind it rests on."""

    estimate: float
    se: float
    df: float
    clusters: tuple[int, ...]

    def interval(self, method: str, confidence: float = CONFIDENCE) -> Interval:
        half = float(t_quantile(confidence, self.df)) * self.se
        return Interval(self.estimate - half, self.estimate + half, method)


@dataclass(frozen=True)
class Sandwich:
    """A cluster-robust fit: coefficients, covariance, and the one-way covariances it is
    made of with their numbers of clusters and signs (+V₁, +V₂, −V₁∩₂ for two ways)."""

    beta: np.ndarray
    covariance: np.ndarray
    parts: tuple[tuple[np.ndarray, int, int], ...]

    def df(self, index: int) -> float:
        """Degrees of freedom of coefficient ``index``'s t interval (``dfs``)."""
        return float(self.dfs(np.eye(len(self.beta))[index : index + 1])[0])

    def dfs(self, contrasts: np.ndarray) -> np.ndarray:
        """Degrees of freedom of the t interval of each row c of ``contrasts`` (c·β). One
        way: G − 1. Two ways: Satterthwaite's for a sum of variance components, each read as
        a χ² with its clusters − 1 degrees of freedom, kept between min(G) − 1 (statsmodels'
        choice, which is very conservative when one clustering has a handful of clusters
        that carry little of the variance: 4 participants give t₃) and max(G) − 1."""
        rows = np.atleast_2d(np.asarray(contrasts, dtype=np.float64))
        if len(self.parts) == 1:
            return np.full(rows.shape[0], float(self.parts[0][1] - 1))
        total = np.einsum("ij,jk,ik->i", rows, self.covariance, rows)
        variances = [(np.einsum("ij,jk,ik->i", rows, part, rows), size) for part, size, _ in self.parts]
        return _satterthwaite(total, variances)


def t_quantile(level: float, df):
    """The two-sided Student-t quantile on ``df`` degrees of freedom (a number or an array;
    at least 1): the multiplier of every t interval here and in ``stats.bradley_terry``.
    ``scipy.stats.t.ppf``'s own function, ``stdtrit``, from ``scipy.special``: ``scipy.stats``
    costs about 0.4 CPU seconds more to import, which each process that computes a study's
    reports (each Celery worker's pool process) paid for this quantile alone (as
    ``stats.reliability._f_sf``). Imported on use: see stats/__init__.py."""
    from scipy.special import stdtrit

    return stdtrit(np.maximum(df, 1.0), 0.5 + level / 2)


def combined(beta: np.ndarray, parts, checked: np.ndarray | None = None) -> Sandwich:
    """The covariance made of one-way CR1 covariances ``parts`` ((covariance, clusters,
    sign): one, or +V₁, +V₂, −V₁∩₂ for two ways): their sum. When a variance of the
    ``checked`` contrasts (rows; default the coefficients themselves) is not positive, which
    two ways can be with few clusters, the larger one-way covariance (by trace) instead, as
    Cameron, Gelbach & Miller advise. The rule of every two-way sandwich here: OLS
    (``sandwich``) and Bradley-Terry (``stats.bradley_terry``)."""
    parts = tuple(parts)
    covariance = np.sum([sign * part for part, _, sign in parts], axis=0)
    if len(parts) == 3:
        rows = np.eye(len(beta)) if checked is None else np.atleast_2d(checked)
        if np.any(np.einsum("ij,jk,ik->i", rows, covariance, rows) <= 0):
            larger = max(parts[:2], key=lambda part: float(np.trace(part[0])))
            parts, covariance = (larger,), larger[0]
    return Sandwich(beta, covariance, parts)


def sandwich(y, design, groups: list[np.ndarray], cells: np.ndarray | None = None) -> Sandwich:
    """OLS coefficients of ``y`` on ``design`` (n × k) and their cluster-robust covariance
    with its parts, clustered one way (``groups`` of one code array) or two ways (two
    arrays: V = V₁ + V₂ − V₁∩₂, each with its own CR1 correction, as statsmodels'
    ``cov_cluster_2groups``). A two-way covariance that is not positive (it
    can be, with few clusters) falls back to the larger one-way covariance, as Cameron,
    Gelbach & Miller advise. ``cells``: the two groups' intersection as codes
    (``unit_cells``), when the caller has it (finding it sorts the answers)."""
    x = np.asarray(design, dtype=np.float64).reshape(len(y), -1)
    values = np.asarray(y, dtype=np.float64)
    bread = np.linalg.inv(x.T @ x)
    beta = bread @ (x.T @ values)
    scores = x * (values - x @ beta)[:, None]
    codes = [factorize(g)[1] for g in groups]
    sizes = [int(c.max()) + 1 for c in codes]
    if len(codes) == 2:
        pairs = cells if cells is not None else codes[0].astype(np.int64) * sizes[1] + codes[1]
        both = factorize(pairs)[1]
        codes.append(both)
        sizes.append(int(both.max()) + 1)
    parts = (
        (_one_way(bread, scores, c, size), size, -1 if k == 2 else 1)
        for k, (c, size) in enumerate(zip(codes, sizes, strict=True))
    )
    return combined(beta, parts)


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


def unit_cells(units, participants) -> np.ndarray:
    """Each answer's (unit, participant) cell as a code: the intersection a two-way
    clustering subtracts. Computed once for a study's answers and passed on (``cells=``),
    since finding it sorts them: a grouping of a million answers by a dozen keys would
    otherwise sort them a dozen times."""
    unit = factorize(np.asarray(units))[1].astype(np.int64)
    person = factorize(np.asarray(participants))[1]
    return factorize(unit * (int(person.max(initial=0)) + 1) + person)[1]


def clustered_mean(
    values,
    items,
    participants=None,
    *,
    bounds: tuple[float, float] | None = None,
    confidence: float = CONFIDENCE,
    cells: np.ndarray | None = None,
) -> GroupMean | None:
    """The mean of the answers (NaN left out) with a cluster-robust t interval: by item, or
    by item and participant where participants cross items. Estimand: the expected answer
    over items (and participants) like the study's. No interval with fewer than two items
    (there is nothing to tell item effects from); None without answers.

    ``bounds``: the figure's possible range (a share: (0, 1)). The t interval is then clipped
    to it (``ci_method`` says so when a bound was cut), and when every answer sits on one
    bound (no item varied, the sandwich is 0) the interval is Clopper-Pearson's for 0 of G
    (or G of G) units, scaled to the range: the items are the effective sample, not the
    answers. ``cells``: ``unit_cells(items, participants)``, if the caller has it.

    The figures are ``sandwich``'s for the intercept of ``y ~ 1`` (CR1, two ways as
    Cameron, Gelbach & Miller, ``Sandwich.df``), computed from sums per cluster
    (``_mean_fits``) so that many groups cost a few passes over the answers."""
    x = np.asarray(values, dtype=np.float64)
    found = _mean_fits(x, np.zeros(x.size, dtype=np.intp), 1, items, participants, cells, bounds, confidence)
    return found[0]


def _mean_fits(
    x: np.ndarray,
    index: np.ndarray,
    size: int,
    units,
    participants,
    cells,
    bounds: tuple[float, float] | None,
    confidence: float,
) -> list[GroupMean | None]:
    """``clustered_mean`` of every group (``index``: each answer's group code, ``size``
    groups), from per-cluster sums: Σ_g (Σ_{i∈g} e_i)² per group and clustering, e the
    answers' deviations from their group's mean; the two-way covariance V_unit +
    V_participant − V_cell and its fall-back and degrees of freedom as ``sandwich`` and
    ``Sandwich.df`` compute them for one group."""
    keep = ~np.isnan(x)
    every = bool(keep.all())
    x = x if every else x[keep]
    group = index if every else index[keep]
    unit = factorize(np.asarray(units) if every else np.asarray(units)[keep])[1]
    person = cell = None
    if participants is not None:
        person = factorize(np.asarray(participants) if every else np.asarray(participants)[keep])[1]
        given = None if cells is None else (np.asarray(cells) if every else np.asarray(cells)[keep])
        cell = unit_cells(unit, person) if given is None else factorize(given)[1]
    n = np.bincount(group, minlength=size).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=x, minlength=size) / n
        residual = x - mean[group]
        sd = np.sqrt(np.bincount(group, weights=residual**2, minlength=size) / (n - 1))
        squares_u, clusters_u = _cluster_squares(unit, group, size, residual)
        v_unit = clusters_u / (clusters_u - 1) * squares_u / n**2
        if person is not None and cell is not None:
            squares_p, clusters_p = _cluster_squares(person, group, size, residual)
            squares_c, clusters_c = _cluster_squares(cell, group, size, residual)
            v_person = clusters_p / (clusters_p - 1) * squares_p / n**2
            v_cell = clusters_c / (clusters_c - 1) * squares_c / n**2
    out: list[GroupMean | None] = []
    for k in range(size):
        if n[k] == 0:
            out.append(None)
            continue
        sd_k = float(sd[k]) if n[k] > 1 else math.nan
        g_unit = int(clusters_u[k])
        if g_unit < 2:
            out.append(GroupMean((), float(mean[k]), sd_k, int(n[k]), None))
            continue
        if (
            bounds is not None
            and (at := _group_at_bound(x, group, k, n[k], float(mean[k]), bounds)) is not None
        ):
            interval = _clopper_pearson_none(at, bounds, g_unit, confidence)
            out.append(GroupMean((), float(mean[k]), sd_k, int(n[k]), interval))
            continue
        variance, df, method = float(v_unit[k]), float(g_unit - 1), ITEMS
        if person is not None and clusters_p[k] >= 2 and clusters_c[k] > clusters_p[k]:  # crossed
            method = ITEMS_AND_PARTICIPANTS
            g_person, g_cell = int(clusters_p[k]), int(clusters_c[k])
            parts = ((float(v_unit[k]), g_unit), (float(v_person[k]), g_person), (float(v_cell[k]), g_cell))
            variance = parts[0][0] + parts[1][0] - parts[2][0]
            if variance <= 0:  # the larger one-way covariance, as ``sandwich``
                variance, larger = max(parts[:2])
                df = float(larger - 1)
            else:
                df = float(_satterthwaite(variance, parts))
        half = float(t_quantile(confidence, df)) * math.sqrt(max(variance, 0.0))
        interval = Interval(float(mean[k]) - half, float(mean[k]) + half, method)
        if bounds is not None:
            interval = clipped(interval, bounds)
        out.append(GroupMean((), float(mean[k]), sd_k, int(n[k]), interval))
    return out


def _satterthwaite(total, parts):
    """``Sandwich.dfs``'s rule (element-wise on arrays): Satterthwaite's degrees of freedom
    of the sum ``total`` of the one-way parts (variance, clusters), kept between min(G) − 1
    and max(G) − 1 of the two clusterings."""
    spread = sum(np.asarray(variance) ** 2 / (clusters - 1) for variance, clusters in parts)
    outer = sorted(clusters for _, clusters in parts[:2])
    with np.errstate(divide="ignore", invalid="ignore"):
        found = np.where(spread > 0, np.asarray(total) ** 2 / spread, float(outer[0] - 1))
    return np.clip(found, outer[0] - 1, outer[1] - 1).astype(np.float64)


# Largest groups × clusters table of sums built at once.
MAX_GROUP_CLUSTERS = 1 << 22


def _cluster_squares(
    codes: np.ndarray, group: np.ndarray, size: int, residual: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per group: Σ over its clusters of (the residuals' sum in the cluster)², and how many
    clusters it has. When every cluster lies in one group (items in a generator, single
    answers, one group), sums per cluster; else one table of groups × clusters when it is
    small; else the (group, cluster) pairs are factorised (a sort)."""
    clusters = int(codes.max(initial=-1)) + 1
    count = np.bincount(codes, minlength=clusters)
    owners = np.bincount(codes, weights=group, minlength=clusters) if size > 1 else np.zeros(clusters)
    if size == 1 or np.array_equal(owners[codes], group * count[codes]):  # every cluster in one group
        present = count > 0
        owner = (owners[present] / count[present]).astype(np.intp)
        sums = np.bincount(codes, weights=residual, minlength=clusters)[present]
        return np.bincount(owner, weights=sums**2, minlength=size), np.bincount(owner, minlength=size)
    if size * clusters <= MAX_GROUP_CLUSTERS:
        key = group * clusters + codes
        table = np.bincount(key, weights=residual, minlength=size * clusters).reshape(size, clusters)
        counts = np.bincount(key, minlength=size * clusters).reshape(size, clusters)
        return (table**2).sum(axis=1), (counts > 0).sum(axis=1)
    pairs = factorize(group.astype(np.int64) * clusters + codes)[1]
    sums = np.bincount(pairs, weights=residual)
    owner = np.zeros(sums.size, dtype=np.intp)
    owner[pairs] = group
    return np.bincount(owner, weights=sums**2, minlength=size), np.bincount(owner, minlength=size)


def _group_at_bound(
    x: np.ndarray, group: np.ndarray, k: int, n: float, mean: float, bounds: tuple[float, float]
) -> float | None:
    """The bound every answer of group ``k`` equals, else None (its mean tells first)."""
    for bound in bounds:
        if mean == bound and bool(np.all(x[group == k] == bound)):
            return bound
    return None


def clipped(interval: Interval, bounds: tuple[float, float]) -> Interval:
    """``interval`` cut to the possible range, its method saying so when a bound was cut."""
    low, high = max(interval.low, bounds[0]), min(interval.high, bounds[1])
    if (low, high) == (interval.low, interval.high):
        return interval
    return Interval(low, high, f"{interval.method}, clipped to [{bounds[0]:g}, {bounds[1]:g}]")


def _clopper_pearson_none(at: float, bounds: tuple[float, float], units: int, confidence: float) -> Interval:
    """Clopper-Pearson's two-sided interval for 0 successes in ``units`` trials (1 − (α/2)^(1/G)
    from the bound), scaled to ``bounds`` and pointing away from the bound ``at``."""
    reach = (1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / units)) * (bounds[1] - bounds[0])
    if at == bounds[0]:
        return Interval(at, at + reach, AT_BOUND)
    return Interval(at - reach, at, AT_BOUND)


def share_test(values, null: float, units, participants=None) -> Estimate:
    """Two-sided test that the mean of 0/1 ``values`` is ``null`` (a win rate of 0.5), with
    the cluster-robust t of ``clustered_mean`` (by unit, and by participant where they cross
    units; t with its degrees of freedom; two ways, the variance is at least either one-way
    variance, ``_coefficient``'s ``floor``). Where every value is equal (the sandwich is 0:
    one side won every comparison) the sign test over units: each of the G units went the
    same way, p = 2 · 0.5^G. Undefined with fewer than two units (nothing tells a unit's
    own effect from the systems'). ``details``: ``statistic`` (t), ``df``, ``units``,
    ``method``."""
    from scipy import stats  # imported on use: see stats/__init__.py

    x = np.asarray(values, dtype=np.float64)
    unit = np.asarray(units)
    size = count_distinct(unit)
    if size < 2:
        return Estimate.undefined("needs comparisons on two or more items", n=int(x.size))
    if bool(np.all(x == x[0])):
        p = min(1.0, 2.0 * 0.5**size)
        return Estimate(p, n=int(x.size), details={"units": size, "method": SIGN_OVER_UNITS})
    groups = [unit]
    if participants is not None and crossed(unit, person := np.asarray(participants)):
        groups.append(person)
    fit = _coefficient(x - null, np.ones((x.size, 1)), groups, 0, floor=True)
    t = fit.estimate / fit.se
    p = float(2.0 * stats.t.sf(abs(t), fit.df))
    method = ITEMS_AND_PARTICIPANTS if len(groups) == 2 else ITEMS
    details = {"statistic": float(t), "df": fit.df, "units": size, "method": method}
    return Estimate(p, n=int(x.size), details=details)


def independence_test(answers, systems, units) -> Estimate:
    """Does the answer depend on the system? A cluster-robust Wald test that every option's
    share is the same for every system, in place of Pearson's chi-square (which counts
    answers as independent and so rejects far too often when items differ).

    The C options' indicators (all but the last) are regressed on the systems (intercept and
    S − 1 system dummies) together: the C − 1 equations are stacked, with every answer's
    rows in its unit's cluster, so ``sandwich`` gives the joint cluster-robust covariance of
    the q₀ = (S − 1)(C − 1) differences from the first system (the covariance of statsmodels'
    OLS with ``cov_type="cluster"`` on the stacked data). W = bᵀV⁺b (V⁺: pseudo-inverse; q =
    the rank of V: directions along which no unit varied are not tested).

    The p-value, with G units: up to ``PERMUTATION_UNITS`` units, a permutation p
    (``_permutation_p``: the systems relabelled across units, within the unit where a unit
    holds several systems); beyond, Hotelling's F: CR1's factor G/(G − 1) replaced by
    G/(G − S) (the S system means use S of the units' degrees of freedom, ν = G − S), F =
    W·(ν − q + 1)/(q·ν) on (q, ν − q + 1) degrees of freedom. With few units the F reference
    over-rejects (four equal systems with 10 items each: 8-10% of null studies), and so does
    a leverage (CR2) correction with moment-matched (Hotelling-T²-Z) degrees of freedom
    (7%); the permutation p keeps 5% (``bench/coverage_shares.py``, ``docs/statistics.md``).

    Clustered by unit only: a second clustering by participant rests on the few
    participants who answer many items, and a Wald test of several differences on that
    covariance rejected 44% of null studies with four participants; participants assigned at
    random to systems move every system's shares alike, which mostly cancels in the
    differences. Undefined with fewer than two systems or answers, or with too few units
    (ν − q + 1 < 1).

    ``details``: ``statistic`` (F), ``dof`` ([q, ν − q + 1]), ``wald`` (W, CR1 as
    statsmodels), ``units``, ``method`` (``WALD`` or ``WALD_PERMUTATION``, then also
    ``permutations``), and the ``table`` of counts with its ``rows`` (systems) and
    ``columns`` (answers)."""
    from scipy import stats  # imported on use: see stats/__init__.py

    system_labels, system = factorize(np.asarray(systems))
    option_labels, option = factorize(np.asarray(answers))
    unit = np.asarray(units)
    n, k, c = len(system), len(system_labels), len(option_labels)
    if k < 2 or c < 2:
        return Estimate.undefined("needs two or more systems and two or more answers", n=n)
    table = np.bincount(system * c + option, minlength=k * c).reshape(k, c)
    described = {
        "rows": [str(v) for v in system_labels],
        "columns": [str(v) for v in option_labels],
        "table": table.tolist(),
    }
    cells = _cells(system, option, k, c, factorize(unit)[1])
    beta, covariance = _stacked_differences(cells, cells.system[None, :])
    walds, ranks = _walds(beta, covariance)
    size = cells.units
    nu = size - k
    if ranks[0] == 0 or nu - ranks[0] + 1 < 1:
        return Estimate.undefined("too few items for the differences it tests", n=n, **described)
    wald, q = float(walds[0]), int(ranks[0])
    statistic = wald * (nu / (size - 1)) * (nu - q + 1) / (q * nu)
    details = {"statistic": statistic, "dof": [q, nu - q + 1], "wald": wald, "units": size, "method": WALD}
    if size <= PERMUTATION_UNITS:
        each = beta.shape[1] * (size + beta.shape[1] ** 2)
        draws = max(MIN_PERMUTATIONS, min(PERMUTATIONS, PERMUTATION_WORK // each))
        p = _permutation_p(cells, wald, draws, seed_for("independence_test", table.tolist()))
        details.update(method=WALD_PERMUTATION, permutations=draws)
    else:
        p = float(stats.f.sf(statistic, q, nu - q + 1))
    return Estimate(p, n=n, details={**details, **described})


@dataclass(frozen=True)
class _Cells:
    """A choice question's answers counted per cell (a unit's answers for one system): the
    cell's unit, system, number of answers and count of each option but the last."""

    unit: np.ndarray
    system: np.ndarray
    size: np.ndarray
    counts: np.ndarray
    units: int
    systems: int


def _cells(system: np.ndarray, option: np.ndarray, k: int, c: int, unit: np.ndarray) -> _Cells:
    labels, cell = factorize(unit.astype(np.int64) * k + system)
    size = np.bincount(cell, minlength=len(labels))
    counts = np.bincount(cell * c + option, minlength=len(labels) * c).reshape(len(labels), c)[:, :-1]
    return _Cells(
        labels // k, labels % k, size.astype(np.float64), counts.astype(np.float64), int(unit.max()) + 1, k
    )


def _stacked_differences(cells: _Cells, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``labels`` (a system per cell: the observed labels, or relabellings),
    the differences p̂(option e | system s) − p̂(e | system 0), s ≥ 1, e < C − 1, and their
    cluster-robust covariance: ``sandwich`` of the stacked regression of the option
    indicators on intercept and system dummies (CR1 with N = n(C − 1), K = S(C − 1)), written
    for its dummies so that the n(C − 1) × S(C − 1) design is never built (a million answers
    would make it hundreds of megabytes): with dummies, a coefficient's score in a unit is
    the sum of its cells' residuals over their system's count, (1[s]/n_s − 1[0]/n_0)·r.
    Shapes: (B, q₀) and (B, q₀, q₀), B the rows of ``labels``."""
    rows_b, k = labels.shape[0], cells.systems
    flat = labels + k * np.arange(rows_b)[:, None]
    per_system = np.bincount(flat.ravel(), weights=np.tile(cells.size, rows_b), minlength=rows_b * k)
    inverse = (1.0 / per_system)[flat]
    one_cell_each = cells.unit.size == cells.units  # no unit holds two systems: a cell is a unit
    owner = (cells.unit + cells.units * np.arange(rows_b)[:, None]).ravel()
    columns, beta = [], []
    for e in range(cells.counts.shape[1]):
        counts = cells.counts[:, e]
        shares = np.bincount(flat.ravel(), weights=np.tile(counts, rows_b), minlength=rows_b * k) / per_system
        scaled = (counts - cells.size * shares[flat]) * inverse
        first = np.where(labels == 0, scaled, 0.0)
        for s in range(1, k):
            weight = np.where(labels == s, scaled, 0.0) - first
            if not one_cell_each:
                weight = np.bincount(owner, weights=weight.ravel(), minlength=rows_b * cells.units)
            columns.append(weight.reshape(rows_b, -1))
            beta.append(shares.reshape(rows_b, k)[:, s] - shares.reshape(rows_b, k)[:, 0])
    scores = np.stack(columns, axis=2)
    rows, coefficients = cells.size.sum() * cells.counts.shape[1], k * cells.counts.shape[1]
    clusters = cells.units
    correction = clusters / (clusters - 1) * (rows - 1) / (rows - coefficients)
    return np.stack(beta, axis=1), correction * (np.swapaxes(scores, 1, 2) @ scores)


def _walds(beta: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """bᵀV⁺b and the rank of V (eigenvalues above 1e-10 of the largest) for each row; 0 and
    0 where V is 0."""
    values, vectors = np.linalg.eigh((covariance + np.swapaxes(covariance, 1, 2)) / 2.0)
    top = values.max(axis=1, keepdims=True)
    kept = (values > 1e-10 * top) & (top > 0)
    projected = (np.swapaxes(vectors, 1, 2) @ beta[:, :, None])[:, :, 0]
    terms = np.where(kept, projected**2 / np.where(kept, values, 1.0), 0.0)
    return terms.sum(axis=1), kept.sum(axis=1)


def _permutation_p(cells: _Cells, wald: float, draws: int, seed: int) -> float:
    """The share of ``draws`` random relabellings of the systems whose Wald statistic is at
    least the observed one, the observed labelling counted among them: (1 + #)/(1 + B).

    Relabelled: the systems of the units that hold one system are shuffled across those
    units; the systems of a unit that holds several (a case shown with several systems,
    ``provenance.source_id``) are shuffled within it. Under the null that a unit's answers
    do not depend on its system, every relabelling is as likely as the observed one, so
    P(p ≤ α) ≤ α whatever the number of units, the items' spread or the answers per unit.
    Ties count against rejecting: with a yes/no answer and few answers per unit, W takes few
    values and the test is conservative (a multi's three options, two systems of 10 or 50
    items: some option "p < 0.05" in 1-4% of null studies instead of 5%). Counting ties as
    half (the mid-p) can reject more often than α in the smallest designs (six paired
    cases: up to 4 of 64 relabellings). W is studentised, which keeps the level
    approximately where systems differ in spread but not in shares (a permutation test of an
    unstudentised difference would not)."""
    rng = np.random.default_rng(seed)
    holds = np.bincount(cells.unit, minlength=cells.units)[cells.unit]
    block = np.where(holds > 1, cells.unit, -1)
    order = np.argsort(block, kind="stable")
    shuffled = np.argsort(block[order][None, :] + rng.random((draws, order.size)), axis=1)
    labels = np.empty((draws, order.size), dtype=np.intp)
    np.put_along_axis(labels, order[shuffled], np.broadcast_to(cells.system[order], labels.shape), axis=1)
    walds, _ = _walds(*_stacked_differences(cells, labels))
    exceed = int(np.sum(walds >= wald * (1.0 - 1e-9)))
    return (1 + exceed) / (1 + draws)


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


def _coefficient(
    y: np.ndarray,
    design: np.ndarray,
    groups: list[np.ndarray],
    index: int,
    *,
    floor: bool = False,
    cells: np.ndarray | None = None,
) -> ClusteredFit:
    """Coefficient ``index`` of ``sandwich``. ``floor`` (for tests): a two-way variance below
    either one-way variance is replaced by the larger one-way one, with its G − 1 degrees of
    freedom (Cameron, Gelbach & Miller's fallback, applied whenever the two-way variance is
    the smaller, not only when it is negative): V₁ + V₂ − V₁∩₂ can undershoot when one
    clustering has few clusters, and a test on it then rejected 15% of null studies (four
    systems, 50 items; ``bench/coverage_shares.py``), where an interval's Satterthwaite
    degrees of freedom make up for it."""
    fit = sandwich(y, design, groups, cells)
    variance, df = float(fit.covariance[index, index]), fit.df(index)
    if floor and len(fit.parts) == 3:
        for part, size, _ in fit.parts[:2]:
            if float(part[index, index]) > variance:
                variance, df = float(part[index, index]), float(size - 1)
    clusters = tuple(count_distinct(g) for g in groups)
    return ClusteredFit(float(fit.beta[index]), math.sqrt(max(variance, 0.0)), df, clusters)


def clustered_group_means(
    values,
    keys,
    units,
    participants=None,
    *,
    bounds: tuple[float, float] | None = None,
    cells: np.ndarray | None = None,
) -> list[GroupMean]:
    """``clustered_mean`` for every distinct value of ``keys`` (a system per answer; a tuple
    of arrays: every combination of their values), in sorted order, each ``GroupMean.key``
    the tuple ``group_index`` gives. ``units``: per answer, what its answers share an
    effect with (the item, or the source when several items show one source); ``bounds``:
    the figure's possible range, as for ``clustered_mean``; ``cells``: ``unit_cells(units,
    participants)`` if the caller has it (else found once here for every group)."""
    x = np.asarray(values, dtype=np.float64)
    columns = keys if isinstance(keys, tuple) else (keys,)
    tuples, index = group_index(*[np.asarray(column) for column in columns])
    if not tuples:
        return []
    # groups of NaN only drop out (no row for a figure with no answer)
    fits = _mean_fits(x, index, len(tuples), units, participants, cells, bounds, CONFIDENCE)
    return [
        GroupMean(key, found.mean, found.sd, found.n, found.ci)
        for key, found in zip(tuples, fits, strict=True)
        if found is not None
    ]


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
