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
    p-value ``independence_test`` documents: W scaled by (G − S)/(G − 1), Hotelling's F on
    (q, G − S − q + 1)."""
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
