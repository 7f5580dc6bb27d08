"""The claim kind: payload and answer validation, scoring, agreement values, page context."""

import pytest

from annotation.kinds import Observation, all_kinds, get_kind
from annotation.models import Item
from tests.kinds import error_detail, kind_item

KIND = get_kind("claim")


def item(**payload) -> Item:
    return kind_item("claim", {"claim": "X is in Y.", "sentences": ["One.", "Two.", "Three."], **payload})


def test_registry_finds_the_claim_module():
    assert "claim" in all_kinds()
    assert KIND.template == "annotation/kinds/claim.html"


def test_payload_accepts_sentences_or_a_passage_split_here():
    assert KIND.validate_payload({"claim": "c", "sentences": ["a.", "b."]}, {})["sentences"] == ["a.", "b."]
    split = KIND.validate_payload({"claim": "c", "passage": "First one here. Second one there."}, {})
    assert split["sentences"] == ["First one here.", "Second one there."]
    assert "passage" not in split


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"sentences": ["a"]}, "claim"),
        ({"claim": "c"}, "sentences"),
        ({"claim": "c", "sentences": ["a"], "passage": "b"}, "sentences"),
        ({"claim": "c", "sentences": []}, "sentences"),
        ({"claim": "c", "sentences": ["a", ""]}, "sentences"),
        ({"claim": "", "sentences": ["a"]}, "claim"),
        ({"claim": "c", "sentences": ["a"], "boundary": 3}, "boundary"),
    ],
)
def test_payload_rejections_name_the_field(payload, field):
    assert field in error_detail(lambda: KIND.validate_payload(payload, {}))


def test_answer_normalises_evidence():
    answer = KIND.validate_answer(item(), {"label": "supports", "evidence": ["2", 0]})
    assert answer == {"label": "supports", "evidence": [0, 2]}


@pytest.mark.parametrize(
    ("answer", "field"),
    [
        ({"label": "maybe", "evidence": [0]}, "label"),
        ({"evidence": [0]}, "label"),
        ({"label": "supports", "evidence": [3]}, "evidence"),
        ({"label": "supports", "evidence": [-1]}, "evidence"),
        ({"label": "supports", "evidence": ["x"]}, "evidence"),
        ({"label": "supports", "evidence": [1, 1]}, "evidence"),
        ({"label": "supports", "evidence": []}, "evidence"),
        ({"label": "neutral", "evidence": [0]}, "evidence"),
        ({"label": "neutral", "points": 5}, "points"),
    ],
)
def test_answer_rejections_name_the_field(answer, field):
    assert field in error_detail(lambda: KIND.validate_answer(item(), answer))


def test_gold_may_omit_evidence():
    assert KIND.validate_gold(item(), {"label": "contradicts"}) == {"label": "contradicts", "evidence": []}


def test_score_against_gold():
    it = item()
    assert KIND.score(it, {"label": "supports", "evidence": [0]}) is None
    it.gold = {"label": "supports", "evidence": [0, 1]}
    score = KIND.score(it, {"label": "supports", "evidence": [1, 2]})
    assert score.correct is True
    assert score.details["evidence_f1"] == pytest.approx(0.5)
    assert KIND.score(it, {"label": "neutral", "evidence": []}).correct is False


def test_page_context_never_carries_gold():
    it = item()
    it.gold = {"label": "contradicts", "evidence": [2]}
    context = KIND.page_context(it, None)
    assert "contradicts" not in repr({k: v for k, v in context.items() if k != "labels"})
    assert [(row["value"], row["text"], row["key"]) for row in context["sentences"]] == [
        ("0", "One.", "a"),
        ("1", "Two.", "b"),
        ("2", "Three.", "c"),
    ]


def test_agreement_values_cover_label_and_each_sentence():
    values = KIND.agreement_values(item(), {"label": "supports", "evidence": [1]})
    assert values[0] == Observation("i1", "label", "supports", "nominal")
    assert [(v.unit, v.value) for v in values[1:]] == [("i1#0", 0), ("i1#1", 1), ("i1#2", 0)]


def test_form_fields_become_an_answer():
    from django.http import QueryDict

    form = QueryDict("label=supports&evidence=0&evidence=2")
    assert KIND.answer_from_form(form, item(), None) == {"label": "supports", "evidence": ["0", "2"]}


def test_a_trained_rater_s_evidence_is_every_sentence_that_carries_its_label_alone():
    """The kind turns its rater's outputs into its answer: the label from the whole passage,
    then the sentences that alone give that label with probability >= 0.5 (or the best one)."""
    (question,) = KIND.rater_questions({})
    calls = []

    def read(asked, pairs):
        calls.append(pairs)
        if len(calls) == 1:  # the whole passages: supports, neutral
            return [[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]
        return [[0.6, 0.3, 0.1], [0.2, 0.1, 0.7], [0.9, 0.05, 0.05]]  # item one's sentences

    first, second = item(), item(claim="Z.")
    answers = KIND.rater_answers([question], [first, second], read)
    assert [a.answer for a in answers] == [
        {"label": "supports", "evidence": [0, 2]},
        {"label": "neutral", "evidence": []},
    ]
    assert calls[1] == [("One.", "X is in Y."), ("Two.", "X is in Y."), ("Three.", "X is in Y.")]
    assert answers[0].details["sentence_probabilities"] == [0.6, 0.2, 0.9]
    assert KIND.validate_answer(first, answers[0].answer) == answers[0].answer


def test_a_trained_rater_with_no_sentence_over_the_threshold_takes_the_best_one():
    (question,) = KIND.rater_questions({})
    outputs = iter([[[0.1, 0.8, 0.1]], [[0.3, 0.4, 0.3], [0.2, 0.45, 0.35], [0.5, 0.1, 0.4]]])
    (answer,) = KIND.rater_answers([question], [item()], lambda asked, pairs: next(outputs))
    assert answer.answer == {"label": "contradicts", "evidence": [1]}
