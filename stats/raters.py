"""Who agrees with whom: pairs of raters, their Cohen's kappa, and the majority of a unit.

Works on one row per rating, ``(unit, rater, value code)``, the shape reports collect,
without a raters × units table (mostly empty for crowd data): every pair of ratings that
two different raters gave the same unit is listed once, and Cohen's kappa of each pair of
raters is computed from those pairs at once (``stats.kappa.SharedUnits``,
``O(pairs × categories)``).
"""

from __future__ import annotations

import numpy as np

from .estimate import Estimate
from .groups import factorize

# A majority needs a count per unit and value; beyond this many values it means little.
MAX_MAJORITY_VALUES = 64


def rating_pairs(units: np.ndarray, raters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)`` of ratings of the same unit by different raters, the rater of
    ``i`` before the rater of ``j`` (each pair once)."""
    unit_codes = factorize(np.asarray(units))[1]
    order = np.argsort(unit_codes, kind="stable")
    sorted_units = unit_codes[order]
    firsts, seconds = [], []
    offset = 1
    while offset < len(order):
        same = np.flatnonzero(sorted_units[offset:] == sorted_units[:-offset])
        if same.size == 0:
            break
        firsts.append(order[same])
        seconds.append(order[same + offset])
        offset += 1
    if not firsts:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    rater = np.asarray(raters)
    keep = rater[first] != rater[second]
    first, second = first[keep], second[keep]
    swap = rater[first] > rater[second]
    first[swap], second[swap] = second[swap], first[swap].copy()
    return first, second


def majority_codes(
    unit_codes: np.ndarray, value_codes: np.ndarray, units: int, categories: int
) -> np.ndarray:
    """Per unit, the value code most of its ratings have (``-1``: none, or a tie)."""
    counts = np.bincount(unit_codes * categories + value_codes, minlength=units * categories)
    return _mode(counts.reshape(units, categories))


def majority_of_others(
    unit_codes: np.ndarray, value_codes: np.ndarray, units: int, categories: int
) -> np.ndarray:
    """Per rating, the majority of the *other* ratings of its unit (``-1``: none, or a tie):
    the leave-one-out reference a human is compared with."""
    counts = np.bincount(unit_codes * categories + value_codes, minlength=units * categories)
    counts = counts.reshape(units, categories)[unit_codes].copy()
    counts[np.arange(len(value_codes)), value_codes] -= 1
    return _mode(counts)


def majority_references(
    unit_codes: np.ndarray, value_codes: np.ndarray, voters: np.ndarray, units: int, categories: int
) -> np.ndarray:
    """Per rating, the majority it is compared with (``-1``: none, or a tie), the majorities
    taken over the ``voters``' ratings only: a voter's rating meets the majority of the
    *other* voters of its unit (``majority_of_others``), anyone else's (a machine rater, a
    person whose own answers do not count) the voters' majority (``majority_codes``)."""
    unit_codes, value_codes = np.asarray(unit_codes), np.asarray(value_codes)
    voters = np.asarray(voters, dtype=bool)
    reference = np.full(len(value_codes), -1, dtype=np.int64)
    voting_units, voting_values = unit_codes[voters], value_codes[voters]
    reference[voters] = majority_of_others(voting_units, voting_values, units, categories)
    reference[~voters] = majority_codes(voting_units, voting_values, units, categories)[unit_codes[~voters]]
    return reference


def _mode(counts: np.ndarray) -> np.ndarray:
    if counts.shape[1] == 0:
        return np.full(len(counts), -1, dtype=np.int64)
    best = counts.argmax(axis=1)
    top = counts[np.arange(len(counts)), best]
    ties = (counts == top[:, None]).sum(axis=1) > 1
    return np.where((top > 0) & ~ties, best, -1).astype(np.int64)


# --- calibrating a machine rater on the humans --------------------------------------------

# How far below the humans' own agreement a rater may stay and still count as calibrated
# (the site's setting ``RATER_CALIBRATION_MARGIN`` overrides it).
DEFAULT_CALIBRATION_MARGIN = 0.1
CALIBRATED, NOT_CALIBRATED, UNKNOWN, CEILING = "yes", "not calibrated", "unknown", "ceiling"


def unit_means(unit_codes: np.ndarray, values: np.ndarray, units: int) -> np.ndarray:
    """Per unit, the mean of its values (NaN for a unit without any)."""
    totals = np.bincount(unit_codes, weights=np.asarray(values, dtype=np.float64), minlength=units)
    counts = np.bincount(unit_codes, minlength=units)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def means_of_others(unit_codes: np.ndarray, values: np.ndarray, units: int) -> np.ndarray:
    """Per value, the mean of the *other* values of its unit (NaN when it is alone): the
    leave-one-out reference a human's rating is compared with."""
    values = np.asarray(values, dtype=np.float64)
    totals = np.bincount(unit_codes, weights=values, minlength=units)[unit_codes] - values
    others = np.bincount(unit_codes, minlength=units)[unit_codes] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(others > 0, totals / np.maximum(others, 1), np.nan)


def mean_absolute_error(values: np.ndarray, reference: np.ndarray) -> Estimate:
    """Mean of ``|value - reference|`` over the values that have a reference (not NaN);
    ``n`` = those values."""
    values = np.asarray(values, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    keep = ~np.isnan(reference) & ~np.isnan(values)
    if not keep.any():
        return Estimate.undefined("no rating with a human rating of the same unit to compare it with")
    return Estimate(float(np.abs(values[keep] - reference[keep]).mean()), n=int(keep.sum()))


def calibration_verdict(agreement: float | None, ceiling: float | None, margin: float) -> str:
    """``not calibrated`` when a rater's agreement with the humans is below the humans'
    agreement among themselves (the ceiling) by more than ``margin``; ``yes`` otherwise;
    ``unknown`` when either figure is undefined (nothing to judge on)."""
    if agreement is None or ceiling is None or np.isnan(agreement) or np.isnan(ceiling):
        return UNKNOWN
    return NOT_CALIBRATED if ceiling - agreement > margin else CALIBRATED
