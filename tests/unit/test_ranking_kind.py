"""The ranking kind: shapes, the display order drawn per page, letters ↔ systems, no system
names on the page or in any error message, scoring and agreement values."""

import random

import pytest
from django.http import QueryDict

from annotation.kinds import get_kind
from annotation.models import Assignment, Item
from tests.kinds import errors_of, kind_item

KIND = get_kind("ranking")
SYSTEMS = ["sys-alpha-31", "sys-beta-47", "sys-gamma-59", "sys-delta-73"]
PAYLOAD = {
    "fact": "The Atomium is in Lyon.",
    "passages": [{"system": s, "text": f"Passage written by number {i}."} for i, s in enumerate(SYSTEMS)],
}


def item(config=None, gold=None, payload=None) -> Item:
    return kind_item("ranking", payload or PAYLOAD, config=config, gold=gold, external_id="case-1")


def answer(shown, consistency=(0, 1), fluency=(2, 0)) -> dict:
    return {
        "shown": shown,
        "choices": {
            "consistency": {"most": shown[consistency[0]], "least": shown[consistency[1]]},
            "fluency": {"most": shown[fluency[0]], "least": shown[fluency[1]]},
        },
    }


def test_default_config():
    config = KIND.validate_config({})
    assert config["show"] == 3
    assert [c["id"] for c in config["criteria"]] == ["consistency", "fluency"]
    assert all(c["most"] and c["least"] and c["title"] for c in config["criteria"])


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"show": 1}, "show"),
        ({"show": 9}, "show"),
        ({"criteria": []}, "criteria"),
        ({"criteria": [{"id": "c", "most": "m"}]}, "criteria.0.least"),
        ({"criteria": [{"id": "c", "most": "m", "least": "l"}] * 2}, "criteria"),
        ({"order": "fixed"}, "order"),
    ],
)
def test_config_rejections_name_the_field(config, field):
    assert field in errors_of(lambda: KIND.validate_config(config))


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"passages": PAYLOAD["passages"]}, "fact"),
        ({"fact": "f", "passages": PAYLOAD["passages"][:2]}, "passages"),
        ({"fact": "f", "passages": [PAYLOAD["passages"][0]] * 3}, "passages"),
        ({"fact": "f", "passages": [{"system": "a", "text": ""}] * 3}, "passages"),
        ({"fact": "f", "passages": [{"text": "t"}] * 3}, "passages"),
        ({**PAYLOAD, "prompt": "x"}, "prompt"),
    ],
)
def test_payload_rejections_name_the_field(payload, field):
    assert any(
        path.startswith(field)
        for path in errors_of(lambda: KIND.validate_payload(payload, KIND.validate_config({})))
    )


def test_show_decides_how_many_passages_an_item_needs():
    two = KIND.validate_config({"show": 2})
    assert KIND.validate_payload({"fact": "f", "passages": PAYLOAD["passages"][:2]}, two)


def test_the_page_order_is_drawn_reproducibly_and_varies():
    it = item()
    first = KIND.prepare_assignment(it, random.Random(5))
    assert first == KIND.prepare_assignment(it, random.Random(5))
    assert len(first["shown"]) == 3 and set(first["shown"]) <= set(SYSTEMS)
    orders = {tuple(KIND.prepare_assignment(it, random.Random(seed))["shown"]) for seed in range(40)}
    assert len(orders) > 10


def test_page_shows_letters_in_the_recorded_order_and_no_system():
    it = item()
    assignment = Assignment(item=it, state={"shown": ["sys-gamma-59", "sys-alpha-31", "sys-delta-73"]})
    context = KIND.page_context(it, assignment)
    assert [(p["letter"], p["text"]) for p in context["passages"]] == [
        ("A", "Passage written by number 2."),
        ("B", "Passage written by number 0."),
        ("C", "Passage written by number 3."),
    ]
    assert not any(system in repr(context) for system in SYSTEMS)


