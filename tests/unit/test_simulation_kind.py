"""The simulation kind (yes_no and pairwise variants): shapes, what the page may show,
scoring against gold and against the model's real follow-up answer."""

import pytest
from django.http import QueryDict

from annotation.kinds import get_kind
from annotation.models import Item
from tests.kinds import errors_of, kind_item

KIND = get_kind("simulation")
YES_NO = {
    "variant": "yes_no",
    "starter_question": "Can a kettle boil seawater?",
    "model_answer": "yes",
    "model_explanation": "Kettles heat water past 100 °C and salt does not stop that. So yes.",
    "followup_question": "Can a kettle boil olive oil?",
    "model_followup_answer": "no",
    "explanation_id": "kettle-1",
}
PAIRWISE = {
    "variant": "pairwise",
    "starter_context": "How do I fix a squeaky door?",
    "starter_responses": ["Oil the hinges and open it a few times.", "Doors squeak."],
    "model_choice": "response_1",
    "model_explanation": "Response 1 gives steps.",
    "followup_context": "How do I clean a cast-iron pan?",
    "followup_responses": ["Pans are hard.", "Scrub with salt, rinse, dry on the hob, oil lightly."],
    "model_followup_answer": "response_2",
    "explanation_id": "steps-1",
}


def item(payload, gold=None) -> Item:
    return kind_item("simulation", payload, gold=gold, external_id="cf-1")


def test_both_variants_validate():
    assert KIND.validate_payload(YES_NO, {}) == YES_NO
    assert KIND.validate_payload(PAIRWISE, {}) == PAIRWISE


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**YES_NO, "variant": "multiple_choice"}, "variant"),
        ({k: v for k, v in YES_NO.items() if k != "variant"}, "variant"),
        ({k: v for k, v in YES_NO.items() if k != "model_followup_answer"}, "model_followup_answer"),
        ({**YES_NO, "model_followup_answer": "maybe"}, "model_followup_answer"),
        ({**YES_NO, "model_answer": "response_1"}, "model_answer"),
        ({k: v for k, v in YES_NO.items() if k != "explanation_id"}, "explanation_id"),
        ({**YES_NO, "starter_context": "x"}, "starter_context"),
        ({**PAIRWISE, "starter_responses": ["only one"]}, "starter_responses"),
        ({**PAIRWISE, "followup_responses": ["a", "b", "c"]}, "followup_responses"),
        ({**PAIRWISE, "model_followup_answer": "yes"}, "model_followup_answer"),
        ({**PAIRWISE, "model_choice": "either"}, "model_choice"),
        ({**PAIRWISE, "followup_question": "x"}, "followup_question"),
    ],
)
def test_payload_rejections_name_the_field(payload, field):
    assert field in errors_of(lambda: KIND.validate_payload(payload, {}))


@pytest.mark.parametrize(
    ("payload", "good", "bad"),
    [
        (YES_NO, ["not_helpful", "yes", "no"], ["either", "response_1", "", "YES"]),
        (PAIRWISE, ["response_1", "response_2", "either"], ["yes", "not_helpful", ""]),
    ],
)
def test_answers_depend_on_the_variant(payload, good, bad):
    for choice in good:
        assert KIND.validate_answer(item(payload), {"choice": choice}) == {"choice": choice}
    for choice in bad:
        assert "choice" in errors_of(lambda c=choice: KIND.validate_answer(item(payload), {"choice": c}))
    assert "choice" in errors_of(lambda: KIND.validate_answer(item(payload), {}))
    assert "correct" in errors_of(
        lambda: KIND.validate_answer(item(payload), {"choice": good[0], "correct": 1})
    )


@pytest.mark.parametrize("payload", [YES_NO, PAIRWISE])
def test_page_never_carries_the_model_followup_answer(payload):
    context = KIND.page_context(item(payload), None)
    assert "model_followup_answer" not in context and "explanation_id" not in context
    flipped = {**payload, "model_followup_answer": "yes" if payload["variant"] == "yes_no" else "response_1"}
    assert KIND.page_context(item(flipped), None) == context


def test_page_shows_the_starter_output_and_explanation():
    yes_no = KIND.page_context(item(YES_NO), None)
    assert yes_no["model_answer"] == "Yes" and yes_no["model_explanation"] == YES_NO["model_explanation"]
    assert yes_no["followup_question"] == YES_NO["followup_question"]
    pairwise = KIND.page_context(item(PAIRWISE), None)
    assert pairwise["model_choice"] == "Response 1"
    assert pairwise["followup_responses"] == PAIRWISE["followup_responses"]
    assert [o["value"] for o in pairwise["options"]] == ["response_1", "response_2", "either"]


def test_score_records_simulatability_and_agreement_with_the_model():
    yes_no = item(YES_NO)
    matched = KIND.score(yes_no, {"choice": "no"})
    assert matched.correct is None and matched.details == {"simulatable": True, "matches_model": True}
    assert KIND.score(yes_no, {"choice": "yes"}).details == {"simulatable": True, "matches_model": False}
    assert KIND.score(yes_no, {"choice": "not_helpful"}).details == {
        "simulatable": False,
        "matches_model": None,
    }
    assert KIND.score(item(PAIRWISE), {"choice": "either"}).details["simulatable"] is False


def test_gold_decides_correct_on_qualification_items():
    gold = KIND.validate_gold(item(YES_NO), {"choice": "not_helpful"})
    qualification = item(YES_NO, gold=gold)
    assert KIND.score(qualification, {"choice": "not_helpful"}).correct is True
    assert KIND.score(qualification, {"choice": "no"}).correct is False


def test_form_and_agreement_values():
    answer = KIND.answer_from_form(QueryDict("choice=either"), item(PAIRWISE), None)
    assert KIND.validate_answer(item(PAIRWISE), answer) == {"choice": "either"}
    values = {(v.question, v.value, v.level) for v in KIND.agreement_values(item(PAIRWISE), answer)}
    assert values == {("choice", "either", "nominal"), ("simulatable", 0, "nominal")}
