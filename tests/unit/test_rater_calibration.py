"""Calibrating machine raters on the humans: the pure pieces (means of the others, MAE,
the verdict) by hand, and the calibration rows of a study built in memory against the
krippendorff package and scikit-learn."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from scoring.reports.agreement import agreement_scope_rows
from scoring.reports.base import Columns, StudyData, observation_columns
from stats.raters import (
    CALIBRATED,
    NOT_CALIBRATED,
    UNKNOWN,
    calibration_verdict,
    mean_absolute_error,
    means_of_others,
    unit_means,
)

UNITS = np.array([0, 0, 0, 1, 1, 2])
VALUES = np.array([1.0, 2.0, 6.0, 4.0, 4.0, 7.0])


def test_unit_means_and_means_of_the_others_by_hand():
    assert unit_means(UNITS, VALUES, 4)[:3] == pytest.approx([3.0, 4.0, 7.0])
    assert np.isnan(unit_means(UNITS, VALUES, 4)[3])  # a unit nobody rated
    others = means_of_others(UNITS, VALUES, 3)
    assert others[:5] == pytest.approx([4.0, 3.5, 1.5, 4.0, 4.0])
    assert np.isnan(others[5])  # alone on its unit


def test_mean_absolute_error_skips_values_without_a_reference():
    estimate = mean_absolute_error(np.array([1.0, 5.0, 3.0]), np.array([2.0, np.nan, 6.0]))
    assert (estimate.value, estimate.n) == (pytest.approx(2.0), 2)
    nothing = mean_absolute_error(np.array([1.0]), np.array([np.nan]))
    assert np.isnan(nothing.value) and nothing.reason


@pytest.mark.parametrize(
    ("agreement", "ceiling", "verdict"),
    [
        (0.70, 0.75, CALIBRATED),
        (0.64, 0.75, NOT_CALIBRATED),
        (0.90, 0.75, CALIBRATED),  # above the humans: calibrated
        (0.65, 0.75, CALIBRATED),  # exactly the margin below: still calibrated
        (float("nan"), 0.75, UNKNOWN),
        (0.70, None, UNKNOWN),
    ],
)
def test_the_verdict_against_the_ceiling(agreement, ceiling, verdict):
    assert calibration_verdict(agreement, ceiling, 0.1 + 1e-12) == verdict


def _study(humans: np.ndarray, machine: np.ndarray) -> StudyData:
    """Items × humans ratings plus one machine column, one question, ordinal."""
    items, people = humans.shape
    table = np.column_stack([humans, machine])
    item, participant = (
        a.ravel() for a in np.meshgrid(np.arange(items), np.arange(people + 1), indexing="ij")
    )
    n = len(item)
    false = np.zeros(n, dtype=bool)
    responses = Columns(
        {"item": item, "participant": participant, "excluded": false, "flagged": false, "attention": false}
    )
    participants = Columns(
        {
            "model": np.arange(people + 1) == people,
            "name": np.array([""] * people + ["judge"], dtype=object),
            "definition": np.array([None] * people + [{"kind": "llm"}], dtype=object),
        }
    )
    observations = observation_columns(np.arange(n), item, "q", table[item, participant], "ordinal")
    items_columns = Columns({"attention": np.zeros(items, dtype=bool)})
    return StudyData("likert", {}, 3, items_columns, responses, participants, observations)


def test_calibration_rows_equal_the_packages():
    rng = np.random.default_rng(8)
    truth = rng.integers(2, 7, size=20)
    humans = np.clip(truth[:, None] + rng.integers(-1, 2, size=(20, 3)), 1, 7)
    machine = rng.integers(1, 8, size=20)
    rows = agreement_scope_rows(_study(humans, machine), {}, margin=0.1)
    found = {
        (r.metric, r.group.get("rater"), r.group.get("against"), r.group.get("annotator")): r for r in rows
    }
    judge = found[("agreement.rater_calibration", "judge", None, None)]
    ceiling = found[("agreement.rater_calibration", "humans", None, None)]

    pairs = np.array([(humans[i, h], machine[i]) for h in range(3) for i in range(20)], dtype=float).T
    assert judge.value == pytest.approx(
        krippendorff.alpha(reliability_data=pairs, level_of_measurement="ordinal")
    )
    human_pairs = [
        (humans[i, a], humans[i, b]) for a, b in itertools.combinations(range(3), 2) for i in range(20)
    ]
    expected_ceiling = krippendorff.alpha(
        reliability_data=np.array(human_pairs, dtype=float).T, level_of_measurement="ordinal"
    )
    assert ceiling.value == pytest.approx(expected_ceiling) == judge.details["ceiling"]

    def kappa(a, b):
        return cohen_kappa_score(a, b, labels=list(range(1, 8)), weights="quadratic")

    each = [kappa(humans[:, h], machine) for h in range(3)]
    for h in range(3):
        row = found[("agreement.machine_kappa", "judge", "annotator", f"annotator {h + 1}")]
        assert (row.value, row.n) == (pytest.approx(each[h]), 20)
    assert judge.details["kappa_vs_humans"] == pytest.approx(np.mean(each))
    modes = [np.bincount(r, minlength=8) for r in humans]
    unique = [i for i, m in enumerate(modes) if (m == m.max()).sum() == 1]
    majority = [int(modes[i].argmax()) for i in unique]
    assert judge.details["kappa_vs_majority"] == pytest.approx(kappa(machine[unique], majority))
    assert judge.details["mae"] == pytest.approx(np.abs(machine - humans.mean(axis=1)).mean())
    assert judge.details["definition"] == {"kind": "llm"}
    assert judge.details["calibrated"] == NOT_CALIBRATED and ceiling.details["calibrated"] == "ceiling"
    assert judge.n == 20
