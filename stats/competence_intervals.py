"""How sure each annotator's competence is, and competence and aggregation for ordinal scales.

**Intervals: a bootstrap over items.** The study's items are drawn with replacement (each
resample gives every item a multiplicity, ``item_resamples``), every answer to an item is
copied as often as the item was drawn (a copy is a unit of its own), the model is refitted on
the copy (computed without copies: ``stats.competence_refits``, and ``bootstrap_median_correlation``
below), and the interval is the 2.5th to 97.5th percentile of an annotator's competences over
the resamples (percentile bootstrap). Items, not answers, are resampled because an item's
answers are not independent: they share its true label. The number of resamples is bounded
(``RESAMPLES``), so a report refits each model at most that many times; resamples in which an
annotator answered nothing leave their competence out, and fewer than ``MIN_RESAMPLED`` of
them give no interval.

**Ordinal scales.** Dawid–Skene and MACE treat the points of a scale as unrelated categories;
on a simulated 7-point scale both aggregated worse than the plain median in 23 of 24 runs.
So an ordinal question is aggregated by the **median** of its answers (the lower of the two
middle answers when their number is even: always a point of the scale), and an annotator's
competence on it is the **Spearman correlation** between their answers and the median of the
*other* annotators' answers to the same unit (``median_correlation``): near 1 for someone who
orders the items as the others do, near 0 for a random clicker, whatever their own bias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bootstrap import CONFIDENCE
from .competence import Answers, too_few_answers

RESAMPLES = 100
# An interval needs an annotator's competence in at least this many resamples.
MIN_RESAMPLED = 50
INTERVAL_METHOD = "percentile bootstrap over items"


def item_resamples(items: int, *, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """Resamples × items: how often each item is drawn in each resample (each row sums to
    ``items``), seeded so that the same study gets the same intervals."""
    rng = np.random.default_rng(seed)
    if items == 0:
        return np.zeros((resamples, 0), dtype=np.int64)
    return rng.multinomial(items, np.full(items, 1.0 / items), size=resamples)


def bootstrap_median_correlation(ordinal: OrdinalAnswers, unit_counts: np.ndarray) -> np.ndarray:
    """Resamples × annotators: ``median_correlation`` on each resample of the units (rows of
    ``unit_counts``), the same figures as refitting it on copied answers
    (``tests/helpers/competence_copies.py``). A copy of a unit is a unit of its own with the
    same answers, so the others' median of each answer stays what it was and a drawn-twice unit
    only counts twice: the multiplicities are passed as weights, and nothing is copied or
    sorted again."""
    return np.array([median_correlation(ordinal, counts) for counts in unit_counts]).reshape(
        len(unit_counts), ordinal.answers.annotators
    )


@dataclass(frozen=True)
class Bounds:
    """Per annotator the interval's ends (NaN: no interval, for ``reason``)."""

    low: np.ndarray
    high: np.ndarray
    reason: tuple[str, ...]


def percentile_bounds(replicates: np.ndarray, *, confidence: float = CONFIDENCE) -> Bounds:
    """Per column of ``replicates`` (resamples × annotators) the percentile interval over its
    finite values; none where fewer than ``MIN_RESAMPLED`` are finite."""
    tail = (1 - confidence) / 2 * 100
    columns = replicates.shape[1] if replicates.ndim == 2 else 0
    low, high, reasons = np.full(columns, np.nan), np.full(columns, np.nan), []
    for column in range(columns):
        finite = replicates[:, column][np.isfinite(replicates[:, column])]
        if len(finite) < MIN_RESAMPLED:
            reasons.append(f"defined in {len(finite)} of {len(replicates)} resamples: no interval")
            continue
        low[column], high[column] = np.percentile(finite, [tail, 100 - tail])
        reasons.append("")
    return Bounds(low, high, tuple(reasons))


def weighted_replicates(replicates: list[np.ndarray], weights: list[float]) -> np.ndarray:
    """One annotator's pooled competence in each resample: the mean of their per-question
    replicates weighted by their answers to each, over the questions defined in that resample
    (NaN where none is)."""
    values = np.vstack(replicates)  # questions × resamples
    weight = np.asarray(weights, dtype=np.float64)[:, None] * np.isfinite(values)
    total = weight.sum(axis=0)
    summed = np.nansum(values * weight, axis=0, where=np.isfinite(values))
    return np.divide(summed, total, out=np.full(values.shape[1], np.nan), where=total > 0)


@dataclass(frozen=True)
class OrdinalAnswers:
    """An ordinal question's answers: ``answers`` with labels as positions on the scale
    (0 = lowest), and per answer the median of the *other* answers to its unit (NaN: nobody
    else answered it)."""

    answers: Answers
    others_median: np.ndarray

    @classmethod
    def of(cls, answers: Answers) -> OrdinalAnswers:
        return cls(answers, _others_median(answers))


