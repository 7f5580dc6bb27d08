"""Which questions get competence figures (``scoring/reports/competence.py``), without a
database: nominal ones get MACE and Dawid–Skene, ordinal ones the median and the median
correlation (never a nominal model), humans only; the adjudicated
answers kept beside the populations are what aggregates are compared with; the dashboard
lists a bounded number of label rows."""

import numpy as np

from scoring.models import Report
from scoring.reports import competence
from scoring.reports.base import Columns, StudyData, observation_columns, stacked
from scoring.reports.competence import LABEL_TABLE, competence_rows
from scoring.selectors import table_view

# Three annotators (rows 0-2), a machine rater (3) and an adjudicator (4) on four items.
ANSWERS = [  # (item, participant, choice, stars 1-9, score)
    (0, 0, "a", 1, 0.5), (0, 1, "a", 2, 0.1), (0, 2, "b", 3, 0.7), (0, 3, "b", 4, 0.2),
    (1, 0, "b", 5, 0.3), (1, 1, "b", 6, 0.9), (1, 2, "b", 7, 0.4), (1, 3, "a", 8, 0.8),
    (2, 0, "a", 9, 0.6), (2, 1, "b", 1, 0.5), (2, 2, "a", 2, 0.2), (2, 4, "b", 3, 0.1),
    (3, 0, "b", 4, 0.3), (3, 1, "b", 5, 0.3), (3, 2, "a", 6, 0.6),
]  # fmt: skip


def study() -> StudyData:
    item, participant, choice, stars, score = (np.array(column) for column in zip(*ANSWERS, strict=True))
    count = len(item)
    responses = Columns(
        {
            "item": item,
            "participant": participant,
            "attention": np.zeros(count, dtype=bool),
            "flagged": np.zeros(count, dtype=bool),
            "excluded": np.zeros(count, dtype=bool),
            "adjudicator": participant == 4,
        }
    )
    rows = np.arange(count)
    observations = stacked(
        [
            observation_columns(rows, item, "choice", choice.astype(object), "nominal"),
            observation_columns(rows, item, "stars", stars.astype(float), "ordinal"),
            observation_columns(rows, item, "score", score, "interval"),
        ]
    )
    return StudyData(
        kind="questionnaire",
        config={},
        annotations_per_item=3,
        items=Columns(
            {
                "attention": np.zeros(4, dtype=bool),
                "adjudicated": np.array([False, False, True, False]),
                "external_id": np.array(["i0", "i1", "i2", "i3"], dtype=object),
            }
        ),
        responses=responses,
        participants=Columns(
            {
                "model": np.array([False, False, False, True, False]),
                "name": np.array(["", "", "", "rater-x", ""], dtype=object),
            }
        ),
        observations=observations,
    )


def test_nominal_questions_get_both_models_humans_only():
    rows = competence_rows(study().population("passed").analysed())
    questions = {r.group.get("question") for r in rows}
    assert questions == {"choice", "stars", None}  # score: interval, no competence
    stars = {(r.metric, r.group.get("model")) for r in rows if r.group.get("question") == "stars"}
    assert stars == {
        ("competence.median_correlation", None),
        ("competence.label", "median"),
        ("competence.majority_agreement", "median"),
        ("competence.adjudicated_agreement", "median"),
    }  # a scale: its median, never a nominal model
    annotators = {r.group["annotator"] for r in rows if r.metric == "competence.mace"}
    assert annotators == {"annotator 1", "annotator 2", "annotator 3"}  # no machine, no adjudicator
    labels = {
        r.group["item"]: r.details["label"]
        for r in rows
        if r.metric == "competence.label" and r.group["model"] == "dawid_skene"
    }
    assert set(labels) == {"i0", "i1", "i2", "i3"}
    adjudicated = [r for r in rows if r.metric == "competence.adjudicated_agreement"]
    assert {r.group["model"] for r in adjudicated} == {"mace", "dawid_skene", "median"}
    assert all(r.n == 1 for r in adjudicated)  # item i2, adjudicated "b"
    i2 = [r for r in rows if r.metric == "competence.label" and r.group["item"] == "i2"]
    assert {r.group["question"]: r.details["adjudicated"] for r in i2} == {"choice": "b", "stars": 3}


