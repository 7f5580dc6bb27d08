"""Adaptive collection: how unsettled an item's answers are, and when a comparison is settled.

Pure functions over arrays (no database): ``scoring.adaptive`` feeds them a study's answers
that count and stores what they return (each item's priority, the stopping rule's verdict);
``bench/adaptive.py`` runs them on synthetic studies with known truth.

Uncertainty is on one scale for every kind of question, 0 (settled) to 1 (nothing known),
so that a page with several questions takes the least settled of them:

- a nominal question (a label, a choice): the entropy of the item's vote shares, smoothed
  by half an answer per option seen in the study (Jeffreys' prior, so two agreeing answers
  are not "certain"), over ``log`` of the number of options;
- a question on a scale: the width of the item mean's 95% t-interval over the range of
  values the question took in the study (1 when the item has fewer than two answers);
- a comparison of systems (a ranking's MOST / LEAST, a questionnaire's pick among passages):
  how close the comparison of its systems is over the whole study, not how split the item's
  own votes are: ``2 Φ(−|z|)`` for the closest pair of systems the item shows, ``z`` the
  difference of the two systems' Bradley-Terry strengths over its standard error. An item
  whose systems are far apart falls back, whatever its own answers say; one comparing two
  systems still close comes first.

The stopping rule's interval is an asymptotic confidence sequence (Waudby-Smith, Arnold,
Ramdas et al., "Time-uniform central limit theory and asymptotic confidence sequences",
2021: Robbins' normal mixture with the sample variance): it holds at every sample size at
once, so a study may be looked at after every answer and stopped at the first look that
settles it, and the chance that any look wrongly excludes the truth stays near ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .clustered import t_quantile
from .ranking import bradley_terry

JEFFREYS = 0.5  # answers added to each option's count before the shares' entropy
CONFIDENCE = 0.95  # the level of an item mean's interval (the priority of a scale question)
# The sample size (per system) at which the confidence sequence is tightest; any choice keeps
# it valid, this one suits the few hundred answers per system of a typical study.
SEQUENCE_TIGHTEST_AT = 200


def nominal_uncertainty(counts: np.ndarray) -> float:
    """How unsettled an item's label is, from its answers per option (every option the
    question has in the study, answered here or not): the normalised entropy of the
    smoothed shares. 1 with no answers, near 0 when many answers agree."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.size < 2:
        return 0.0  # one option: nothing to settle
    shares = (counts + JEFFREYS) / (counts.sum() + JEFFREYS * counts.size)
    entropy = -float(np.sum(shares * np.log(shares)))
    return min(1.0, entropy / math.log(counts.size))


def scale_uncertainty(values: np.ndarray, span: float) -> float:
    """How unsettled an item's mean is: the width of its 95% t-interval over ``span`` (the
    range of the question's values in the study), at most 1; 1 below two answers."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2 or not span > 0:
        return 1.0
    quantile = t_quantile(CONFIDENCE, values.size - 1)
    half = quantile * values.std(ddof=1) / math.sqrt(values.size)
    return min(1.0, 2 * half / span)


# Added to the diagonal of the Bradley-Terry fit's information matrix: keeps a system that no
# comparison connects to the others at a finite, very wide standard error (its pairs unsettled).
INFORMATION_RIDGE = 0.01


def pair_uncertainty(wins: np.ndarray) -> np.ndarray:
    """How unsettled the order of every pair of systems is, from the win matrix (``W[i, j]``:
    answers preferring system i to system j): ``2 Φ(−|z|)``, ``z`` the difference of the two
    systems' Bradley-Terry strengths (``stats.ranking.bradley_terry``) over its standard
    error from the fit's Fisher information. The two-sided share, so that it runs from 1
    (equal strengths, or nothing known) to 0 (an order many answers agree on), as the other
    questions' uncertainties do. Symmetric, 0 on the diagonal."""
    wins = np.asarray(wins, dtype=np.float64)
    size = len(wins)
    unsettled = np.ones((size, size)) - np.eye(size)
    strengths = bradley_terry(wins)
    if strengths is None:
        return unsettled
    met = wins + wins.T
    p = 1 / (1 + np.exp(strengths[None, :] - strengths[:, None]))
    weight = met * p * (1 - p)
    information = np.diag(weight.sum(axis=1)) - weight + INFORMATION_RIDGE * np.eye(size)
    covariance = np.linalg.inv(information)
    variance = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    gap = np.abs(strengths[:, None] - strengths[None, :])
    z = gap / np.sqrt(np.maximum(variance, np.finfo(np.float64).tiny))
    from scipy import stats as scipy_stats  # imported on use: see stats/__init__.py

    return np.where(np.eye(size, dtype=bool), 0.0, 2 * scipy_stats.norm.sf(z))


