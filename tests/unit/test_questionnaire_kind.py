"""The questionnaire kind: question definitions, item passages and answers, per type."""

import random

import pytest
from django.http import QueryDict

from annotation.kinds import get_kind
from annotation.kinds.base import NotAnswerableByModel
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
    assert by_question[("fluency", "ordinal")] == [("i1", 4)]
    assert by_question[("better", "nominal")] == [("i1", "p2")]
    assert by_question[("which.grammar", "nominal")] == [("i1", 1)]
    assert by_question[("errors", "nominal")] == [("i1#0", 0), ("i1#1", 1)]
    assert not any(v.question == "why" for v in values)


def test_an_answer_gives_one_value_per_unit_and_question():
    """A scale answer is one value (not one per level): every reader counts it once."""
    values = KIND.agreement_values(item(), KIND.validate_answer(item(), GOOD))
    keys = [(v.unit, v.question) for v in values]
    assert len(keys) == len(set(keys))
    assert [v.level for v in values if v.question == "fluency"] == ["ordinal"]


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


# --- trained raters ---------------------------------------------------------------------

RATER_QUESTIONS = [
    {"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Which is better?"},
    {"id": "issue", "type": "choice", "options": ["yes", "no"], "text": "Any issue?"},
    {"id": "severity", "type": "scale", "points": 3, "text": "How bad?",
     "show_if": {"question": "issue", "equals": "yes"}},
    {"id": "which", "type": "multi", "options": ["grammar", "facts"], "text": "Which?", "required": False},
    {"id": "fact", "type": "choice", "options": ["old", "new"], "text": "Which fact?",
     "show_if": {"question": "which", "equals": "facts"}},
    {"id": "why", "type": "text", "text": "Why?", "required": False},
]  # fmt: skip


def rater_specs(questions):
    return {spec.id: spec for spec in KIND.rater_questions(config(questions))}


def test_trained_raters_answer_the_scale_choice_and_pick_questions():
    specs = KIND.rater_questions(config())
    assert [(s.id, s.about, s.regression, s.labels) for s in specs] == [
        ("better", "pairwise", False, ("first", "second", "tie")),
        ("fluency", "scale", True, (1, 2, 3, 4, 5)),
        ("issue", "choice", False, ("yes", "no")),
    ]
    three = [{"id": "b", "type": "pick", "pick": "best", "text": "Best?"},
             {"id": "bw", "type": "pick", "pick": "best_worst", "text": "Best and worst?"}]  # fmt: skip
    assert [(s.about, s.labels) for s in KIND.rater_questions(config(three))] == [
        ("best", ("other", "best")),
        ("best_worst", ("other", "most", "least")),
    ]
    with pytest.raises(NotAnswerableByModel, match="scale, choice and pick questions"):
        KIND.rater_questions(config([{"id": "why", "type": "text", "text": "Why?"}]))


def test_rater_examples_read_the_question_context_and_passages_never_ids_or_systems():
    it, specs = item(), rater_specs(QUESTIONS)
    answer = {"better": "p2", "fluency": 4, "issue": "no"}
    (fluency,) = KIND.rater_examples(specs["fluency"], it, answer)
    both = "Passage A: Hello there. How are you today?\n\nPassage B: Hi."
    assert (fluency.first, fluency.second, fluency.target) == ("How fluent?\nReply to *hello*.", both, 0.75)
    assert [e.target for e in KIND.rater_examples(specs["issue"], it, answer)] == [1]
    ahead, swapped = KIND.rater_examples(specs["better"], it, answer)
    assert (
        ahead.first.endswith("Passage A: Hello there. How are you today?")
        and ahead.second == "Passage B: Hi."
    )
    assert swapped.first.endswith("Passage A: Hi.") and swapped.second.startswith("Passage B: Hello")
    assert (ahead.target, swapped.target) == (1, 0)  # p2 is the second of the file's order, then the first
    assert [e.target for e in KIND.rater_examples(specs["better"], it, {"better": "tie"})] == [2, 2]
    assert KIND.rater_examples(specs["fluency"], it, {"better": "p1"}) == []
    texts = " ".join(e.first + e.second for q in specs.values() for e in KIND.rater_examples(q, it, answer))
    assert not any(hidden in texts for hidden in ("gpt", "llama", "p1", "p2"))


def test_a_best_worst_rater_classifies_each_passage_and_compares_both_ends_at_once():
    questions = [{"id": "bw", "type": "pick", "pick": "best_worst", "text": "Best and worst?"}]
    payload = {"passages": [{"id": f"p{i}", "text": f"Text {i}.", "system": f"s{i}"} for i in range(3)]}
    it, (spec,) = item(payload, questions), KIND.rater_questions(config(questions))
    answer = {"bw": {"most": "p2", "least": "p0"}}
    examples = KIND.rater_examples(spec, it, answer)
    assert [(e.first, e.second, e.target) for e in examples] == [
        ("Best and worst?", "Text 0.", 2),
        ("Best and worst?", "Text 1.", 0),
        ("Best and worst?", "Text 2.", 1),
    ]
    assert KIND.rater_value(spec, answer) == "p2|p0" and KIND.rater_value(spec, {}) is None
    # p1 is likeliest both best and worst: the worst is then the likeliest of the others.
    rows = [[0.8, 0.1, 0.1], [0.1, 0.5, 0.4], [0.5, 0.2, 0.3]]
    (given,) = KIND.rater_answers([spec], [it], lambda asked, pairs: rows)
    assert given.answer == {"bw": {"most": "p1", "least": "p2"}}
    assert given.raw["bw"]["p1"] == {"most": 0.5, "least": 0.4}
    assert KIND.validate_answer(it, given.answer) == given.answer


def test_rater_answers_are_valid_pages_and_read_a_pair_both_ways():
    it, specs = item(questions=RATER_QUESTIONS), rater_specs(RATER_QUESTIONS)
    assert list(specs) == ["better", "issue", "severity", "fact"]
    outputs = {
        # (A=p1, B=p2) then (A=p2, B=p1): p1 (0.2 + 0.1) / 2, p2 (0.5 + 0.6) / 2, tie 0.3
        "better": [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]],
        "issue": [[0.7, 0.3]],
        "severity": [0.5],
        "fact": [[0.9, 0.1]],
    }
    calls = []

    def read(asked, pairs):
        calls.append((asked.id, len(pairs)))
        return outputs[asked.id]

    (given,) = KIND.rater_answers(list(specs.values()), [it], read)
    # "fact" is asked only after "facts" is ticked in a multi no rater answers: left out.
    assert given.answer == {"better": "p2", "issue": "yes", "severity": 2}
    assert given.raw["better"] == pytest.approx({"p1": 0.15, "p2": 0.55, "tie": 0.3})
    assert calls == [("better", 2), ("issue", 1), ("severity", 1), ("fact", 1)]
    assert KIND.validate_answer(it, given.answer) == given.answer
    outputs["issue"] = [[0.2, 0.8]]
    (hidden,) = KIND.rater_answers(list(specs.values()), [it], read)
    assert hidden.answer == {"better": "p2", "issue": "no"}
    assert KIND.validate_answer(it, hidden.answer) == hidden.answer
    # One question alone (its held-out figures, on items whose people were asked it).
    (alone,) = KIND.rater_answers([specs["fact"]], [it], read)
    assert alone.answer == {"fact": "old"}
