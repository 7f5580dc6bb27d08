"""The plausibility kind: shapes, explanations numbered in a drawn order (ids never shown),
scoring against gold, ordinal agreement values."""

import random

import pytest
from django.http import QueryDict

from annotation.kinds import get_kind
from annotation.models import Assignment, Item
from tests.kinds import errors_of, kind_item

KIND = get_kind("plausibility")
PAYLOAD = {
    "question": "Is a marathon longer than 40 km?",
    "answer": "Yes",
    "explanations": [
        {"id": "model-x/cot", "text": "A marathon is about 42.2 km, more than 40. So yes."},
        {"id": "model-y/post-hoc", "text": "Marathons are long. So yes."},
        {"id": "model-z/cot", "text": "A marathon is 26 km. So yes."},
    ],
}
IDS = [e["id"] for e in PAYLOAD["explanations"]]


def item(gold=None) -> Item:
    return kind_item("plausibility", PAYLOAD, gold=gold, external_id="q1")


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**PAYLOAD, "question": ""}, "question"),
        ({k: v for k, v in PAYLOAD.items() if k != "answer"}, "answer"),
        ({**PAYLOAD, "explanations": []}, "explanations"),
        ({**PAYLOAD, "explanations": [PAYLOAD["explanations"][0]] * 2}, "explanations"),
        ({**PAYLOAD, "explanations": [{"id": "has space", "text": "t"}]}, "explanations"),
        ({**PAYLOAD, "explanations": [{"id": "a"}]}, "explanations"),
        ({**PAYLOAD, "gold": "yes"}, "gold"),
    ],
)
def test_payload_rejections_name_the_field(payload, field):
    assert any(path.startswith(field) for path in errors_of(lambda: KIND.validate_payload(payload, {})))


def test_every_explanation_needs_yes_moderate_or_no():
    full = {"model-x/cot": "yes", "model-y/post-hoc": "no", "model-z/cot": "moderate"}
    assert KIND.validate_answer(item(), {"ratings": full}) == {"ratings": full}
    errors = errors_of(lambda: KIND.validate_answer(item(), {"ratings": {**full, "model-z/cot": "maybe"}}))
    assert "ratings.model-z/cot" in errors
    missing = errors_of(lambda: KIND.validate_answer(item(), {"ratings": {"model-x/cot": "yes"}}))
    assert (
        "ratings.model-y/post-hoc" in missing and "Rate explanation 2." in missing["ratings.model-y/post-hoc"]
    )
    assert "ratings.other" in errors_of(
        lambda: KIND.validate_answer(item(), {"ratings": {**full, "other": "no"}})
    )


def test_explanations_are_numbered_in_the_drawn_order_without_ids():
    it = item()
    state = KIND.prepare_assignment(it, random.Random(3))
    assert sorted(state["order"]) == sorted(IDS)
    assert state == KIND.prepare_assignment(it, random.Random(3))
    assignment = Assignment(item=it, state=state)
    context = KIND.page_context(it, assignment)
    texts = {e["id"]: e["text"] for e in PAYLOAD["explanations"]}
    assert [e["text"] for e in context["explanations"]] == [texts[key] for key in state["order"]]
    assert not any(key in repr(context) for key in IDS)
    form = QueryDict("rating-1=yes&rating-2=no&rating-3=moderate")
    answer = KIND.validate_answer(it, KIND.answer_from_form(form, it, assignment), state=state)
    assert answer["ratings"] == dict(zip(state["order"], ["yes", "no", "moderate"], strict=True))


def test_gold_scores_the_explanations_it_names():
    gold = KIND.validate_gold(item(), {"ratings": {"model-z/cot": "moderate"}})
    checked = item(gold=gold)
    ratings = {"model-x/cot": "yes", "model-y/post-hoc": "no", "model-z/cot": "moderate"}
    assert KIND.score(checked, {"ratings": ratings}).correct is True
    assert KIND.score(checked, {"ratings": {**ratings, "model-z/cot": "yes"}}).correct is False
    assert KIND.score(item(), {"ratings": ratings}) is None


def test_agreement_values_are_ordinal_per_explanation():
    ratings = {"model-x/cot": "yes", "model-y/post-hoc": "no", "model-z/cot": "moderate"}
    values = {(v.unit, v.value, v.level) for v in KIND.agreement_values(item(), {"ratings": ratings})}
    assert values == {
        ("q1#model-x/cot", 2, "ordinal"),
        ("q1#model-y/post-hoc", 0, "ordinal"),
        ("q1#model-z/cot", 1, "ordinal"),
    }