def comparison_priorities(
    items: np.ndarray, shown: np.ndarray, uncertainty: np.ndarray, n_items: int
) -> np.ndarray:
    """Per item (row number below ``n_items``), the uncertainty (``pair_uncertainty``) of the
    least settled pair of systems its answers compared; NaN for an item without any. Per
    answer ``items`` gives its item and ``shown`` the systems it compared (a row of system
    codes, -1 padding)."""
    items = np.asarray(items, dtype=np.int64)
    shown = np.asarray(shown, dtype=np.int64)
    priority = np.full(n_items, np.nan)
    if shown.ndim != 2:
        return priority  # no answers: nothing compared
    for a in range(shown.shape[1]):
        for b in range(a + 1, shown.shape[1]):
            both = (shown[:, a] >= 0) & (shown[:, b] >= 0)
            values = uncertainty[shown[both, a], shown[both, b]]
            np.fmax.at(priority, items[both], values)
    return priority


def item_priorities(
    items: np.ndarray,
    questions: np.ndarray,
    values: np.ndarray,
    nominal: np.ndarray,
    n_items: int,
    comparisons: np.ndarray | None = None,
) -> np.ndarray:
    """Each item's priority (its least settled question's uncertainty) from the answers'
    observations: per observation its item (row number below ``n_items``), question, value
    and whether the question is nominal; ``comparisons``: per item the uncertainty of its
    comparisons of systems (``comparison_priorities``, NaN for none), whose observations the
    caller leaves out. Items with neither get 1."""
    priority = np.ones(n_items, dtype=np.float64)
    seen = np.zeros(n_items, dtype=bool)
    best = np.zeros(n_items, dtype=np.float64)
    if comparisons is not None:
        seen = ~np.isnan(comparisons)
        best = np.where(seen, comparisons, 0.0)
    items, questions = np.asarray(items), np.asarray(questions)
    for question in np.unique(questions.astype(str)):
        rows = np.flatnonzero(questions.astype(str) == question)
        if nominal[rows].all():
            scores = _nominal_scores(items[rows], values[rows])
        else:
            scores = _scale_scores(items[rows], np.asarray(values[rows], dtype=np.float64))
        for item, score in scores.items():
            best[item] = max(best[item], score) if seen[item] else score
            seen[item] = True
    priority[seen] = best[seen]
    return priority


def _nominal_scores(items: np.ndarray, values: np.ndarray) -> dict[int, float]:
    options, codes = np.unique(np.asarray(values).astype(str), return_inverse=True)
    counts = np.zeros((int(items.max()) + 1, len(options)))
    np.add.at(counts, (items, codes.ravel()), 1)
    return {int(item): nominal_uncertainty(counts[item]) for item in np.unique(items)}


def _scale_scores(items: np.ndarray, values: np.ndarray) -> dict[int, float]:
    span = float(values.max() - values.min()) if values.size else 0.0
    return {int(item): scale_uncertainty(values[items == item], span) for item in np.unique(items)}


