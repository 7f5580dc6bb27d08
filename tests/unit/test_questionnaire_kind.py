"""The questionnaire kind: question definitions, item passages and answers, per type."""

import random

import pytest
from django.http import QueryDict

from annotation.kinds import get_kind
from tests.kinds import errors_of, kind_item

KIND = get_kind("questionnaire")
QUESTIONS = [
    {"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Which reply is **better**?"},
    {"id": "fluency", "type": "scale", "points": 5, "labels": ["Broken", "Flawless"], "text": "How fluent?"},
    {"id": "why", "type": "text", "text": "Why?", "required": False, "max_length": 20},
    {"id": "issue", "type": "choice", "options": ["yes", "no"], "text": "Any issue?"},
    {
        "id": "which",
        "type": "multi",
        "options": ["grammar", "facts"],
        "text": "Which issues?",
        "show_if": {"question": "issue", "equals": "yes"},
    },
    {"id": "errors", "type": "sentences", "passage": 1, "text": "Mark errors", "required": False},
]
PAYLOAD = {
    "context": "Reply to *hello*.",
    "passages": [
        {"id": "p1", "text": "Hello there. How are you today?", "system": "gpt"},
        {"id": "p2", "text": "Hi.", "system": "llama"},
    ],
}


def config(questions=None):
    return KIND.validate_config({"questions": questions or QUESTIONS})


def item(payload=None, questions=None, gold=None):
    validated = config(questions)
    return kind_item(
        "questionnaire", KIND.validate_payload(payload or PAYLOAD, validated), config=validated, gold=gold
    )


def test_config_fills_defaults_and_normalises_show_if():
    questions = config()["questions"]
    assert questions[0]["required"] is True and questions[2]["required"] is False
    assert questions[4]["show_if"] == {"question": "issue", "in": ["yes"]}
    assert questions[1]["labels"] == ["Broken", "Flawless"]


@pytest.mark.parametrize(
    ("question", "field"),
    [
        ({"id": "1x", "type": "scale", "text": "t"}, "id"),
        ({"id": "a.b", "type": "scale", "text": "t"}, "id"),
        ({"id": "a", "type": "slider", "text": "t"}, "type"),
        ({"id": "a", "type": "scale", "text": ""}, "text"),
        ({"id": "a", "type": "scale", "text": "t", "points": 12}, "points"),
        ({"id": "a", "type": "scale", "text": "t", "points": 1}, "points"),
        ({"id": "a", "type": "scale", "text": "t", "points": 5, "labels": ["x", "y", "z"]}, "labels"),
        ({"id": "a", "type": "scale", "text": "t", "options": ["x"]}, "options"),
        ({"id": "a", "type": "choice", "text": "t", "options": ["x"]}, "options"),
        ({"id": "a", "type": "multi", "text": "t", "options": ["x", "x"]}, "options"),
        ({"id": "a", "type": "pick", "text": "t", "pick": "worst"}, "pick"),
        ({"id": "a", "type": "pick", "text": "t", "pick": "best", "tie": True}, "tie"),
        ({"id": "a", "type": "sentences", "text": "t", "passage": 0}, "passage"),
        ({"id": "a", "type": "text", "text": "t", "min_length": 10, "max_length": 5}, "max_length"),
        ({"id": "a", "type": "text", "text": "t", "required": "yes"}, "required"),
    ],
)
def test_a_wrong_question_is_refused_on_its_field(question, field):
    errors = errors_of(lambda: KIND.validate_config({"questions": [question]}))
    assert list(errors) == [f"questions[0].{field}"]


def test_ids_are_unique_and_show_if_looks_at_an_earlier_question():
    twice = [QUESTIONS[1], {**QUESTIONS[1], "text": "again"}]
    assert "used twice" in errors_of(lambda: config(twice))["questions[1].id"][0]
    later = [{**QUESTIONS[4]}, QUESTIONS[3]]
    assert "not a question before" in errors_of(lambda: config(later))["questions[0].show_if"][0]
    on_text = [QUESTIONS[2], {**QUESTIONS[3], "show_if": {"question": "why", "equals": "x"}}]
    assert list(errors_of(lambda: config(on_text))) == ["questions[1].show_if"]
    bad_value = [QUESTIONS[3], {**QUESTIONS[4], "show_if": {"question": "issue", "equals": "maybe"}}]
    assert list(errors_of(lambda: config(bad_value))) == ["questions[1].show_if"]
    off_scale = [QUESTIONS[1], {**QUESTIONS[3], "show_if": {"question": "fluency", "in": [6]}}]
    assert list(errors_of(lambda: config(off_scale))) == ["questions[1].show_if"]


