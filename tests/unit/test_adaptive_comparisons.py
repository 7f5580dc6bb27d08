"""The kinds' comparisons of systems that the adaptive priority reads (``KindReport.comparisons``):
a ranking's MOST / LEAST per criterion and a questionnaire's picks, as win matrices of the
systems, each standing for the observations of its question."""

from __future__ import annotations

import numpy as np

from scoring.reports.base import Columns, StudyData
from scoring.reports.questionnaire import QuestionnaireReport
from scoring.reports.ranking import RankingReport


def study(kind: str, config: dict, responses: dict, items: dict) -> StudyData:
    count = len(responses["item"])
    return StudyData(
        kind=kind,
        config=config,
        annotations_per_item=3,
        items=Columns({"attention": np.zeros(len(items["external_id"]), dtype=bool), **items}),
        responses=Columns(
            {"item": np.asarray(responses.pop("item")), **responses, "flagged": np.zeros(count, bool)}
        ),
        participants=Columns({"model": np.zeros(1, dtype=bool)}),
        observations=Columns({}),
    )


def test_a_rankings_criteria_compare_the_shown_systems_by_most_and_least():
    shown = np.empty(2, dtype=object)
    shown[:] = [["A", "B", "C"], ["C", "B", "A"]]
    choices = np.empty(2, dtype=object)
    choices[:] = [
        {"fluency": {"most": "A", "least": "C"}},
        {"fluency": {"most": "B", "least": "A"}},
    ]
    data = study(
        "ranking",
        {"criteria": [{"id": "fluency"}]},
        {"item": [0, 1], "shown": shown, "choices": choices},
        {"external_id": np.array(["r0", "r1"], dtype=object)},
    )
    (fluency,) = RankingReport().comparisons(data)
    assert fluency.questions == ("fluency", "fluency.most", "fluency.least") and fluency.names == [
        "A",
        "B",
        "C",
    ]
    wins = fluency.wins()
    # first answer: A > B > C; second: B > C > A
    assert wins.tolist() == [[0, 1, 1], [1, 0, 2], [1, 0, 0]]


def test_a_questionnaires_pairwise_pick_compares_its_passages_systems_and_a_tie_wins_nothing():
    answers = np.empty(3, dtype=object)
    answers[:] = [{"better": "x0"}, {"better": "y0"}, {"better": "tie"}]
    question = {"id": "better", "type": "pick", "pick": "pairwise", "tie": True}
    items = {"external_id": np.array(["q0"], dtype=object)}
    for n in range(26):
        for key in ("id", "system"):
            items[f"passage{n}{key}"] = np.array([""], dtype=object)
    items["passage0id"][0], items["passage0system"][0] = "x0", "alpha"
    items["passage1id"][0], items["passage1system"][0] = "y0", "beta"
    data = study(
        "questionnaire",
        {"questions": [question]},
        {"item": [0, 0, 0], "answer": answers, "order": np.array([None] * 3, dtype=object)},
        items,
    )
    (better,) = QuestionnaireReport().comparisons(data)
    assert better.questions[0] == "better" and better.names == ["alpha", "beta"]
    assert better.wins().tolist() == [[0, 1], [1, 0]]
    assert better.shown.tolist() == [[0, 1], [0, 1], [0, 1]]  # the tie still compared them
