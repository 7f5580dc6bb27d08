"""A questionnaire study's exports: one ``answer.<question id>`` column per question, in the
study's order, with multi and sentences answers as lists (JSON in the CSV), and an empty
cell where a question was not asked or left out."""

import csv
import json

import pytest

from annotation.services.authoring.studies import load_study_file
from annotation.services.exports.export import export_study
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.helpers.questionnaire import QUESTIONS, questionnaire_file

pytestmark = pytest.mark.django_db
COLUMNS = [f"answer.{q['id']}" for q in QUESTIONS]


@pytest.fixture
def answered_questionnaire(enrolled):
    study = load_study_file(questionnaire_file(items=2)).study
    person = enrolled(study)
    first = assign_next_item(participant=person, study=study)
    picked = first.item.payload["passages"][1]["id"]
    submit_response(
        assignment=first,
        answer={
            "better": picked,
            "fluency": 4,
            "issue": "yes",
            "which": ["grammar", "facts"],
            "errors": [0, 1],
        },
    )
    second = assign_next_item(participant=person, study=study)
    submit_response(assignment=second, answer={"better": "tie", "fluency": 2, "issue": "no", "why": "=same"})
    return study, picked


def expected(picked: str) -> list[dict]:
    first = {"better": picked, "fluency": 4, "issue": "yes", "which": ["grammar", "facts"], "errors": [0, 1]}
    second = {"better": "tie", "fluency": 2, "issue": "no", "why": "=same"}
    return [
        {column: answer.get(column.removeprefix("answer.")) for column in COLUMNS}
        for answer in (first, second)
    ]


def test_jsonl_has_one_typed_column_per_question(answered_questionnaire, tmp_path):
    answered_questionnaire, picked = answered_questionnaire
    export_study(answered_questionnaire, fmt="jsonl", path=tmp_path / "out.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    answer_columns = [key for key in rows[0] if key.startswith("answer.") and key.count(".") == 1]
    assert answer_columns == COLUMNS
    assert [{key: row[key] for key in COLUMNS} for row in rows] == expected(picked)
    # the pick's system beside it (none for a tie), and each letter's passage and system
    assert [row["answer.better.system"] for row in rows] == ["beta", None]
    for row in rows:
        shown = [row["shown.A.passage"], row["shown.B.passage"]]
        assert shown == row["display_order"]["order"]
        assert [row["shown.A.system"], row["shown.B.system"]] == [
            "alpha" if pid.endswith("a") else "beta" for pid in shown
        ]


@pytest.mark.parametrize("use_copy", [True, False])
def test_csv_has_one_column_per_question_with_lists_as_json(answered_questionnaire, tmp_path, use_copy):
    answered_questionnaire, picked = answered_questionnaire
    export_study(answered_questionnaire, fmt="csv", path=tmp_path / "out.csv", use_copy=use_copy)
    with open(tmp_path / "out.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [key for key in rows[0] if key.startswith("answer.") and key.count(".") == 1] == COLUMNS
    assert [row["answer.better.system"] for row in rows] == ["beta", ""]

    def read(cell: str, column: str):
        if cell == "":
            return None
        if column == "answer.why":
            return cell.removeprefix("'")  # a text cell that starts like a formula is neutralised
        return json.loads(cell) if cell[0] in "[0123456789" else cell

    assert rows[1]["answer.why"] == "'=same"
    assert [{key: read(row[key], key) for key in COLUMNS} for row in rows] == expected(picked)