def test_payload_needs_unique_passage_ids_and_what_the_questions_need():
    validated = config()
    three = {"passages": [*PAYLOAD["passages"], {"id": "p3", "text": "Yo."}]}
    assert "exactly two" in errors_of(lambda: KIND.validate_payload(three, validated))["passages"][0]
    twice = {"passages": [PAYLOAD["passages"][0], PAYLOAD["passages"][0]]}
    assert "used twice" in errors_of(lambda: KIND.validate_payload(twice, validated))["passages"][0]
    best_worst = config([{"id": "bw", "type": "pick", "pick": "best_worst", "text": "t"}])
    assert "at least three" in errors_of(lambda: KIND.validate_payload(PAYLOAD, best_worst))["passages"][0]
    far = config([{"id": "s", "type": "sentences", "passage": 3, "text": "t"}])
    assert "passage 3" in errors_of(lambda: KIND.validate_payload(PAYLOAD, far))["passages"][0]
    assert KIND.validate_payload(PAYLOAD, validated)["passages"][1]["system"] == "llama"
    no_system = {"passages": [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]}
    assert KIND.validate_payload(no_system, validated)["passages"][0]["system"] == ""


GOOD = {
    "better": "p2",
    "fluency": 4,
    "why": " short ",
    "issue": "yes",
    "which": ["facts", "grammar"],
    "errors": [1],
}


def test_a_full_answer_is_stored_normalised():
    answer = KIND.validate_answer(item(), GOOD)
    assert answer == {
        "better": "p2",
        "fluency": 4,
        "why": "short",
        "issue": "yes",
        "which": ["grammar", "facts"],
        "errors": [1],
    }
    assert KIND.validate_answer(item(), {**GOOD, "better": "tie"})["better"] == "tie"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"fluency": 6}, "“How fluent?”: choose a point of the scale: a whole number from 1 to 5."),
        ({"fluency": True}, "“How fluent?”: choose a point"),
        ({"better": "p9"}, "“Which reply is better?”: pick one of the passages"),
        ({"issue": "maybe"}, "“Any issue?”: choose one of: yes, no."),
        ({"which": ["style"]}, "“Which issues?”: choose among"),
        ({"which": ["facts", "facts"]}, "list each of the options once"),
        ({"errors": [2]}, "“Mark errors”: a sentence number: a whole number from 1 to 2."),
        ({"why": "x" * 21}, "“Why?”: write at most 20 characters"),
        ({"issue": "no"}, "“Which issues?”: not asked"),
        ({"extra": 1}, "Not a question of this study."),
    ],
)
def test_a_wrong_value_names_its_question(change, message):
    errors = errors_of(lambda: KIND.validate_answer(item(), {**GOOD, **change}))
    assert any(message in m for messages in errors.values() for m in messages), errors


def test_required_questions_and_hidden_ones():
    missing = {k: v for k, v in GOOD.items() if k != "fluency"}
    assert errors_of(lambda: KIND.validate_answer(item(), missing)) == {
        "fluency": ["“How fluent?”: please answer this question."]
    }
    hidden = {k: v for k, v in GOOD.items() if k != "which"} | {"issue": "no"}
    assert "which" not in KIND.validate_answer(item(), hidden)
    shown_but_missing = {k: v for k, v in GOOD.items() if k != "which"}
    assert list(errors_of(lambda: KIND.validate_answer(item(), shown_but_missing))) == ["which"]
    optional_left_out = {k: v for k, v in GOOD.items() if k not in ("why", "errors")}
    assert KIND.validate_answer(item(), optional_left_out) == {
        **optional_left_out,
        "which": ["grammar", "facts"],
    }
    assert KIND.validate_answer(item(), {**GOOD, "errors": []})["errors"] == []


def test_best_worst_names_two_different_passages():
    questions = [{"id": "bw", "type": "pick", "pick": "best_worst", "text": "Best and worst"}]
    payload = {"passages": [{"id": f"p{i}", "text": f"Text {i}.", "system": f"s{i}"} for i in range(3)]}
    three = item(payload, questions)
    assert KIND.validate_answer(three, {"bw": {"most": "p0", "least": "p2"}}) == {
        "bw": {"most": "p0", "least": "p2"}
    }
    same = errors_of(lambda: KIND.validate_answer(three, {"bw": {"most": "p0", "least": "p0"}}))
    assert "different passages" in same["bw"][0]
    half = errors_of(lambda: KIND.validate_answer(three, {"bw": {"most": "p0"}}))
    assert "best and the worst" in half["bw"][0]


