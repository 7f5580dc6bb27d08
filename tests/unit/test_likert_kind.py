"""The likert kind: config defaults and limits, payload and answer shapes, scoring, values."""

import pytest

from annotation.kinds import get_kind
from annotation.kinds.likert import DEFAULT_QUESTIONS, SEVEN_LABELS
from annotation.models import Item
from tests.kinds import errors_of, kind_item

KIND = get_kind("likert")
PAYLOAD = {
    "new_fact": "The Atomium is in Lyon.",
    "old_facts": ["The Atomium is in Brussels."],
    "main_passage": "The Atomium towers over the north of Lyon.",
    "related_passage": "Heysel Park lies next to the Atomium in Brussels.",
    "related_entity": "Heysel Park",
}
ALL_SEVENS = {q["id"]: 7 for q in DEFAULT_QUESTIONS}


def item(config=None, gold=None, **payload) -> Item:
    return kind_item("likert", {**PAYLOAD, **payload}, config=config, gold=gold)


def test_default_config_has_the_nine_questions_and_a_seven_point_scale():
    config = KIND.validate_config({})
    assert [q["id"] for q in config["questions"]] == [
        "edit_main", "edit_related", "factual_main", "factual_related", "internal_main",
        "internal_related", "cross_passage", "topicality", "naturalness",
    ]  # fmt: skip
    assert {q["passage"] for q in config["questions"]} == {"main", "related", "both"}
    assert config["scale"] == {"points": 7, "labels": SEVEN_LABELS}
    assert SEVEN_LABELS[0] == "Strongly disagree" and SEVEN_LABELS[-1] == "Strongly agree"


def test_questions_may_name_their_group_for_the_reports():
    questions = [
        {"id": "edit", "text": "t", "passage": "main", "group": "consistency"},
        {"id": "natural", "text": "t", "passage": "main"},
    ]
    config = KIND.validate_config({"questions": questions})
    assert [q.get("group") for q in config["questions"]] == ["consistency", None]


def test_other_scale_sizes_are_allowed():
    five = KIND.validate_config({"scale": {"points": 5}})["scale"]
    assert len(five["labels"]) == 5
    nine = KIND.validate_config({"scale": {"points": 9}})["scale"]
    assert nine["labels"][0] == "Strongly disagree" and nine["labels"][1] == "" and len(nine["labels"]) == 9
    own = KIND.validate_config({"scale": {"points": 3, "labels": ["No", "Unsure", "Yes"]}})
    assert own["scale"]["labels"] == ["No", "Unsure", "Yes"]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"scale": {"points": 1}}, "scale.points"),
        ({"scale": {"points": 12}}, "scale.points"),
        ({"scale": {"points": 3, "labels": ["a", "b"]}}, "scale.labels"),
        ({"questions": []}, "questions"),
        ({"questions": [{"id": "q", "text": "t", "passage": "elsewhere"}]}, "questions.0.passage"),
        ({"questions": [{"id": "has space", "text": "t", "passage": "main"}]}, "questions.0.id"),
        ({"questions": [{"id": "q", "text": "t", "passage": "main"}] * 2}, "questions"),
        ({"questions": [{"id": "q", "text": "t", "passage": "main", "x": 1}]}, "questions.0.x"),
        ({"colour": "red"}, "colour"),
        ({"questions": [{"id": "q", "text": "t", "passage": "main", "group": "a b"}]}, "questions.0.group"),
    ],
)
def test_config_rejections_name_the_field(config, field):
    assert field in errors_of(lambda: KIND.validate_config(config))


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({k: v for k, v in PAYLOAD.items() if k != "new_fact"}, "new_fact"),
        ({**PAYLOAD, "main_passage": ""}, "main_passage"),
        ({**PAYLOAD, "old_facts": "one fact"}, "old_facts"),
        ({"new_fact": "n", "main_passage": "m", "related_entity": "e"}, "related_entity"),
        ({**PAYLOAD, "system": "ROME"}, "system"),
    ],
)
def test_payload_rejections_name_the_field(payload, field):
    assert field in errors_of(lambda: KIND.validate_payload(payload, KIND.validate_config({})))


def test_a_study_asking_only_about_related_passages_needs_them():
    config = KIND.validate_config({"questions": [{"id": "r", "text": "t", "passage": "related"}]})
    errors = errors_of(lambda: KIND.validate_payload({"new_fact": "n", "main_passage": "m"}, config))
    assert "related_passage" in errors


def test_answer_needs_every_question_on_the_scale():
    assert KIND.validate_answer(item(), {"ratings": ALL_SEVENS}) == {"ratings": ALL_SEVENS}
    missing = {k: v for k, v in ALL_SEVENS.items() if k != "topicality"}
    assert "ratings.topicality" in errors_of(lambda: KIND.validate_answer(item(), {"ratings": missing}))


