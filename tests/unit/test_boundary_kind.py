"""The boundary kind: what it accepts, what a page may show, how it scores."""

import pytest

from annotation.kinds import get_kind
from annotation.kinds.boundary import REASON_CATEGORY_VALUES
from annotation.models import Assignment, Item, Study
from tests.game_helpers import boundary_item, sentence_text
from tests.kinds import error_detail, kind_item

KIND = get_kind("boundary")


def payload(**changes) -> dict:
    return {**boundary_item(1, boundary=4)["payload"], **changes}


def item(boundary: int = 4, *, attention: bool = False, **changes) -> Item:
    gold = {"guess": boundary} if attention else None
    payload_ = payload(boundary=boundary, **changes)
    return kind_item("boundary", payload_, gold=gold, external_id="x", attention=attention)


def test_payload_from_the_pipeline_shape_is_accepted():
    assert KIND.validate_payload(payload(), {})["boundary"] == 4


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"boundary": 11}, "boundary"),
        ({"boundary": 0}, "boundary"),
        ({"sentences": ["Only one."]}, "sentences"),
        ({"sentences": [f"S {i}." for i in range(21)]}, "sentences"),
        ({"sentences": ["A.", ""]}, "sentences"),
        ({"category": "News Reports"}, "category"),
        ({"p": 1.5}, "p"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_payloads_name_the_field(changes, field):
    data = payload(**changes)
    if field == "boundary" and "sentences" not in changes:
        data["sentences"] = data["sentences"][:10]
    assert field in error_detail(lambda: KIND.validate_payload(data, {}))


def test_model_and_p_are_needed_only_when_a_machine_wrote_part():
    machine = payload()
    del machine["model"], machine["p"]
    assert set(error_detail(lambda: KIND.validate_payload(machine, {}))) == {"model", "p"}
    human = {"sentences": ["One sentence.", "Another sentence."], "boundary": 2, "category": "news"}
    assert KIND.validate_payload(human, {})["boundary"] == 2


def test_answer_rules():
    passage = item(boundary=4)
    assert KIND.validate_answer(passage, {"guess": 10})["reason"] == ""  # all human: reason optional
    assert "reason" in error_detail(lambda: KIND.validate_answer(passage, {"guess": 3}))
    assert "guess" in error_detail(lambda: KIND.validate_answer(passage, {"guess": 11, "reason": "x"}))
    assert "guess" in error_detail(lambda: KIND.validate_answer(passage, {"guess": 0, "reason": "x"}))
    bad_category = {"guess": 3, "reason": "x", "reason_categories": ["vibes"]}
    assert "reason_categories" in error_detail(lambda: KIND.validate_answer(passage, bad_category))
    twice = {"guess": 3, "reason": "x", "reason_categories": ["grammar", "grammar"]}
    assert "reason_categories" in error_detail(lambda: KIND.validate_answer(passage, twice))
    ordered = KIND.validate_answer(
        passage, {"guess": 3, "reason": "x", "reason_categories": ["generic", "grammar"]}
    )
    assert ordered["reason_categories"] == ["grammar", "generic"]
    assert set(REASON_CATEGORY_VALUES) >= {"repetition", "coreference", "common_sense"}


def test_on_the_site_the_answer_must_keep_the_rounds_guess():
    passage = item(boundary=4)
    no_guess = {"revealed": 3, "reveals": [], "guess": None}
    assert "guess" in error_detail(
        lambda: KIND.validate_answer(passage, {"guess": 2, "reason": "x"}, state=no_guess)
    )
    other = {"revealed": 3, "reveals": [], "guess": 2}
    assert "guess" in error_detail(
        lambda: KIND.validate_answer(passage, {"guess": 1, "reason": "x"}, state=other)
    )
    assert KIND.validate_answer(passage, {"guess": 2, "reason": "x"}, state=other)["guess"] == 2


def test_guess_comes_from_the_round_state_not_the_form():
    from django.http import QueryDict

    assignment = Assignment(state={"revealed": 3, "guess": 2})
    form = QueryDict("guess=9&reason=late&reason_categories=grammar")
    assert KIND.answer_from_form(form, item(), assignment) == {
        "guess": 2,
        "reason": "late",
        "reason_categories": ["grammar"],
    }


def test_gold_must_be_the_boundary():
    assert "guess" in error_detail(lambda: KIND.validate_gold(item(boundary=4), {"guess": 5}))
    assert KIND.validate_gold(item(boundary=10), {"guess": 10}) == {"guess": 10}


def test_score_follows_the_rule_and_attention_checks_score_no_points():
    passage = item(boundary=4)
    late = KIND.score(passage, {"guess": 6})
    assert (late.points, late.correct, late.details) == (3, False, {"distance": 2})
    exact = KIND.score(passage, {"guess": 4})
    assert (exact.points, exact.correct) == (5, True)
    check = item(boundary=10, attention=True)
    assert KIND.score(check, {"guess": 10}).points is None
    assert KIND.score(check, {"guess": 10}).correct is True
    assert KIND.score(check, {"guess": 7}).correct is False


def test_page_context_shows_only_the_revealed_sentences():
    passage = item(boundary=4)
    context = KIND.page_context(passage, None)
    assert context["shown_sentences"] == [(0, sentence_text(1, 0))]
    assert not context["can_mark"] and context["can_reveal"]
    flat = repr(context)
    assert all(sentence_text(1, i) not in flat for i in range(1, 10))
    assert "boundary" not in flat


def test_agreement_values_come_from_the_declared_answer_field():
    from annotation.kinds import Observation, get_kind
    from annotation.models import Item

    item = Item(study=Study(config={}), external_id="p1", payload={})
    assert get_kind("boundary").agreement_values(item, {"guess": 4, "reason": "x"}) == [
        Observation("p1", "guess", 4, "interval")
    ]