@dataclass(frozen=True)
class Look:
    """A confidence sequence's interval at one look: the estimate and its bounds."""

    estimate: float
    low: float
    high: float
    n: int
    counts: tuple[int, ...] = ()  # a difference's: the answers behind each of its two means
    items: tuple[int, ...] = ()  # a difference's: the items behind each of its two means

    @property
    def width(self) -> float:
        return self.high - self.low

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def mean_sequence(
    values: np.ndarray, alpha: float, *, span: float = 0.0, tightest_at: int = SEQUENCE_TIGHTEST_AT
) -> Look:
    """The asymptotic confidence sequence of a mean at level ``1 - alpha``, at this look
    (``values``: every answer so far). Below two answers it is the whole line: nothing is
    known. ``span``: the range the answers can take (0: unknown); with it, the standard
    deviation is at least ``spread_floor``, so answers that happen to agree (every rating a 7)
    still give a finite interval; without it, answers without variation give the whole line."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    sd = math.sqrt(answer_variance(values, span))
    if n < 2 or not sd > 0:
        mean = float(values.mean()) if n else math.nan
        return Look(mean, -math.inf, math.inf, n)
    # n answers of variance sd²: information n / sd², tightest at ``tightest_at`` of them
    radius = mixture_radius(n / sd**2, tightest_at / sd**2, alpha)
    mean = float(values.mean())
    return Look(mean, mean - radius, mean + radius, n)


def spread_floor(span: float, n: int) -> float:
    """The least standard deviation the sequence uses after ``n`` answers on a range ``span``
    wide: one imagined answer of the largest variance a value on that range can have,
    ``(span / 2)²``, spread over ``n + 1`` (the regularised variance of Waudby-Smith &
    Ramdas's bounded-mean sequences, 2023). It vanishes as answers come in, so the estimate
    stays consistent and the sequence asymptotically valid; it only matters while the
    answers so far barely vary, exactly where the sample variance would claim certainty."""
    if not span > 0 or n < 1:
        return 0.0
    return (span / 2) / math.sqrt(n + 1)


def difference_sequence(
    first: np.ndarray,
    first_items: np.ndarray,
    second: np.ndarray,
    second_items: np.ndarray,
    alpha: float,
    *,
    span: float = 0.0,
    tightest_at: int = SEQUENCE_TIGHTEST_AT,
) -> Look:
    """One confidence sequence of the difference of two systems' means at level ``1 - alpha``,
    on the items' means (``first``, ``first_items``: each answer of the first system and its
    item; the same for the second).

    An item answered forty times is one draw of the system's items, not forty: the estimate
    is the mean of the first system's item means less the second's, its variance the
    cluster-robust one (each system's item means' variance over its number of items), so
    items that differ widen the interval however often they are answered, and an item
    answered twice as often as another does not count twice. That variance, ``V``, sets the
    information ``1 / V`` the asymptotic confidence sequence (``mixture_radius``) runs on:
    as a study collects, the estimate's deviation from the truth moves like a Brownian motion
    in that information (each new answer or item adds to it independently), which is what
    the normal mixture bounds at every look at once. Its variance is estimated from the item
    means, few in a small study, so the boundary is read on Student's t scale with Welch's
    degrees of freedom (``student_multiplier``). One sequence at ``alpha`` on the
    difference itself, not one per system at ``alpha / 2``: the latter's bounds add two
    radii where the difference needs only the root of their squares.

    Below two items per system it is the whole line. ``span``: the range the answers can take
    (0: unknown); with it the variance of each system's mean is at least the one
    ``mean_sequence`` gives independent answers that all agree (``spread_floor(span, n)² / n``
    for ``n`` answers), so systems whose answers all agree (every rating of A a 7, of B a 1)
    still stop; item means that vary at all soon vary more than that."""
    means = [_item_means(first, first_items), _item_means(second, second_items)]
    answers = (int(np.size(first)), int(np.size(second)))
    items = (means[0].size, means[1].size)
    estimate = float(means[0].mean() - means[1].mean()) if min(items) else math.nan
    if min(items) < 2:
        return Look(estimate, -math.inf, math.inf, sum(answers), answers, items)
    parts = [_mean_variance(side, values, span) for side, values in zip(means, (first, second), strict=True)]
    variance = sum(parts)
    if not variance > 0:
        return Look(estimate, -math.inf, math.inf, sum(answers), answers, items)
    # The mixture is tuned in answers: tightest when the information reaches that of
    # ``tightest_at`` independent answers per system with the spread the answers show.
    spread = answer_variance(first, span) + answer_variance(second, span)
    tightest_information = tightest_at / spread if spread > 0 else 1 / variance
    normal = mixture_radius(1 / variance, tightest_information, alpha) / math.sqrt(variance)
    freedom = variance**2 / sum(part**2 / (size - 1) for part, size in zip(parts, items, strict=True))
    radius = math.sqrt(variance) * student_multiplier(normal, freedom)
    return Look(estimate, estimate - radius, estimate + radius, sum(answers), answers, items)


def student_multiplier(normal: float, freedom: float) -> float:
    """The multiplier of Student's t with ``freedom`` degrees of freedom that leaves the same
    tail as ``normal`` standard errors of the normal: the sequence's variance comes from the
    item means, few of them in a small study, and its estimate's own error would otherwise
    make the normal boundary too narrow (with 5 items per system answered 80 times each, 13%
    false stops at alpha 0.05). It vanishes as items come in (the t tends to the normal)."""
    from scipy import stats as scipy_stats  # imported on use: see stats/__init__.py

    return float(scipy_stats.t.isf(scipy_stats.norm.sf(normal), freedom))


def answer_variance(values: np.ndarray, span: float) -> float:
    """The answers' sample variance, at least ``spread_floor(span, n)²`` (0 below two answers
    and no span)."""
    n = np.size(values)
    return max(float(np.var(values, ddof=1)) if n > 1 else 0.0, spread_floor(span, n) ** 2)


def _mean_variance(item_means: np.ndarray, values: np.ndarray, span: float) -> float:
    """The cluster-robust variance of one system's mean of item means (the item means'
    variance over their number), at least what ``mean_sequence`` gives its ``n`` answers when
    they all agree (``spread_floor(span, n)² / n``)."""
    n = np.size(values)
    return max(float(item_means.var(ddof=1)) / item_means.size, spread_floor(span, n) ** 2 / n)


def mixture_radius(information: float, tightest_information: float, alpha: float) -> float:
    """The radius of the two-sided normal-mixture confidence sequence at level ``1 - alpha``
    of an estimate whose variance is ``1 / information``: Waudby-Smith, Arnold, Ramdas et
    al.'s (2021) two-sided asymptotic sequence with Robbins' normal mixture, for the mean of
    ``t`` observations of variance σ², written through the information ``I = t / σ²``:
    ``sqrt(2 (I ρ² + 1) / (I² ρ²) log(sqrt(I ρ² + 1) / alpha))``, with their choice of ``ρ²``
    that makes the radius smallest near ``tightest_information``."""
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tightest_information
    scaled = information * rho2
    return math.sqrt(2 * (scaled + 1) / (information * scaled) * math.log(math.sqrt(scaled + 1) / alpha))


def _item_means(values: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The mean of each item's values (items without values left out)."""
    values = np.asarray(values, dtype=np.float64)
    codes = np.unique(np.asarray(items), return_inverse=True)[1].ravel()
    counts = np.bincount(codes)
    return np.bincount(codes, weights=values) / counts if values.size else np.zeros(0)


def settled(sequence: Look, *, excludes_zero: bool, width: float | None) -> bool:
    """Whether the stopping rule is met at this look: the interval of the difference
    excludes 0 (``excludes_zero``) or is at most ``width`` wide."""
    if excludes_zero and sequence.excludes_zero():
        return True
    return width is not None and sequence.width <= width
