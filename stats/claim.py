"""Premise-claim labels: agreement on the evidence sentences between annotators (whether
the label depends on the system is ``stats.clustered.independence_test``).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from .estimate import Estimate
from .overlap import set_f1


def evidence_pair_f1(items: Sequence, evidence: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """F1 between the evidence sentences of every two annotators of the same item, and the
    item of each pair (its unit: the pairs of one item share that item's sentences, so the
    mean's interval clusters by it).

    Give only the responses that chose evidence (supports / contradicts): a pair where
    one annotator said neutral disagrees on the label, which alpha already measures.
    """
    by_item: dict = defaultdict(list)
    for item, chosen in zip(items, evidence, strict=True):
        by_item[item].append(frozenset(chosen))
    scores, owners = [], []
    for item, sets in by_item.items():
        for a, b in itertools.combinations(sets, 2):
            scores.append(set_f1(a, b))
            owners.append(item)
    return np.array(scores, dtype=np.float64), np.array(owners)


def evidence_f1_between_annotators(items: Sequence, evidence: Sequence[Sequence[int]]) -> Estimate:
    """Mean pairwise evidence F1 (see ``evidence_pair_f1``); ``n`` = annotator pairs."""
    scores, _ = evidence_pair_f1(items, evidence)
    if scores.size == 0:
        return Estimate.undefined("no item has two annotators who chose evidence")
    return Estimate(float(scores.mean()), n=int(scores.size))