def _others_median(answers: Answers) -> np.ndarray:
    """Per answer the median of the other answers to the same unit (NaN when it is alone).
    Units have a handful of answers, so one sort and a short loop per unit size suffice."""
    order = np.lexsort((answers.label, answers.unit))
    unit, label = answers.unit[order], answers.label[order].astype(np.float64)
    sizes = np.bincount(unit, minlength=answers.units)
    result = np.full(len(order), np.nan)
    for size in np.unique(sizes[sizes >= 2]).tolist():
        rows = np.flatnonzero(sizes[unit] == size).reshape(-1, size)  # units of this size, sorted
        values = label[rows]
        for drop in range(size):
            others = np.delete(values, drop, axis=1)
            result[rows[:, drop]] = np.median(others, axis=1)
    out = np.empty_like(result)
    out[order] = result
    return out


def median_labels(answers: Answers) -> tuple[np.ndarray, np.ndarray]:
    """Per unit the median answer (the lower middle one when their number is even) and the
    share of its answers equal to it; -1 and NaN for a unit without answers."""
    order = np.lexsort((answers.label, answers.unit))
    sizes = np.bincount(answers.unit, minlength=answers.units)
    starts = np.cumsum(sizes) - sizes
    labels = np.full(answers.units, -1, dtype=np.int64)
    answered = sizes > 0
    labels[answered] = answers.label[order][starts[answered] + (sizes[answered] - 1) // 2]
    equal = np.bincount(
        answers.unit,
        weights=(answers.label == labels[answers.unit]).astype(np.float64),
        minlength=answers.units,
    )
    share = np.divide(equal, sizes, out=np.full(answers.units, np.nan), where=answered)
    return labels, share


def median_correlation(ordinal: OrdinalAnswers, unit_counts: np.ndarray | None = None) -> np.ndarray:
    """Per annotator the Spearman correlation between their answers and the others' median on
    the same units, each answer weighted by its unit's multiplicity (a bootstrap resample);
    NaN for too few answers or answers (or medians) that never vary."""
    answers = ordinal.answers
    weight = np.ones(len(answers)) if unit_counts is None else unit_counts[answers.unit].astype(np.float64)
    compared = np.isfinite(ordinal.others_median) & (weight > 0)
    # medians are whole or half points: twice them are codes, as the answers are
    median_code = np.where(compared, np.nan_to_num(ordinal.others_median) * 2, 0).astype(np.int64)
    result = np.full(answers.annotators, np.nan)
    for code in range(answers.annotators):
        mine = compared & (answers.annotator == code)
        w = weight[mine]
        if too_few_answers(int(w.sum())) is not None:
            continue
        result[code] = _weighted_spearman(answers.label[mine], median_code[mine], w)
    return result


def median_correlation_reasons(
    ordinal: OrdinalAnswers, found: np.ndarray | None = None
) -> tuple[str | None, ...]:
    """Per annotator why their median correlation is not a number (None: it is);
    ``found``: ``median_correlation(ordinal)`` when the caller has it already."""
    answers = ordinal.answers
    if found is None:
        found = median_correlation(ordinal)
    compared = np.isfinite(ordinal.others_median)
    reasons: list[str | None] = []
    for code in range(answers.annotators):
        mine = compared & (answers.annotator == code)
        few = too_few_answers(int(mine.sum()))
        if few is not None:
            reasons.append(few)
        elif np.isnan(found[code]):
            reasons.append("no variation: their answers or the others' medians are all the same")
        else:
            reasons.append(None)
    return tuple(reasons)


def _weighted_spearman(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> float:
    """Spearman's rank correlation of small non-negative integer codes, each pair counted
    ``weight`` times (mid-ranks for ties, as ``scipy.stats.spearmanr`` on the repeated pairs);
    NaN when either side is constant."""
    rank_x, rank_y = _mid_ranks(x, weight), _mid_ranks(y, weight)
    mean_x, mean_y = np.average(rank_x, weights=weight), np.average(rank_y, weights=weight)
    dx, dy = rank_x - mean_x, rank_y - mean_y
    spread = np.sqrt(np.sum(weight * dx * dx) * np.sum(weight * dy * dy))
    return float(np.sum(weight * dx * dy) / spread) if spread > 0 else float("nan")


def _mid_ranks(codes: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each code's rank among the weighted codes, ties sharing their mean rank."""
    counts = np.bincount(codes, weights=weight)
    below = np.cumsum(counts) - counts
    return (below + (counts + 1) / 2)[codes]
