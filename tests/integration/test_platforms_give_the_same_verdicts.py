"""Prolific and MTurk give the same verdicts and tallies for the same enrollments: the review
is one loop (``annotation.platforms.review``) and each platform only lists its submissions
and carries the decisions. One test, run against both stand-ins: the Prolific fake
(tests/helpers/fake_prolific.py) and botocore's ``Stubber`` on the MTurk client."""

from __future__ import annotations

from io import StringIO

import pytest
from botocore.stub import ANY
from django.core.management import call_command

from annotation.models import Enrollment, Job, Participant, PlatformDecision, PlatformStudy
from annotation.services.participation.flags import flag_in_study
from tests.helpers.platforms import BAD, GOOD, crowd_participant, named

pytestmark = pytest.mark.django_db

# The same people on either platform (one platform id each), listed in this order.
GOOD_ID, BAD_ID, FLAGGED_ID, UNFINISHED_ID, STRANGER_ID = (
    "worker-good",
    "worker-bad",
    "worker-flagged",
    "worker-unfinished",
    "worker-stranger",
)
LISTED = [GOOD_ID, BAD_ID, FLAGGED_ID, UNFINISHED_ID, STRANGER_ID]
DECIDED = {GOOD_ID: "APPROVE", BAD_ID: "REJECT"}  # the others are left to the researcher
NOT_OURS = "not a participant of this study here (no session under this id)"


def enroll_everyone(study, source: str) -> None:
    """Who took part, on ``source``: one finished, one screened out by the attention checks,
    one finished but flagged by the researcher, one who stopped after a page. The stranger
    is listed by the platform and unknown here."""

    def person(worker_id: str, answer: dict, pages: int | None = None) -> Participant:
        session = (
            {"assignmentId": f"as-{worker_id}", "hitId": "HIT1"}
            if source == Participant.Source.MTURK
            else {"SESSION_ID": worker_id}
        )
        return crowd_participant(study, worker_id, answer, pages, source=source, session=session)

    person(GOOD_ID, GOOD)
    person(BAD_ID, BAD)
    flagged = person(FLAGGED_ID, GOOD)
    flag_in_study(Enrollment.objects.get(participant=flagged, study=study), reason="copied answers")
    person(UNFINISHED_ID, GOOD, pages=1)


def review_on_prolific(request, study) -> dict[str, str]:
    """The review run by ``manage.py prolific review``; each listed person's status there after."""
    fake = request.getfixturevalue("fake_prolific")
    PlatformStudy.objects.create(study=study, prolific_study_id="st-1")
    for worker_id in LISTED:
        fake.add_submission("st-1", worker_id)
    call_command("prolific", "review", study.slug, stdout=StringIO(), stderr=StringIO())
    shown = {"APPROVED": "APPROVE", "REJECTED": "REJECT", "AWAITING REVIEW": "LEAVE"}
    return {worker_id: shown[fake.status_of(worker_id)] for worker_id in LISTED}


def review_on_mturk(request, study) -> dict[str, str]:
    """The review run by ``manage.py mturk review``; the Stubber takes exactly the decisions
    expected (any other call fails the test), so the statuses there are those."""
    stub = request.getfixturevalue("mturk_stub")
    PlatformStudy.objects.create(study=study, mturk_hit_id="HIT1", mturk_sandbox=True)
    listed = [
        {"AssignmentId": f"as-{w}", "WorkerId": w, "HITId": "HIT1", "AssignmentStatus": "Submitted"}
        for w in LISTED
    ]
    query = {"HITId": "HIT1", "AssignmentStatuses": ["Submitted"], "MaxResults": 100}
    stub.add_response("list_assignments_for_hit", {"Assignments": listed}, query)
    stub.add_response("approve_assignment", {}, {"AssignmentId": f"as-{GOOD_ID}"})
    stub.add_response("reject_assignment", {}, {"AssignmentId": f"as-{BAD_ID}", "RequesterFeedback": ANY})
    call_command("mturk", "review", study.slug, stdout=StringIO(), stderr=StringIO())
    stub.assert_no_pending_responses()
    return {worker_id: DECIDED.get(worker_id, "LEAVE") for worker_id in LISTED}


PLATFORMS = {
    Participant.Source.PROLIFIC: review_on_prolific,
    Participant.Source.MTURK: review_on_mturk,
}


@pytest.mark.parametrize("source", list(PLATFORMS))
def test_prolific_and_mturk_give_the_same_verdicts_and_tallies_for_the_same_enrollments(
    request, crowd_study, source
):
    enroll_everyone(crowd_study, source)

    on_the_platform = PLATFORMS[source](request, crowd_study)

    assert on_the_platform == {worker_id: DECIDED.get(worker_id, "LEAVE") for worker_id in LISTED}
    recorded = PlatformDecision.objects.filter(study=crowd_study, state=PlatformDecision.State.SENT)
    assert {d.participant.platform_worker_id: d.action for d in recorded} == DECIDED
    result = Job.objects.latest("id").result
    name = {worker_id: named(crowd_study, worker_id, source) for worker_id in LISTED[:-1]}
    assert result["approved"] == [name[GOOD_ID]] and result["rejected"] == [name[BAD_ID]]
    assert result["left"] == [
        {"participant": name[FLAGGED_ID], "why": "flagged"},
        {"participant": name[UNFINISHED_ID], "why": "not finished"},
        {"participant": f"unknown id …{STRANGER_ID[-4:]}", "why": NOT_OURS},
    ]
    tally = {key: len(value) for key, value in result.items() if isinstance(value, list)}
    assert tally == {"approved": 1, "rejected": 1, "left": 3, "already_sent": 0, "released": 0}
