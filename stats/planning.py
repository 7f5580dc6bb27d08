"""Planning a study from a pilot: the power of a design, by resampling the pilot.

A design is a number of items per system and a number of answers per item. Its power to
detect a difference ``d`` between two systems on one question is the share of simulated
studies of that design in which the test the reports run (``stats.likert``) rejects "no
difference" at level ``alpha`` when the true difference is ``d``.

Each simulated study resamples the pilot in two stages, so that both of its sources of
spread carry over to designs the pilot did not have:

- items (for a paired pilot, cases: the pair of items of the two systems written for the
  same source) are drawn with replacement from the pilot's; an item brings its deviation
  from its system's mean, shrunk so that the drawn deviations vary as much as the items'
  true means are estimated to vary (the pilot's item means also carry the noise of its few
  answers, which would otherwise be counted twice);
- each of the item's answers is a participant's deviation from their item's mean, drawn
  with replacement from all of the system's answers in the pilot (scaled by
  ``sqrt(m / (m - 1))`` on an item with ``m`` answers, which undoes the shrinking a mean
  of ``m`` answers causes).

The first system's values are then moved by ``d``: the simulation keeps the pilot's
spread and puts the difference the researcher wants to detect in place of the one the
pilot happened to show. Each simulated study is then tested as the reports test a pair of
systems, on the same units and with the same functions (one rule, one place): paired pilots
with the two-sided Wilcoxon signed-rank test on the per-case mean ratings
(``stats.likert.wilcoxon_rows``, the rows form of ``wilcoxon_signed_rank``), unpaired ones
with the two-sided Mann-Whitney U test on the per-item mean ratings (``mann_whitney_rows``).
The reports Holm-adjust over a question's pairs of systems; for the one pair a plan is made
for, Holm is the identity (a study of ``m`` systems has ``m(m-1)/2`` pairs, and the pair
with the smallest p is then tested at ``alpha / (m(m-1)/2)``: plan with that ``alpha`` to
be safe). A study where the test is undefined (no case differs) counts as not rejecting,
as its report shows no p-value.

The agreement a design will measure is planned the same way: each simulated study's
answers are an item's (shrunk) mean plus resampled answer deviations, and its Krippendorff's
alpha (interval level) is computed; the width of the middle 95% of the simulated alphas is
the width the 95% interval of the study's alpha will have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .likert import mann_whitney_rows, wilcoxon_rows

SIMULATIONS = 1000
ITEMS = (10, 20, 30, 50, 75, 100, 150, 200, 300)
ANSWERS_PER_ITEM = (1, 2, 3, 5)
# The most values one run of simulated studies holds in an array (8 bytes each, a few arrays
# at once: ~100 MB): larger designs are simulated in runs of fewer studies.
CHUNK_VALUES = 2**22


@dataclass(frozen=True)
class Answers:
    """One system's answers in a pilot: each value and its item (codes from 0; in a paired
    pilot item ``c`` of either system belongs to case ``c``)."""

    values: np.ndarray
    items: np.ndarray


@dataclass(frozen=True)
class DesignPower:
    """A design (items per system, answers per item), its simulated power and its size."""

    items: int
    answers_per_item: int
    power: float
    answers: int  # both systems' answers together
    cost: float | None  # answers × price, when a price is given


@dataclass(frozen=True)
class DesignWidth:
    """A design (items × answers per item), the width of the middle 95% of its simulated
    alphas, their median, and its size."""

    items: int
    answers_per_item: int
    width: float
    alpha: float
    answers: int
    cost: float | None


@dataclass(frozen=True)
class _Model:
    """A pilot ready to resample: the items' shrunk deviations (rows: items or cases;
    columns: the two systems) and each system's pool of answer deviations."""

    deviations: tuple[np.ndarray, np.ndarray]
    residuals: tuple[np.ndarray, np.ndarray]
    paired: bool


