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


def test_the_passed_humans_analysed_are_the_answers_that_count():
    """The reports' populations and ``populations.counts_mask`` (the quota's rule as a mask)
    pick the same responses."""
    from annotation.services.populations import counts_mask

    data = study()
    data.responses.data["attention"] = np.array([False, True, False, False, False, False])
    data.responses.data["adjudicator"] = np.array([False, False, True, False, False, False])
    data.participants.data["model"] = np.array([False, False, False, True])
    machine = data.participants["model"][data.responses["participant"]]
    mask = counts_mask(
        flagged=data.responses["flagged"],
        excluded=data.responses["excluded"],
        attention=data.responses["attention"],
        machine=machine,
        adjudicator=data.responses["adjudicator"],
    )
    counted = data.population("passed").humans().analysed()
    assert counted.responses["points"].tolist() == data.responses["points"][mask].tolist() == [0.0, 3.0]


def test_authentic_is_passed_less_the_answers_with_a_strong_sign():
    """Derived from ``passed`` or read from the whole study, ``authentic`` keeps the passed
    answers without a strong sign; a study read without the column keeps them all."""
    data = study()
    assert as_lists(data.population("authentic")) == as_lists(data.population("passed"))
    data.responses.data["strong_sign"] = np.array([False, False, False, True, True, False])
    derived = data.population("passed").population("authentic")
    assert as_lists(derived) == as_lists(data.population("authentic"))
    assert derived.responses["points"].tolist() == [0.0, 5.0]
    assert derived.observations["response"].tolist() == [0, 1]