def test_the_adjudicated_population_gets_no_aggregates():
    assert competence_rows(study().population("adjudicated").analysed()) == []


def test_the_dashboard_lists_at_most_the_tables_bound_of_labels():
    reports = [
        Report(
            metric="competence.label",
            group={"question": "q", "level": "nominal", "model": "mace", "item": f"i{n}"},
            value=0.9,
            n=3,
            details={"label": "a", "answers": 3},
        )
        for n in range(LABEL_TABLE.max_rows + 5)
    ]
    table = table_view(LABEL_TABLE, reports)
    assert len(table.rows) == LABEL_TABLE.max_rows
    assert table.note.startswith(f"The first {LABEL_TABLE.max_rows} of {LABEL_TABLE.max_rows + 5} rows.")


def test_a_question_with_too_many_answers_is_not_fitted(monkeypatch):
    monkeypatch.setattr(competence, "MAX_FITTED_ANSWERS", 10)
    rows = competence_rows(study().population("passed").analysed())
    assert [(r.metric, r.group, r.value) for r in rows] == [
        ("competence.mace", {"question": "choice", "level": "nominal", "annotator": "all"}, None),
        ("competence.dawid_skene", {"question": "choice", "level": "nominal", "annotator": "all"}, None),
        (
            "competence.median_correlation",
            {"question": "stars", "level": "ordinal", "annotator": "all"},
            None,
        ),
    ]
    assert rows[0].details["reason"] == "more than 10 answers to the question: not fitted"


def nominal_study(items: int = 12) -> StudyData:
    """Three annotators on ``items`` items of one nominal question, the third often wrong."""
    item = np.repeat(np.arange(items), 3)
    participant = np.tile(np.arange(3), items)
    choice = np.where((participant == 2) & (item % 3 == 0), "b", np.where(item % 2, "a", "b")).astype(object)
    count = len(item)
    false = np.zeros(count, dtype=bool)
    return StudyData(
        kind="questionnaire",
        config={},
        annotations_per_item=3,
        items=Columns(
            {
                "attention": np.zeros(items, dtype=bool),
                "external_id": np.array([f"i{n}" for n in range(items)], dtype=object),
            }
        ),
        responses=Columns(
            {
                "item": item,
                "participant": participant,
                "attention": false,
                "flagged": false,
                "excluded": false,
            }
        ),
        participants=Columns(
            {"model": np.zeros(3, dtype=bool), "name": np.array(["", "", ""], dtype=object)}
        ),
        observations=observation_columns(np.arange(count), item, "choice", choice, "nominal"),
    )


def test_every_competence_has_a_seeded_bootstrap_interval_over_items():
    first = competence_rows(nominal_study().population("all").analysed())
    again = competence_rows(nominal_study().population("all").analysed())
    figures = [r for r in first if r.metric in ("competence.mace", "competence.dawid_skene")]
    assert len(figures) == 6  # pooled only: one question
    for found in figures:
        assert found.ci_low <= found.value <= found.ci_high
        assert found.details["ci_method"] == "percentile bootstrap over items"
    assert [(r.ci_low, r.ci_high) for r in first] == [(r.ci_low, r.ci_high) for r in again]


def test_a_question_with_too_many_answers_to_refit_has_figures_without_intervals(monkeypatch):
    monkeypatch.setattr(competence, "MAX_RESAMPLED_ANSWERS", 36 * 49)  # 49 resamples: too few
    rows = competence_rows(nominal_study().population("all").analysed())
    figures = [r for r in rows if r.metric in ("competence.mace", "competence.dawid_skene")]
    assert figures and all(r.value is not None and r.ci_low is None for r in figures)
    assert {r.details["interval"] for r in figures} == {"no interval: more than 35 answers to the question"}