@pytest.mark.parametrize(
    ("value", "message"),
    [(0, "outside the scale"), (8, "outside the scale"), (True, "whole number"), (2.5, "whole")],
)
def test_out_of_scale_and_non_integer_ratings_are_rejected(value, message):
    errors = errors_of(
        lambda: KIND.validate_answer(item(), {"ratings": {**ALL_SEVENS, "naturalness": value}})
    )
    assert message in " ".join(errors["ratings.naturalness"])


def test_unknown_question_and_unknown_field_are_rejected():
    assert "ratings.mood" in errors_of(
        lambda: KIND.validate_answer(item(), {"ratings": {**ALL_SEVENS, "mood": 3}})
    )
    assert "points" in errors_of(lambda: KIND.validate_answer(item(), {"ratings": ALL_SEVENS, "points": 1}))
    assert "ratings" in errors_of(lambda: KIND.validate_answer(item(), {"ratings": [7, 7]}))


def test_a_five_point_study_rejects_six():
    five = item(config={"scale": {"points": 5}})
    errors = errors_of(lambda: KIND.validate_answer(five, {"ratings": {**ALL_SEVENS, "edit_main": 6}}))
    assert "ratings.edit_main" in errors


def test_without_a_related_passage_only_the_main_questions_are_asked():
    main_only = item()
    main_only.payload = {k: v for k, v in PAYLOAD.items() if not k.startswith("related")}
    main_ids = [q["id"] for q in DEFAULT_QUESTIONS if q["passage"] == "main"]
    assert KIND.validate_answer(main_only, {"ratings": dict.fromkeys(main_ids, 4)})[
        "ratings"
    ] == dict.fromkeys(main_ids, 4)
    errors = errors_of(lambda: KIND.validate_answer(main_only, {"ratings": ALL_SEVENS}))
    assert "ratings.edit_related" in errors
    groups = KIND.page_context(main_only, None)["groups"]
    assert [g["key"] for g in groups] == ["main"]


def test_form_fields_become_integers():
    from django.http import QueryDict

    form = QueryDict(mutable=True)
    for key in ALL_SEVENS:
        form[f"rating-{key}"] = "3"
    answer = KIND.answer_from_form(form, item(), None)
    assert KIND.validate_answer(item(), answer) == {"ratings": dict.fromkeys(ALL_SEVENS, 3)}


def test_gold_may_rate_some_questions_and_scores_exact_matches():
    gold = KIND.validate_gold(item(), {"ratings": {"edit_main": 1}})
    assert gold == {"ratings": {"edit_main": 1}}
    checked = item(gold=gold)
    assert KIND.score(checked, {"ratings": {**ALL_SEVENS, "edit_main": 1}}).correct is True
    wrong = KIND.score(checked, {"ratings": ALL_SEVENS})
    assert wrong.correct is False and wrong.details == {"mismatched": ["edit_main"]}
    assert KIND.score(item(), {"ratings": ALL_SEVENS}) is None


def test_page_groups_questions_under_their_passage_and_never_shows_gold_or_provenance():
    it = item(gold={"ratings": {"edit_main": 1}})
    it.provenance = {"system": "ROME"}
    context = KIND.page_context(it, None)
    by_group = {g["key"]: [q["id"] for q in g["questions"]] for g in context["groups"]}
    assert by_group == {
        "main": ["edit_main", "factual_main", "internal_main"],
        "related": ["edit_related", "factual_related", "internal_related"],
        "both": ["cross_passage", "topicality", "naturalness"],
    }
    assert context["groups"][1]["text"] == PAYLOAD["related_passage"]
    assert [p["label"] for p in context["scale"]] == SEVEN_LABELS
    assert "ROME" not in repr(context) and "gold" not in repr(context)


def test_agreement_values_are_ordinal_per_question():
    values = KIND.agreement_values(item(), {"ratings": {**ALL_SEVENS, "edit_main": 2}})
    assert len(values) == 9 and {v.level for v in values} == {"ordinal"}
    assert next(v for v in values if v.question == "edit_main").value == 2
    assert {v.unit for v in values} == {"i1"}


def test_a_worked_example_shows_only_the_statements_it_rates_and_every_passage():
    context = KIND.review_context(item(), {"ratings": {"edit_main": 7, "cross_passage": 1}})
    shown = {g["key"]: [(q["id"], q["selected"]) for q in g["questions"]] for g in context["groups"]}
    assert shown == {"main": [("edit_main", "7")], "related": [], "both": [("cross_passage", "1")]}
    assert context["readonly"] is True and context["groups"][1]["text"] == PAYLOAD["related_passage"]


def test_text_limits_are_generous_for_real_facts_and_passages():
    """LEME's old facts run past a thousand characters; passages are articles (docs/formats.md)."""
    long_fact, article = "An old fact, told at length. " * 100, "A sentence of the article. " * 1500
    payload = {"new_fact": long_fact, "old_facts": [long_fact], "main_passage": article}
    assert KIND.validate_payload(payload, KIND.validate_config({}))["old_facts"] == [long_fact.strip()]
    too_long = {**payload, "old_facts": [long_fact * 2]}
    assert "old_facts" in str(errors_of(lambda: KIND.validate_payload(too_long, KIND.validate_config({}))))
