"""Populations of a study read for its reports: ``passed`` derived from ``all`` is the
``passed`` of the whole study, observations renumbered alike; a filter that keeps every
response returns the same data without copying it."""

import numpy as np

from scoring.reports.base import Columns, StudyData, observation_columns

FLAGGED = np.array([False, True, False, False, True, False])
EXCLUDED = np.array([False, False, True, False, False, False])


def study() -> StudyData:
    responses = Columns(
        {
            "item": np.array([0, 0, 1, 1, 2, 2]),
            "participant": np.array([0, 1, 2, 0, 1, 3]),
            "points": np.arange(6, dtype=float),
            "attention": np.zeros(6, dtype=bool),
            "flagged": FLAGGED,
            "excluded": EXCLUDED,
            "adjudicator": np.zeros(6, dtype=bool),
        }
    )
    observations = observation_columns(np.arange(6), [0, 0, 1, 1, 2, 2], "guess", np.arange(6.0), "ordinal")
    return StudyData(
        kind="boundary",
        config={},
        annotations_per_item=2,
        items=Columns({"attention": np.zeros(3, dtype=bool)}),
        responses=responses,
        participants=Columns({"model": np.zeros(4, dtype=bool)}),
        observations=observations,
    )


def as_lists(data: StudyData) -> dict:
    return {
        "responses": {name: values.tolist() for name, values in data.responses.data.items()},
        "observations": {name: values.tolist() for name, values in data.observations.data.items()},
    }


def test_passed_derived_from_all_equals_passed_of_the_study():
    data = study()
    derived = data.population("all").population("passed")
    assert as_lists(derived) == as_lists(data.population("passed"))
    assert derived.responses["points"].tolist() == [0.0, 3.0, 5.0]
    assert derived.observations["response"].tolist() == [0, 1, 2]


def test_keeping_every_response_copies_nothing():
    data = study()
    assert data.where(np.ones(6, dtype=bool)) is data
    assert data.analysed() is data  # no attention checks
