"""How well a trained rater answers the items it never saw: figures on the held-out split.

Per held-out item the rater gave one answer and the humans several. The reference of an
item is the humans' majority answer (items whose humans tie have none and are left out
of the figures that need one, counted in ``n_tied``). For a rating question the rater's
answer is also compared with the humans' mean rating (``mae``), beside ``mae_baseline``:
the same for always giving the training split's median rating.

- ``accuracy`` and ``macro_f1`` (F1 per answer, averaged over the answers that occur in
  the references or the predictions, as scikit-learn's ``f1_score(average="macro")``);
- ``majority_baseline``: the accuracy of always giving the training split's most common
  answer, the floor a rater must beat;
- ``kappa_majority``: Cohen's kappa of the rater with the human majority (quadratic
  weights on a rating scale), ``alpha_majority``: Krippendorff's alpha of the two at the
  kind's level; ``alpha_humans``: the humans' own alpha on the same items, the ceiling.

Pure NumPy over plain lists (no Django, no torch): ``workers.trained_raters`` calls it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .agreement import alpha_from_pairs, krippendorff_alpha
from .estimate import Estimate
from .groups import factorize
from .kappa import cohen_kappa
from .raters import majority_codes


@dataclass(frozen=True)
class HeldOutItem:
    """One held-out item: the rater's answer and the humans' answers to the same question."""

    item: str
    prediction: object
    humans: Sequence


def majority_answer(answers: Sequence) -> object | None:
    """The most common answer, or None when two or more tie for it (or there is none): the
    reports' majority (``stats.raters.majority_codes``) of one unit."""
    if len(answers) == 0:
        return None
    domain, codes = factorize(np.asarray(list(answers), dtype=object))
    code = int(majority_codes(np.zeros(len(codes), dtype=np.intp), codes, 1, len(domain))[0])
    return domain[code] if code >= 0 else None


def most_common_training_answer(training_answers: Sequence) -> object:
    """The majority baseline's answer: the commonest in the training split (ties: the
    smallest, so the baseline does not depend on the order of the rows)."""
    counts = Counter(training_answers)
    top = max(counts.values())
    return sorted(answer for answer, count in counts.items() if count == top)[0]


def macro_f1(truth: Sequence, predicted: Sequence) -> float:
    """F1 per answer, averaged over every answer in either list (an answer never predicted,
    or never true, has F1 0)."""
    truth_array, predicted_array = np.asarray(truth, dtype=object), np.asarray(predicted, dtype=object)
    scores = []
    for answer in sorted(set(truth_array.tolist()) | set(predicted_array.tolist())):
        true_positive = float(np.sum((truth_array == answer) & (predicted_array == answer)))
        denominator = float(np.sum(truth_array == answer) + np.sum(predicted_array == answer))
        scores.append(2 * true_positive / denominator if denominator else 0.0)
    return float(np.mean(scores)) if scores else float("nan")


def heldout_metrics(
    items: Sequence[HeldOutItem],
    training_answers: Sequence,
    *,
    level: str,
    scale: Sequence | None = None,
) -> dict:
    """The held-out figures of one rater on one question (see the module's docstring).

    ``level``: ``nominal`` (labels) or ``ordinal`` (a rating scale, whose values
    ``scale`` lists in order; then ``mae`` and weighted kappa too).
    """
    references = [majority_answer(list(item.humans)) for item in items]
    scored = [(item, ref) for item, ref in zip(items, references, strict=True) if ref is not None]
    truth = [ref for _, ref in scored]
    predicted = [item.prediction for item, _ in scored]
    baseline_answer = most_common_training_answer(training_answers)
    metrics: dict = {
        "n_test": len(items),
        "n_scored": len(scored),
        "n_tied": len(items) - len(scored),
        "accuracy": _share(np.asarray(truth, dtype=object) == np.asarray(predicted, dtype=object)),
        "macro_f1": macro_f1(truth, predicted) if scored else float("nan"),
        "majority_answer": baseline_answer,
        "majority_baseline": _share(np.asarray(truth, dtype=object) == baseline_answer),
    }
    if level == "ordinal":
        means = np.array([np.mean(np.asarray(item.humans, dtype=float)) for item in items])
        answers = np.array([item.prediction for item in items], dtype=float)
        metrics["mae"] = float(np.mean(np.abs(answers - means))) if len(items) else float("nan")
        median = _median_point(training_answers)
        metrics["mae_baseline"] = float(np.mean(np.abs(median - means))) if len(items) else float("nan")
    weights = "quadratic" if level == "ordinal" else None
    kappa = cohen_kappa(predicted, truth, weights=weights, labels=scale) if scored else _nothing()
    alpha = krippendorff_alpha([predicted, truth], level, value_domain=scale) if scored else _nothing()
    metrics["kappa_majority"] = _figure(kappa)
    metrics["kappa_weights"] = weights or "none"
    metrics["alpha_majority"] = _figure(alpha)
    metrics["alpha_humans"] = _figure(_human_alpha(items, level))
    return {key: _json_number(value) for key, value in metrics.items()}


def _median_point(training_answers: Sequence) -> float:
    """The training split's median rating, a whole point (the lower of two middle ones):
    the one answer that, given to every item, errs least in absolute terms."""
    ordered = sorted(float(answer) for answer in training_answers)  # type: ignore[arg-type]
    return ordered[(len(ordered) - 1) // 2] if ordered else float("nan")


def _human_alpha(items: Sequence[HeldOutItem], level: str) -> Estimate:
    units = [index for index, item in enumerate(items) for _ in item.humans]
    values = [answer for item in items for answer in item.humans]
    if len(set(units)) < 1 or len(values) < 2:
        return _nothing()
    if level == "ordinal":
        values = [float(v) for v in values]
    return alpha_from_pairs(units, values, level)


def _share(hits: np.ndarray) -> float:
    return float(hits.mean()) if hits.size else float("nan")


def _nothing() -> Estimate:
    return Estimate.undefined("no held-out item has a human majority")


def _figure(estimate: Estimate) -> float | None:
    return float(estimate.value) if estimate.defined else None


def _json_number(value):
    """NaN is not JSON: an undefined figure is stored as null."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value
