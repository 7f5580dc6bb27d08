"""Model participants (LLM simulators, automatic raters) answer through the kind's
validation and the one response writer; their raw outputs, parsed or not, are kept.
On PostgreSQL, through ``annotation.services.analysis.model_answers``."""

from __future__ import annotations

import pytest

from annotation.errors import InputError
from annotation.models import Assignment, Enrollment, ModelOutput, Participant, Response
from annotation.services.analysis.model_answers import (
    ModelAnswer,
    items_for_model,
    model_participant,
    store_model_answers,
)
from tests.factories import ItemFactory, StudyFactory

pytestmark = pytest.mark.django_db

DEFINITION = {"kind": "llm", "model": "/models/tiny-lm/", "version": "claim-v1", "shots": 2, "seed": 7}


def test_one_participant_per_definition_and_its_definition_is_kept():
    first = model_participant(DEFINITION)
    again = model_participant(dict(DEFINITION))
    other = model_participant({**DEFINITION, "shots": 0})
    assert first.pk == again.pk != other.pk
    assert first.source == Participant.Source.MODEL
    assert first.definition == DEFINITION
    assert first.platform_worker_id.startswith("llm:tiny-lm:claim-v1:")


def test_a_definition_without_its_kind_is_refused_naming_the_field():
    with pytest.raises(InputError) as caught:
        model_participant({"model": "m", "version": "1"})
    assert "definition.kind" in caught.value.errors
    assert not Participant.objects.filter(source=Participant.Source.MODEL).exists()


def test_answers_are_validated_stored_and_counted_and_a_rerun_adds_nothing():
    study = StudyFactory(kind="claim", annotations_per_item=1)
    good, bad, unparsed, check = (ItemFactory(study=study) for _ in range(4))
    check.is_attention_check = True
    check.save()
    rater = model_participant(DEFINITION)
    assert list(items_for_model(study, rater)) == [good, bad, unparsed]
    batch = [
        ModelAnswer(good, raw="supports, sentence 2", answer={"label": "supports", "evidence": [1]}),
        ModelAnswer(bad, raw="supports", answer={"label": "supports", "evidence": [9]}),
        ModelAnswer(unparsed, raw="I cannot tell.", answer=None, error="no label in the output"),
    ]

    result = store_model_answers(study, rater, batch)

    assert (result.created, result.invalid, result.unparseable, result.skipped) == (1, 1, 1, 0)
    response = Response.objects.get(participant=rater)
    assert response.item == good and response.answer == {"label": "supports", "evidence": [1]}
    assert response.too_fast is False and response.duration_seconds is None
    outputs = {o.item_id: o for o in ModelOutput.objects.filter(participant=rater)}
    assert outputs[good.pk].response == response and outputs[good.pk].raw == "supports, sentence 2"
    assert "evidence" in outputs[bad.pk].error and outputs[bad.pk].response is None
    assert outputs[unparsed.pk].error == "no label in the output"
    enrollment = Enrollment.objects.get(participant=rater, study=study)
    assert enrollment.status == Enrollment.Status.COMPLETED and enrollment.answered_count == 1
    # A model's answer takes no slot: people still have every item to do.
    assert Assignment.objects.get(participant=rater).status == Assignment.Status.ANSWERED
    assert Assignment.objects.get(participant=rater).position == 1
    assert all(item.slots_taken == 0 for item in type(good).objects.filter(study=study))

    assert list(items_for_model(study, rater)) == []
    again = store_model_answers(study, rater, batch)
    assert (again.created, again.skipped) == (0, 3)
    assert Response.objects.filter(participant=rater).count() == 1


def test_a_person_cannot_answer_through_the_model_path():
    study = StudyFactory(kind="claim")
    item = ItemFactory(study=study)
    person = Participant.objects.create(source=Participant.Source.LAB, platform_worker_id="p1")
    with pytest.raises(InputError) as caught:
        store_model_answers(study, person, [ModelAnswer(item, raw="x", answer={"label": "neutral"})])
    assert "participant" in caught.value.errors
    assert not Response.objects.exists()


def test_the_items_left_to_a_model_come_with_their_study(django_assert_num_queries):
    """The kind reads the study's config for every item a model answers (its page, its
    questions, the validation): one query for the items, none per item."""
    study = StudyFactory(kind="claim")
    for n in range(3):
        ItemFactory(study=study, external_id=f"i{n}")
    participant = model_participant(DEFINITION)
    with django_assert_num_queries(1):
        items = list(items_for_model(study, participant))
        assert [item.study.config for item in items] == [study.config] * 3
