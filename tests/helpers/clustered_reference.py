"""Independent references for the clustered shares and tests (``stats.clustered``): the
same figures computed with statsmodels' OLS and its cluster-robust covariance, for the unit
and integration tests."""

from __future__ import annotations

import numpy as np
import statsmodels.api as sm
from scipy import stats


def _groups(units, participants=None):
    codes = [
        np.unique(np.asarray(g), return_inverse=True)[1].ravel()
        for g in (units, participants)
        if g is not None
    ]
    return codes[0] if len(codes) == 1 else np.column_stack(codes)


def cluster_se(values, units, participants=None) -> float:
    """statsmodels' cluster-robust standard error of the mean (one or two ways, CR1)."""
    y = np.asarray(values, dtype=np.float64)
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": _groups(units, participants)}
    )
    return float(fit.bse[0])


def win_rate_t(won, units, participants=None) -> float:
    """statsmodels' t statistic of "the win rate is one half", clustered; two ways, on the
    largest of the two-way and the two one-way standard errors (the floor ``share_test``
    documents)."""
    y = np.asarray(won, dtype=np.float64)
    ses = [cluster_se(y, units, participants)]
    if participants is not None:
        ses += [cluster_se(y, units), cluster_se(y, participants)]
    return float((y.mean() - 0.5) / max(ses))


def wald_reference(answers, systems, units) -> tuple[float, float]:
    """The cluster-robust Wald statistic W that every option's share is equal across
    systems (statsmodels: OLS on the answers' option indicators stacked, the system dummies
    within each option's equation, ``cov_type="cluster"`` by unit, ``wald_test``), and the
    p-value ``independence_test`` documents beyond ``PERMUTATION_UNITS`` units: W scaled by
    (G − S)/(G − 1), Hotelling's F on (q, G − S − q + 1)."""
    _, system = np.unique(np.asarray(systems), return_inverse=True)
    _, option = np.unique(np.asarray(answers), return_inverse=True)
    n, k, c = system.size, system.max() + 1, option.max() + 1
    x = np.column_stack([np.ones(n)] + [(system == s).astype(float) for s in range(1, k)])
    design = np.zeros((n * (c - 1), k * (c - 1)))
    for e in range(c - 1):
        design[e * n : (e + 1) * n, e * k : (e + 1) * k] = x
    y = np.concatenate([(option == e).astype(float) for e in range(c - 1)])
    groups = np.tile(np.unique(np.asarray(units), return_inverse=True)[1].ravel(), c - 1)
    fit = sm.OLS(y, design).fit(cov_type="cluster", cov_kwds={"groups": groups})
    tested = [e * k + s for e in range(c - 1) for s in range(1, k)]
    restriction = np.eye(k * (c - 1))[tested]
    wald = float(fit.wald_test(restriction, use_f=False, scalar=True).statistic)
    q = len(tested)
    size = len(np.unique(np.asarray(units)))
    nu = size - k
    statistic = wald * nu / (size - 1) * (nu - q + 1) / (q * nu)
    return wald, float(stats.f.sf(statistic, q, nu - q + 1))


def dense_wald(answers, systems, units) -> float:
    """The same W written out from its definition in numpy, for loops over relabellings
    (statsmodels per relabelling would be slow): the stacked design in full, the CR1
    sandwich bread · Σ_g X_gᵀe_g e_gᵀX_g · bread · G/(G − 1) · (N − 1)/(N − K), and bᵀV⁺b on
    the system dummies' block."""
    _, system = np.unique(np.asarray(systems), return_inverse=True)
    _, option = np.unique(np.asarray(answers), return_inverse=True)
    _, unit = np.unique(np.asarray(units), return_inverse=True)
    n, k, c = system.size, system.max() + 1, option.max() + 1
    x = np.column_stack([np.ones(n)] + [(system == s).astype(float) for s in range(1, k)])
    design = np.kron(np.eye(c - 1), x)
    y = np.concatenate([(option == e).astype(float) for e in range(c - 1)])
    bread = np.linalg.pinv(design.T @ design)
    beta = bread @ design.T @ y
    scores = design * (y - design @ beta)[:, None]
    clusters = np.tile(unit, c - 1)
    sums = np.zeros((unit.max() + 1, design.shape[1]))
    np.add.at(sums, clusters, scores)
    rows, columns, size = design.shape[0], design.shape[1], unit.max() + 1
    covariance = size / (size - 1) * (rows - 1) / (rows - columns) * bread @ sums.T @ sums @ bread
    tested = [e * k + s for e in range(c - 1) for s in range(1, k)]
    block = covariance[np.ix_(tested, tested)]
    return float(beta[tested] @ np.linalg.pinv(block, rcond=1e-10, hermitian=True) @ beta[tested])


def _blocks(systems, units) -> list[np.ndarray]:
    """The answers' indices of each unit that holds several systems, then (last) those of
    the units that hold one: the groups whose systems a relabelling shuffles."""
    systems, units = np.asarray(systems), np.asarray(units)
    several = [u for u in np.unique(units) if len(np.unique(systems[units == u])) > 1]
    inside = [np.flatnonzero(units == u) for u in several]
    return [*inside, np.flatnonzero(~np.isin(units, several))]


def permutation_p(answers, systems, units, *, draws: int | None = None, seed: int = 0) -> float:
    """The permutation p-value ``independence_test`` documents, by a direct loop: the share of
    relabellings of the systems (units with one system shuffled across those units, a unit
    with several systems shuffled within it) whose ``dense_wald`` is at least the observed
    one. ``draws`` None: every distinct relabelling (the exact p; small designs only), else
    that many random ones."""
    import itertools

    systems, units = np.asarray(systems), np.asarray(units)
    observed = dense_wald(answers, systems, units)
    blocks = [b for b in _blocks(systems, units) if b.size]
    cells = [list(dict.fromkeys(zip(units[b], systems[b], strict=True))) for b in blocks]
    # each answer's cell, as its position in its block's list of cells
    where = [
        np.array([keys.index(key) for key in zip(units[b], systems[b], strict=True)])
        for b, keys in zip(blocks, cells, strict=True)
    ]
    if draws is None:
        choices = [sorted(set(itertools.permutations([s for _, s in keys]))) for keys in cells]
        labellings = itertools.product(*choices)
    else:
        rng = np.random.default_rng(seed)
        labellings = ([rng.permutation([s for _, s in keys]) for keys in cells] for _ in range(draws))
    found = []
    for labelling in labellings:
        relabelled = systems.copy()
        for block, cell, labels in zip(blocks, where, labelling, strict=True):
            relabelled[block] = np.asarray(labels)[cell]
        found.append(dense_wald(answers, relabelled, units) >= observed * (1 - 1e-9))
    return float(np.mean(found))