def test_letters_posted_back_become_systems():
    it = item()
    shown = ["sys-gamma-59", "sys-alpha-31", "sys-delta-73"]
    assignment = Assignment(item=it, state={"shown": shown})
    form = QueryDict("consistency-most=B&consistency-least=C&fluency-most=A&fluency-least=B")
    result = KIND.validate_answer(it, KIND.answer_from_form(form, it, assignment), state=assignment.state)
    assert result == {
        "shown": shown,
        "choices": {
            "consistency": {"most": "sys-alpha-31", "least": "sys-delta-73"},
            "fluency": {"most": "sys-gamma-59", "least": "sys-alpha-31"},
        },
    }


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ("consistency-most=A&consistency-least=A&fluency-most=A&fluency-least=B", "least", "different"),
        ("consistency-most=A&consistency-least=Z&fluency-most=A&fluency-least=B", "least", "pick the LEAST"),
        ("consistency-least=B&fluency-most=A&fluency-least=B", "most", "pick the MOST"),
        ("consistency-most=sys-beta-47&consistency-least=B&fluency-most=A&fluency-least=B", "most", "MOST"),
    ],
)
def test_bad_letters_are_named_and_messages_never_name_a_system(form, field, message):
    it = item()
    assignment = Assignment(item=it, state={"shown": SYSTEMS[:3]})
    posted = KIND.answer_from_form(QueryDict(form), it, assignment)
    errors = errors_of(lambda: KIND.validate_answer(it, posted, state=assignment.state))
    assert f"choices.consistency.{field}" in errors
    assert message in " ".join(errors[f"choices.consistency.{field}"])
    assert not any(system in repr(errors) for system in SYSTEMS)


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({**answer(SYSTEMS[:3]), "shown": SYSTEMS[:2]}, "shown"),
        ({**answer(SYSTEMS[:3]), "shown": [SYSTEMS[0], SYSTEMS[0], SYSTEMS[1]]}, "shown"),
        ({**answer(SYSTEMS[:3]), "shown": [*SYSTEMS[:2], "sys-unknown"]}, "shown"),
        (
            {"shown": SYSTEMS[:3], "choices": {"consistency": {"most": SYSTEMS[0], "least": SYSTEMS[1]}}},
            "choices.fluency",
        ),
        (
            {**answer(SYSTEMS[:3]), "choices": {**answer(SYSTEMS[:3])["choices"], "style": {}}},
            "choices.style",
        ),
        (answer(SYSTEMS[:3], consistency=(0, 0)), "choices.consistency.least"),
        ({**answer(SYSTEMS[:3]), "points": 3}, "points"),
    ],
)
def test_imported_answers_are_checked_against_the_item(given, field):
    assert field in errors_of(lambda: KIND.import_answer(item(), given))


def test_an_answer_choosing_a_system_not_shown_is_rejected():
    given = answer(SYSTEMS[:3])
    given["choices"]["consistency"]["most"] = SYSTEMS[3]
    assert "choices.consistency.most" in errors_of(lambda: KIND.import_answer(item(), given))


def test_a_participant_cannot_claim_another_display_order():
    it = item()
    errors = errors_of(lambda: KIND.validate_answer(it, answer(SYSTEMS[1:4]), state={"shown": SYSTEMS[:3]}))
    assert "shown" in errors


def test_import_answer_records_the_shown_order_as_state():
    stored, state = KIND.import_answer(item(), answer(SYSTEMS[1:4]))
    assert state == {"shown": SYSTEMS[1:4]} and stored["shown"] == SYSTEMS[1:4]


def test_gold_needs_all_passages_shown_and_scores_what_it_names():
    three = {**PAYLOAD, "passages": PAYLOAD["passages"][:3]}
    assert "choices" in errors_of(
        lambda: KIND.validate_gold(item(), {"choices": {"fluency": {"least": SYSTEMS[0]}}})
    )
    gold = KIND.validate_gold(item(payload=three), {"choices": {"fluency": {"least": SYSTEMS[2]}}})
    checked = item(payload=three, gold=gold)
    assert KIND.score(checked, answer(SYSTEMS[:3], fluency=(0, 2))).correct is True
    miss = KIND.score(checked, answer(SYSTEMS[:3], fluency=(2, 0)))
    assert miss.correct is False and miss.details == {"mismatched": ["fluency.least"]}
    assert KIND.score(item(payload=three), answer(SYSTEMS[:3])) is None
    assert "choices.style" in errors_of(
        lambda: KIND.validate_gold(item(payload=three), {"choices": {"style": {}}})
    )


def test_agreement_values_give_choices_and_best_worst_per_system():
    values = KIND.agreement_values(item(), answer(SYSTEMS[:3]))
    nominal = {(v.question, v.value) for v in values if v.level == "nominal"}
    assert ("consistency.most", SYSTEMS[0]) in nominal and ("fluency.least", SYSTEMS[0]) in nominal
    per_system = {(v.unit, v.question): v.value for v in values if v.level == "ordinal"}
    assert per_system[("case-1#sys-alpha-31", "consistency")] == 1
    assert per_system[("case-1#sys-beta-47", "consistency")] == -1
    assert per_system[("case-1#sys-gamma-59", "consistency")] == 0


def test_review_context_marks_the_chosen_letters():
    it = item(payload={**PAYLOAD, "passages": PAYLOAD["passages"][:3]})
    context = KIND.review_context(it, {"choices": {"consistency": {"most": SYSTEMS[1], "least": SYSTEMS[2]}}})
    rows = {row["field"]: row["selected"] for c in context["criteria"] for row in c["rows"]}
    assert rows["consistency-most"] == "B" and rows["consistency-least"] == "C" and rows["fluency-most"] == ""
