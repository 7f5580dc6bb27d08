"""An enrollment's totals (answers, points, attention checks passed and failed) have one
writer, ``count_answers``: a submit, an import, a judge's verdict, a recorded attention
check and a guest's answers moved to an account all add through it."""

import pytest

from annotation.models import Enrollment
from annotation.services.participation.attention import record_attention_outcome
from annotation.services.participation.participants import count_answers
from tests.factories import AnsweredResponseFactory, ItemFactory, ParticipantFactory, StudyFactory

pytestmark = pytest.mark.django_db


def enrollment_of(study) -> Enrollment:
    return Enrollment.objects.get(participant=ParticipantFactory(enrolled_in=study), study=study)


def test_count_answers_adds_attention_checks_with_the_answers():
    enrollment = enrollment_of(StudyFactory())
    counted = count_answers(
        participant_id=enrollment.participant_id,
        study_id=enrollment.study_id,
        answers=3,
        points=2.5,
        passed=2,
        failed=1,
    )
    enrollment.refresh_from_db()
    assert (enrollment.answered_count, enrollment.points_total) == (3, 2.5)
    assert (enrollment.attention_passed, enrollment.attention_failed) == (2, 1)
    assert counted.enrollment_id == enrollment.pk and counted.attention_failed == 1


def test_taking_answers_away_never_goes_below_zero():
    enrollment = enrollment_of(StudyFactory())
    ids = {"participant_id": enrollment.participant_id, "study_id": enrollment.study_id}
    count_answers(**ids, answers=1, points=1.0, passed=1)
    count_answers(**ids, answers=-2, points=-1.0, passed=-3, failed=-1)
    enrollment.refresh_from_db()
    assert (enrollment.answered_count, enrollment.points_total) == (0, 0.0)
    assert (enrollment.attention_passed, enrollment.attention_failed) == (0, 0)


def test_a_recorded_attention_check_counts_through_the_same_writer():
    enrollment = enrollment_of(StudyFactory())
    assert record_attention_outcome(enrollment=enrollment, passed=True) is False
    record_attention_outcome(enrollment=enrollment, passed=False)
    enrollment.refresh_from_db()
    assert (enrollment.attention_passed, enrollment.attention_failed, enrollment.answered_count) == (1, 1, 0)


def test_a_factory_built_enrollment_counts_its_responses():
    """The test factory stores answers as the site does, totals included: an enrollment
    never holds fewer answers than its responses."""
    study = StudyFactory()
    items = ItemFactory.create_batch(3, study=study)
    check = ItemFactory(study=study, attention_check=True)
    for item, points in zip(items, (1.0, 0.5, None), strict=True):
        AnsweredResponseFactory(study=study, item=item, participant="ann", points=points)
    AnsweredResponseFactory(study=study, item=check, participant="ann", correct=False)

    enrollment = Enrollment.objects.get(participant__platform_worker_id="ann", study=study)
    assert enrollment.answered_count == enrollment.participant.responses.count() == 4
    assert enrollment.points_total == 1.5
    assert (enrollment.attention_passed, enrollment.attention_failed) == (0, 1)
