"""A questionnaire question asked per passage (``per: "passage"``): its definition, its
answer keyed by passage id (never by letter), its form fields under each passage, its
agreement units, its model questions, and the columns its exports name."""

from types import SimpleNamespace

import pytest
from django.http import QueryDict

from annotation.kinds import get_kind
from annotation.kinds.base import NotAnswerableByModel
from annotation.kinds.questions import check_questions
from tests.kinds import errors_of, kind_item

KIND = get_kind("questionnaire")
FLUENCY = {"id": "fluency", "type": "scale", "points": 5, "per": "passage", "text": "How fluent?"}
TONE = {"id": "tone", "type": "choice", "options": ["formal", "casual"], "per": "passage", "text": "Tone?"}
PICK = {"id": "better", "type": "pick", "pick": "pairwise", "text": "Which is better?"}
PAYLOAD = {
    "passages": [
        {"id": "p1", "text": "Hello there.", "system": "gpt"},
        {"id": "p2", "text": "Hi.", "system": "llama"},
    ]
}


def item(questions=(FLUENCY, TONE, PICK)):
    config = KIND.validate_config({"questions": list(questions)})
    return kind_item("questionnaire", KIND.validate_payload(PAYLOAD, config), config=config)


def test_per_passage_is_a_setting_of_scales_and_choices_only_and_item_is_the_default():
    checked = check_questions([FLUENCY, {**TONE, "per": "item"}, PICK])
    assert checked[0]["per"] == "passage" and "per" not in checked[1] and "per" not in checked[2]
    refused = [
        ({**PICK, "per": "passage"}, "not a setting of a pick question"),
        ({**FLUENCY, "per": "page"}, "one per passage"),
        ({**TONE, "show_if": {"question": "x", "equals": 1}}, "a question asked per passage is always asked"),
    ]
    for question, message in refused:
        assert message in str(errors_of(lambda q=question: KIND.validate_config({"questions": [q]})))
    later = {"id": "why", "type": "text", "text": "Why?", "show_if": {"question": "tone", "equals": "formal"}}
    assert "'tone' is asked per passage" in str(
        errors_of(lambda: KIND.validate_config({"questions": [TONE, later]}))
    )


def test_the_answer_is_keyed_by_passage_id_and_a_required_one_covers_every_passage():
    it = item()
    good = {"fluency": {"p2": "2", "p1": 5}, "tone": {"p1": "formal", "p2": "casual"}, "better": "p1"}
    assert KIND.validate_answer(it, good) == {**good, "fluency": {"p1": 5, "p2": 2}}
    assert "every passage" in str(
        errors_of(lambda: KIND.validate_answer(it, {**good, "fluency": {"p1": 5, "p2": ""}}))
    )
    assert "“p3” is not a passage" in str(
        errors_of(lambda: KIND.validate_answer(it, {**good, "tone": {"p3": "formal"}}))
    )
    assert "by passage id" in str(errors_of(lambda: KIND.validate_answer(it, {**good, "fluency": 4})))
    assert "choose a point" in str(
        errors_of(lambda: KIND.validate_answer(it, {**good, "fluency": {"p1": 9, "p2": 1}}))
    )
    optional = item([{**FLUENCY, "required": False}, PICK])
    assert KIND.validate_answer(optional, {"fluency": {"p2": 3}, "better": "p2"}) == {
        "fluency": {"p2": 3},
        "better": "p2",
    }
    assert KIND.validate_answer(optional, {"fluency": {"p1": ""}, "better": "p2"}) == {"better": "p2"}


def test_the_page_asks_it_under_each_letter_and_the_form_maps_letters_to_ids():
    it = item()
    state = {"order": ["p2", "p1"]}  # p2 shown as A
    page = KIND.page_context(it, SimpleNamespace(state=state))
    assert [[q["field"] for q in p["questions"]] for p in page["passages"]] == [
        ["q-fluency-A", "q-tone-A"],
        ["q-fluency-B", "q-tone-B"],
    ]
    assert [q["id"] for q in page["questions"]] == ["better"]
    assert "gpt" not in repr(page) and "'p1'" not in repr(page)
    form = QueryDict(mutable=True)
    form.update(
        {"q-fluency-A": "2", "q-fluency-B": "5", "q-tone-A": "casual", "q-tone-B": "formal", "q-better": "B"}
    )
    answer = KIND.answer_from_form(form, it, SimpleNamespace(state=state))
    assert answer == {"fluency": {"p2": 2, "p1": 5}, "tone": {"p2": "casual", "p1": "formal"}, "better": "p1"}
    assert KIND.display_record(it, state) == {"order": ["p2", "p1"], "systems": {"p1": "gpt", "p2": "llama"}}


def test_agreement_has_one_unit_per_item_and_passage():
    it = item()
    answer = {"fluency": {"p1": 5, "p2": 2}, "tone": {"p1": "formal", "p2": "casual"}, "better": "p1"}
    values = {(v.unit, v.question, v.level): v.value for v in KIND.agreement_values(it, answer)}
    assert values == {
        ("i1#p1", "fluency", "ordinal"): 5,
        ("i1#p2", "fluency", "ordinal"): 2,
        ("i1#p1", "tone", "nominal"): "formal",
        ("i1#p2", "tone", "nominal"): "casual",
        ("i1", "better", "nominal"): "p1",
    }


def test_a_model_answers_it_per_letter_and_a_trained_rater_leaves_it_out():
    it = item()
    state = {"order": ["p2", "p1"]}
    task = KIND.model_task(it, state)
    assert [q.id for q in task.questions] == ["fluency.A", "tone.A", "fluency.B", "tone.B", "better"]
    chosen = {"fluency.A": 2, "fluency.B": 5, "tone.A": "casual", "tone.B": "formal", "better": "B"}
    answer = KIND.answer_from_model(it, state, chosen)
    assert answer == {"fluency": {"p2": 2, "p1": 5}, "tone": {"p2": "casual", "p1": "formal"}, "better": "p1"}
    assert KIND.model_choices(it, state, answer) == chosen
    assert [q.id for q in KIND.rater_questions(it.study.config)] == ["better"]
    with pytest.raises(NotAnswerableByModel):
        KIND.rater_questions(item([FLUENCY]).study.config)


def test_the_exports_name_each_letters_passage_system_and_answer_and_each_picks_system():
    columns = [(c.name, c.type) for c in KIND.passage_columns(item().study.config, 2)]
    assert columns == [
        ("shown.A.passage", "text"),
        ("shown.A.system", "text"),
        ("answer.fluency.A", "integer"),
        ("answer.tone.A", "text"),
        ("shown.B.passage", "text"),
        ("shown.B.system", "text"),
        ("answer.fluency.B", "integer"),
        ("answer.tone.B", "text"),
        ("answer.better.system", "text"),
    ]