def test_gold_may_leave_questions_out_and_scores_what_it_gives():
    validated = config()
    gold = KIND.validate_gold(item(), {"issue": "no"})
    assert gold == {"issue": "no"}
    checked = item(gold=gold)
    assert KIND.score(checked, {**GOOD, "issue": "no"}).correct is True
    assert KIND.score(checked, GOOD).details == {"mismatched": ["issue"]}
    assert validated


def test_the_page_shows_letters_not_ids_or_systems_and_the_form_maps_them_back():
    it = item()
    state = KIND.prepare_assignment(it, random.Random(3))
    assert sorted(state["order"]) == ["p1", "p2"]

    class Assignment:
        pass

    assignment = Assignment()
    assignment.state = state
    page = KIND.page_context(it, assignment)
    text = repr(page)
    assert "gpt" not in text and "llama" not in text and "'p1'" not in text and "'p2'" not in text
    assert [p["letter"] for p in page["passages"]] == ["A", "B"]
    letter_of_p2 = "AB"[state["order"].index("p2")]
    form = QueryDict(mutable=True)
    form.update({"q-better": letter_of_p2, "q-fluency": "4", "q-issue": "no", "q-why": ""})
    form.setlist("q-which", ["facts"])  # hidden by issue = no: left out, as the page leaves it out
    form.setlist("q-errors", ["0"])
    answer = KIND.answer_from_form(form, it, assignment)
    assert answer == {"better": "p2", "fluency": 4, "issue": "no", "errors": ["0"]}
    assert KIND.validate_answer(it, answer)["errors"] == [0]


def test_agreement_values_per_type():
    values = KIND.agreement_values(item(), KIND.validate_answer(item(), GOOD))
    by_question = {}
    for v in values:
        by_question.setdefault((v.question, v.level), []).append((v.unit, v.value))
    assert by_question[("fluency", "ordinal")] == [("i1", 4)] == by_question[("fluency", "interval")]
    assert by_question[("better", "nominal")] == [("i1", "p2")]
    assert by_question[("which.grammar", "nominal")] == [("i1", 1)]
    assert by_question[("errors", "nominal")] == [("i1#0", 0), ("i1#1", 1)]
    assert not any(v.question == "why" for v in values)


def test_exports_have_one_column_per_question():
    assert KIND.export_fields(config()) == [(f"answer.{q['id']}", (q["id"],)) for q in QUESTIONS]


def test_model_answers_drop_hidden_questions_and_settle_what_the_choices_leave_open():
    questions = [
        {"id": "bad", "type": "choice", "options": ["yes", "no"], "text": "Any flaw?"},
        {"id": "kinds", "type": "multi", "options": ["grammar", "facts"], "text": "Which?",
         "show_if": {"question": "bad", "equals": "yes"}},
        {"id": "bw", "type": "pick", "pick": "best_worst", "text": "Best and worst?"},
        {"id": "why", "type": "text", "text": "Why?", "required": False},
    ]  # fmt: skip
    payload = {"passages": [{"id": f"p{i}", "text": f"Text {i}.", "system": f"s{i}"} for i in range(3)]}
    it = item(payload, questions)
    state = {"order": ["p2", "p0", "p1"]}
    task = KIND.model_task(it, state)
    assert [q.id for q in task.questions] == ["bad", "kinds.0", "kinds.1", "bw.most", "bw.least"]
    assert "s0" not in task.material and "Passage A:\nText 2." in task.material
    chosen = {"bad": "yes", "kinds.0": "no", "kinds.1": "no", "bw.most": "A", "bw.least": "A"}
    scores = {"kinds.0": {"yes": -3.0, "no": -1.0}, "kinds.1": {"yes": -1.5, "no": -2.0},
              "bw.least": {"A": -0.1, "B": -2.0, "C": -1.0}}  # fmt: skip
    answer = KIND.answer_from_model(it, state, chosen, scores)
    assert answer == {"bad": "yes", "kinds": ["facts"], "bw": {"most": "p2", "least": "p1"}}
    assert KIND.validate_answer(it, answer) == answer
    hidden = KIND.answer_from_model(it, state, {**chosen, "bad": "no", "bw.least": "B"})
    assert hidden == {"bad": "no", "bw": {"most": "p2", "least": "p0"}}
