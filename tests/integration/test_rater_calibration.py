"""Calibration reports: each model rater of a likert study against the humans, per
question (alpha, kappa with each human and with the human majority, MAE) beside the humans'
own agreement, and the verdict. On PostgreSQL through ``computereports --json``; every
figure equals a computation with the krippendorff package and scikit-learn."""

from __future__ import annotations

import itertools
from collections import Counter

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.models import Participant
from annotation.services.pseudonyms import pseudonym
from tests.helpers.raters import FAITHFUL, HUMANS, ITEMS, QUESTIONS, rater_study
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db

SCALE = list(range(1, 8))


def _series(ratings: dict, who: str, question: str) -> list[int]:
    return [ratings[who][item][question] for item in ITEMS]


def _alpha_of_pairs(pairs: list[tuple[int, int]]) -> float:
    """Each pair of values a unit of its own (how the report pairs a rater with a human)."""
    data = np.array(pairs, dtype=float).T
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))


def _kappa(a: list[int], b: list[int]) -> float:
    return float(cohen_kappa_score(a, b, labels=SCALE, weights="quadratic"))


def _majority(values: list[int]) -> int | None:
    (top, count), *rest = [*Counter(values).most_common(), (None, 0)]
    return top if count > rest[0][1] else None


def _by_hand(ratings: dict, rater: str, question: str) -> dict:
    humans = {h: _series(ratings, h, question) for h in HUMANS}
    mine = _series(ratings, rater, question)
    pairs = [(humans[h][i], mine[i]) for h in HUMANS for i in range(len(ITEMS))]
    majority = [_majority([humans[h][i] for h in HUMANS]) for i in range(len(ITEMS))]
    kept = [i for i, m in enumerate(majority) if m is not None]
    means = [np.mean([humans[h][i] for h in HUMANS]) for i in range(len(ITEMS))]
    return {
        "alpha": _alpha_of_pairs(pairs),
        "each": {h: _kappa(humans[h], mine) for h in HUMANS},
        "kappa_vs_humans": float(np.mean([_kappa(humans[h], mine) for h in HUMANS])),
        "kappa_vs_majority": _kappa([mine[i] for i in kept], [majority[i] for i in kept]),
        "mae": float(np.mean([abs(m - mean) for m, mean in zip(mine, means, strict=True)])),
    }


def _ceiling_by_hand(ratings: dict, question: str) -> dict:
    humans = {h: _series(ratings, h, question) for h in HUMANS}
    pairs = [
        (humans[a][i], humans[b][i]) for a, b in itertools.combinations(HUMANS, 2) for i in range(len(ITEMS))
    ]
    errors = [
        abs(humans[h][i] - np.mean([humans[o][i] for o in HUMANS if o != h]))
        for h in HUMANS
        for i in range(len(ITEMS))
    ]
    return {"alpha": _alpha_of_pairs(pairs), "mae": float(np.mean(errors))}


def test_each_rater_per_question_equals_a_hand_computation_and_the_random_one_is_not_calibrated(settings):
    study, ratings, raters = rater_study()
    rows = computereports_json(study)
    names = {short: participant.platform_worker_id for short, participant in raters.items()}
    labels = {
        p.platform_worker_id: pseudonym(
            study.pseudonym_salt,
            source=p.source,
            platform_worker_id=p.platform_worker_id,
            public_id=p.public_id,
        )
        for p in Participant.objects.filter(platform_worker_id__in=HUMANS)
    }
    for question in QUESTIONS:
        scope = {"question": question, "level": "ordinal"}
        ceiling = _ceiling_by_hand(ratings, question)
        humans = report_row(rows, "agreement.rater_calibration", **scope, rater="humans")
        assert humans["value"] == pytest.approx(ceiling["alpha"])
        assert humans["details"]["mae"] == pytest.approx(ceiling["mae"])
        assert humans["details"]["calibrated"] == "ceiling"
        for short in ("faithful", "random"):
            hand = _by_hand(ratings, short, question)
            found = report_row(rows, "agreement.rater_calibration", **scope, rater=names[short])
            assert found["value"] == pytest.approx(hand["alpha"])
            assert found["n"] == found["details"]["items"] == len(ITEMS)
            details = found["details"]
            assert details["kappa_vs_humans"] == pytest.approx(hand["kappa_vs_humans"])
            assert details["kappa_vs_majority"] == pytest.approx(hand["kappa_vs_majority"])
            assert details["mae"] == pytest.approx(hand["mae"])
            assert details["ceiling"] == pytest.approx(ceiling["alpha"])
            assert (details["margin"], details["mae_ceiling"]) == (0.1, pytest.approx(ceiling["mae"]))
            for human in HUMANS:
                each = report_row(
                    rows,
                    "agreement.machine_kappa",
                    **scope,
                    rater=names[short],
                    against="annotator",
                    annotator=labels[human],
                )
                assert each["value"] == pytest.approx(hand["each"][human])
                assert each["n"] == len(ITEMS)
        faithful = report_row(rows, "agreement.rater_calibration", **scope, rater=names["faithful"])
        random = report_row(rows, "agreement.rater_calibration", **scope, rater=names["random"])
        assert faithful["details"]["calibrated"] == "yes"
        assert faithful["details"]["definition"] == FAITHFUL
        assert random["details"]["calibrated"] == "not calibrated"
        assert random["value"] < ceiling["alpha"] - 0.1 < faithful["value"] + 0.1
    pooled = report_row(
        rows, "agreement.rater_calibration", questions="all", level="ordinal", rater=names["random"]
    )
    assert pooled["details"]["calibrated"] == "not calibrated"

    # The margin is a setting: wider than alpha's range, every rater is calibrated.
    settings.RATER_CALIBRATION_MARGIN = 5.0
    rows = [r for r in computereports_json(study) if r["metric"] == "agreement.rater_calibration"]
    assert {r["details"]["calibrated"] for r in rows if r["group"]["rater"] != "humans"} == {"yes"}
    assert {r["details"]["margin"] for r in rows} == {5.0}
