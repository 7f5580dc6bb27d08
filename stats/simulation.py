"""Counterfactual simulatability: precision and generality of explanations.

An annotator (human or model simulator) reads a model's explanation and says what the
model would answer on a counterfactual, or that the explanation does not tell
(``not_helpful`` / ``either``). Counterfactuals with an answer are "simulatable".

- precision of one explanation: share of its simulatable judgements that match the
  model's actual answer; a system's precision is the mean over its explanations.
- generality of one explanation: 1 − mean pairwise similarity of its simulatable
  counterfactuals (more diverse counterfactuals = a more general explanation).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .estimate import Estimate

UNSIMULATABLE = frozenset({"not_helpful", "either"})


def simulatable(choices: Sequence[str]) -> np.ndarray:
    """Per judgement: the annotator committed to an answer."""
    return np.array([choice not in UNSIMULATABLE for choice in choices], dtype=bool)


def precision_per_explanation(explanations: Sequence, choices: Sequence[str], model_answers: Sequence[str]):
    """Explanation ids and, per explanation, the share of simulatable judgements that
    match the model's answer (explanations without any simulatable judgement left out).
    """
    explanation = np.asarray(explanations)
    keep = simulatable(choices)
    hits = np.array([c == m for c, m in zip(choices, model_answers, strict=True)], dtype=np.float64)
    if not keep.any():
        return np.array([], dtype=explanation.dtype), np.zeros(0)
    ids, index = np.unique(explanation[keep], return_inverse=True)
    index = index.ravel()
    return ids, np.bincount(index, weights=hits[keep]) / np.bincount(index)


def generality(similarity_means: Sequence[float]) -> Estimate:
    """Mean over explanations of 1 − (mean pairwise similarity of its counterfactuals).

    ``similarity_means`` holds one mean pairwise similarity per explanation (NaN for an
    explanation with fewer than two simulatable counterfactuals: left out).
    """
    x = np.asarray(similarity_means, dtype=np.float64)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return Estimate.undefined("no explanation has two or more simulatable counterfactuals")
    return Estimate(float((1.0 - x).mean()), n=int(x.size))


def majority_simulatable(items: Sequence | np.ndarray, choices: Sequence[str]) -> dict:
    """Per item (counterfactual): whether at least half of its judgements are simulatable."""
    item = np.asarray(items)
    ids, index = np.unique(item, return_inverse=True)
    index = index.ravel()
    yes = np.bincount(index, weights=simulatable(choices).astype(np.float64), minlength=len(ids))
    total = np.bincount(index, minlength=len(ids))
    return {
        key.item() if isinstance(key, np.generic) else key: bool(2 * y >= t)
        for key, y, t in zip(ids, yes, total, strict=True)
    }