def power_table(
    first: Answers,
    second: Answers,
    *,
    difference: float,
    paired: bool,
    alpha: float = 0.05,
    items: Sequence[int] = ITEMS,
    answers_per_item: Sequence[int] = ANSWERS_PER_ITEM,
    price: float | None = None,
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> list[DesignPower]:
    """The simulated power of every design of ``items`` × ``answers_per_item`` (see the
    module's docstring); the same seed gives the same table."""
    model = _fit(first, second, paired=paired)
    rng = np.random.default_rng(seed)
    table = []
    for n in items:
        for k in answers_per_item:
            power = _simulated_power(model, difference, alpha, n, k, simulations, rng)
            answers = 2 * n * k
            table.append(DesignPower(n, k, power, answers, None if price is None else answers * price))
    return table


def cheapest(table: Sequence[DesignPower], power: float) -> DesignPower | None:
    """The design of fewest answers (so the cheapest at one price per answer) whose power
    reaches ``power``; between equally large ones the more powerful; None if none does."""
    meeting = [design for design in table if design.power >= power]
    if not meeting:
        return None
    return min(meeting, key=lambda design: (design.answers, -design.power, design.answers_per_item))


def width_table(
    answers: Answers,
    *,
    items: Sequence[int] = ITEMS,
    answers_per_item: Sequence[int] = (2, 3, 5),
    price: float | None = None,
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> list[DesignWidth]:
    """Per design of ``items`` × ``answers_per_item`` (two or more: alpha compares answers),
    the spread of the interval-level Krippendorff's alpha of studies simulated from the
    pilot's ``answers`` (one question, every item); the same seed gives the same table."""
    means, counts, residuals = _item_means_and_residuals(answers)
    within = float(np.mean(residuals**2))
    deviations = _shrunk(means[:, None], np.array([[within * np.mean(1 / counts)]]))[:, 0]
    rng = np.random.default_rng(seed)
    table = []
    for n in items:
        for k in answers_per_item:
            if k < 2:
                raise ValueError("alpha needs at least two answers per item")
            alphas = np.concatenate(
                [
                    _simulated_alphas(deviations, residuals, n, k, chunk, rng)
                    for chunk in simulation_chunks(simulations, n * k)
                ]
            )
            low, middle, high = np.nanpercentile(alphas, [2.5, 50, 97.5])
            size = n * k
            table.append(
                DesignWidth(
                    n, k, float(high - low), float(middle), size, None if price is None else size * price
                )
            )
    return table


def _simulated_alphas(
    deviations: np.ndarray, residuals: np.ndarray, n: int, k: int, simulations: int, rng: np.random.Generator
) -> np.ndarray:
    """The interval alphas of ``simulations`` studies of ``n`` items × ``k`` answers."""
    rows = deviations[rng.integers(len(deviations), size=(simulations, n))]
    values = rows[:, :, None] + residuals[rng.integers(len(residuals), size=(simulations, n, k))]
    return interval_alphas(values)


def simulation_chunks(simulations: int, values_per_study: int) -> list[int]:
    """``simulations`` split into runs whose arrays hold at most ``CHUNK_VALUES`` values
    (one run, and so the same draws, whenever they fit): a design's memory stays bounded
    however many items, answers and simulations it has."""
    per_chunk = max(1, CHUNK_VALUES // max(1, values_per_study))
    full, rest = divmod(simulations, per_chunk)
    return [per_chunk] * full + ([rest] if rest else [])


def narrowest_enough(table: Sequence[DesignWidth], width: float) -> DesignWidth | None:
    """The design of fewest answers whose alpha interval is at most ``width`` wide."""
    meeting = [design for design in table if design.width <= width]
    if not meeting:
        return None
    return min(meeting, key=lambda design: (design.answers, design.width, design.answers_per_item))


def interval_alphas(values: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (interval level) of each study in ``values`` (studies × units ×
    answers, every unit answered as often): ``1 - D_o / D_e`` with ``D_o = 2k Σ SS_u /
    ((k - 1) N)`` and ``D_e = 2 SS / (N - 1)`` over the ``N`` values (docs/statistics.md)."""
    k = values.shape[2]
    total = values.shape[1] * k
    within = ((values - values.mean(axis=2, keepdims=True)) ** 2).sum(axis=(1, 2))
    flat = values.reshape(values.shape[0], -1)
    overall = ((flat - flat.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - (k * (total - 1) * within) / ((k - 1) * total * overall)


def _fit(first: Answers, second: Answers, *, paired: bool) -> _Model:
    fitted = [_item_means_and_residuals(side) for side in (first, second)]
    within = [float(np.mean(residuals**2)) for _, _, residuals in fitted]
    if paired:
        if len(fitted[0][0]) != len(fitted[1][0]):
            raise ValueError("a paired pilot needs the same cases for both systems")
        means = np.column_stack([fitted[0][0], fitted[1][0]])
        noise = np.diag([within[side] * np.mean(1 / fitted[side][1]) for side in (0, 1)])
        shrunk = _shrunk(means, noise)
        deviations = (shrunk[:, 0], shrunk[:, 1])
    else:
        deviations = tuple(  # type: ignore[assignment]
            _shrunk(means[:, None], np.array([[within[side] * np.mean(1 / counts)]]))[:, 0]
            for side, (means, counts, _) in enumerate(fitted)
        )
    return _Model(deviations, (fitted[0][2], fitted[1][2]), paired)


def _item_means_and_residuals(side: Answers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item its mean and its number of answers; the pool of answer deviations from
    their item's mean, scaled to the spread of single answers (items of two answers or more)."""
    values = np.asarray(side.values, dtype=np.float64)
    items = np.asarray(side.items, dtype=np.int64)
    counts = np.bincount(items)
    if values.size == 0 or (counts == 0).any():
        raise ValueError("every item of the pilot needs an answer")
    means = np.bincount(items, weights=values) / counts
    m = counts[items]
    several = m >= 2
    if not several.any():
        raise ValueError("the pilot needs items with two answers or more (to tell items from answers apart)")
    residuals = (values - means[items])[several] * np.sqrt(m[several] / (m[several] - 1))
    return means, counts, residuals


def _shrunk(means: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """The items' mean deviations (rows; one column per system) transformed so that,
    resampled, their covariance is the items' true covariance: the between-item covariance
    less what the answers' noise adds to a mean (``noise``), kept positive semi-definite."""
    deviations = means - means.mean(axis=0)
    if len(deviations) < 2:
        return np.zeros_like(deviations)
    observed = np.atleast_2d(np.cov(deviations, rowvar=False, ddof=0))
    unbiased = np.atleast_2d(np.cov(deviations, rowvar=False, ddof=1))
    target = _power_of(unbiased - noise, 0.5)
    transform = target @ _power_of(observed, -0.5)
    return deviations @ transform.T


def _power_of(matrix: np.ndarray, exponent: float) -> np.ndarray:
    """A symmetric matrix to a power through its eigenvalues (negative ones as zero; for a
    negative power, zero ones stay zero: a direction without spread keeps none)."""
    eigenvalues, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    scale = max(float(np.abs(eigenvalues).max(initial=0.0)), 1e-300)
    kept = eigenvalues > scale * 1e-12
    powered = np.zeros_like(eigenvalues)
    powered[kept] = eigenvalues[kept] ** exponent
    return (vectors * powered) @ vectors.T


def _simulated_power(
    model: _Model, difference: float, alpha: float, n: int, k: int, simulations: int, rng: np.random.Generator
) -> float:
    """The share of ``simulations`` studies of ``n`` items per system × ``k`` answers per
    item whose test rejects at ``alpha``."""
    if n < 2:
        raise ValueError("a design needs at least two items per system")
    rejected = sum(
        int(np.sum(_simulated_p(model, difference, n, k, chunk, rng) < alpha))
        for chunk in simulation_chunks(simulations, n * k)
    )
    return rejected / simulations


def _simulated_p(
    model: _Model, difference: float, n: int, k: int, simulations: int, rng: np.random.Generator
) -> np.ndarray:
    """The test's p of each of ``simulations`` studies of ``n`` items per system × ``k``
    answers per item."""
    cases = rng.integers(len(model.deviations[0]), size=(simulations, n))
    side_means = []
    for side in (0, 1):
        rows = cases if model.paired else rng.integers(len(model.deviations[side]), size=(simulations, n))
        pool = model.residuals[side]
        noise = pool[rng.integers(len(pool), size=(simulations, n, k))].mean(axis=2)
        side_means.append(model.deviations[side][rows] + noise)
    side_means[0] += difference
    first, second = side_means
    test = wilcoxon_rows if model.paired else mann_whitney_rows
    return test(first, second)[1]  # NaN (no difference at all: the test is undefined) never rejects
