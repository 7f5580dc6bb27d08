"""Premise-claim labels: agreement on the evidence sentences, and whether the label
depends on the system that wrote the passage.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from .estimate import Estimate
from .overlap import set_f1


def evidence_pair_f1(items: Sequence, evidence: Sequence[Sequence[int]]) -> np.ndarray:
    """F1 between the evidence sentences of every two annotators of the same item.

    Give only the responses that chose evidence (supports / contradicts): a pair where
    one annotator said neutral disagrees on the label, which alpha already measures.
    """
    by_item: dict = defaultdict(list)
    for item, chosen in zip(items, evidence, strict=True):
        by_item[item].append(frozenset(chosen))
    return np.array(
        [set_f1(a, b) for sets in by_item.values() for a, b in itertools.combinations(sets, 2)],
        dtype=np.float64,
    )


def evidence_f1_between_annotators(items: Sequence, evidence: Sequence[Sequence[int]]) -> Estimate:
    """Mean pairwise evidence F1 (see ``evidence_pair_f1``); ``n`` = annotator pairs."""
    scores = evidence_pair_f1(items, evidence)
    if scores.size == 0:
        return Estimate.undefined("no item has two annotators who chose evidence")
    return Estimate(float(scores.mean()), n=int(scores.size))


def chi_square_independence(rows: Sequence, columns: Sequence) -> Estimate:
    """Pearson's chi-square test of independence of two labels (system × label).

    ``value`` is the p-value; ``details`` hold the statistic, the degrees of freedom
    and the table. Undefined with fewer than two distinct values on either side.
    """
    row_levels, row_index = np.unique(np.asarray(rows), return_inverse=True)
    column_levels, column_index = np.unique(np.asarray(columns), return_inverse=True)
    n = len(row_index)
    if len(row_levels) < 2 or len(column_levels) < 2:
        return Estimate.undefined("needs two or more systems and two or more labels", n=n)
    table = np.zeros((len(row_levels), len(column_levels)), dtype=np.int64)
    np.add.at(table, (row_index.ravel(), column_index.ravel()), 1)
    from scipy import stats  # imported on use: see stats/__init__.py

    result = stats.chi2_contingency(table, correction=False)
    details = {
        "statistic": float(result.statistic),
        "dof": int(result.dof),
        "rows": [str(v) for v in row_levels],
        "columns": [str(v) for v in column_levels],
        "table": table.tolist(),
    }
    return Estimate(float(result.pvalue), n=n, details=details)
