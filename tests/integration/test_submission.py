"""submit_response: validated once, stored once, scored on the server."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Assignment, Enrollment, Response
from annotation.services.participation.assignment import assign_next_item, release_expired_assignments
from annotation.services.participation.submission import SubmissionClosed, submit_response

pytestmark = pytest.mark.django_db


def test_double_submit_stores_one_response(make_claim_study, enrolled):
    study = make_claim_study()
    participant = enrolled(study)
    assignment = assign_next_item(participant=participant, study=study)
    first = submit_response(assignment=assignment, answer={"label": "supports", "evidence": [0]})
    second = submit_response(assignment=assignment, answer={"label": "neutral", "evidence": []})
    assert first.created and not second.created
    assert second.response.pk == first.response.pk
    assert Response.objects.count() == 1
    assert Response.objects.get().answer["label"] == "supports"
    assert Enrollment.objects.get(participant=participant).answered_count == 1


def test_score_comes_from_gold_on_the_server(make_claim_study, enrolled):
    study = make_claim_study()
    assignment = assign_next_item(participant=enrolled(study), study=study)
    result = submit_response(assignment=assignment, answer={"label": "supports", "evidence": [0, 1]})
    assert result.response.correct is True
    assert result.response.score_details["evidence_f1"] == pytest.approx(2 / 3)


def test_the_duration_runs_from_the_page_shown_to_the_answer(make_claim_study, enrolled):
    """A page shown 90 seconds ago: its answer took (at least) those 90 seconds, measured
    from the showing time the page recorded to the answer's own time."""
    study = make_claim_study()
    assignment = assign_next_item(participant=enrolled(study), study=study)
    shown = timezone.now() - timedelta(seconds=90)
    Assignment.objects.filter(pk=assignment.pk).update(shown_at=shown)
    assignment.refresh_from_db()
    response = submit_response(assignment=assignment, answer={"label": "supports", "evidence": [0]}).response
    assert response.shown_at == shown
    assert response.duration_seconds == pytest.approx((response.answered_at - shown).total_seconds())
    assert response.duration_seconds >= 90


@pytest.mark.parametrize(
    ("answer", "field"),
    [
        ({"label": "nope", "evidence": []}, "label"),
        ({"label": "supports", "evidence": [9]}, "evidence"),
        ({"label": "supports"}, "evidence"),
        ({"label": "neutral", "evidence": [], "correct": True}, "correct"),
    ],
)
def test_bad_answer_names_the_field_and_writes_nothing(make_claim_study, enrolled, answer, field):
    study = make_claim_study()
    assignment = assign_next_item(participant=enrolled(study), study=study)
    with pytest.raises(InputError) as exc:
        submit_response(assignment=assignment, answer=answer)
    assert field in exc.value.errors
    assert Response.objects.count() == 0
    assignment.refresh_from_db()
    assert assignment.status == "assigned"


def test_expired_assignment_cannot_be_answered(make_claim_study, enrolled):
    study = make_claim_study()
    assignment = assign_next_item(participant=enrolled(study), study=study)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    release_expired_assignments()
    with pytest.raises(SubmissionClosed):
        submit_response(assignment=assignment, answer={"label": "neutral", "evidence": []})
    assert Response.objects.count() == 0


def test_failing_attention_checks_screens_out_and_flags_responses(make_claim_study, enrolled):
    study = make_claim_study(items=4, attention=1, items_per_session=3, attention_check_rate=0.34)
    participant = enrolled(study)
    outcomes = []
    while (assignment := assign_next_item(participant=participant, study=study)) is not None:
        answer = {"label": "supports", "evidence": [0]}  # wrong for the check (gold: neutral)
        outcomes.append(submit_response(assignment=assignment, answer=answer).screened_out)
    assert outcomes[-1] is True
    enrollment = Enrollment.objects.get(participant=participant)
    assert enrollment.status == "screened_out" and enrollment.attention_failed == 1
    assert enrollment.flagged and enrollment.flag_reason == "failed attention checks"  # in this study
    assert set(Response.objects.filter(participant=participant).values_list("flagged", flat=True)) == {True}
