"""``manage.py mturk publish|review|bonus`` with boto3's client under ``botocore.stub.Stubber``,
which checks every call's parameters against MTurk's own API model (and fails the test on any
call not expected): nothing leaves the machine."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from botocore.stub import ANY
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from annotation.models import Participant, PlatformBonus, PlatformCall, PlatformStudy, Study
from annotation.platforms.mturk import calls as mturk
from tests.factories import researcher_user
from tests.helpers.platforms import BAD, GOOD, crowd_participant, named

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("mturk", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def worker(study, worker_id: str, answer: dict | None) -> Participant:
    session = {"assignmentId": f"as-{worker_id}", "hitId": "HIT1"}
    return crowd_participant(study, worker_id, answer, source=Participant.Source.MTURK, session=session)


def test_publish_creates_a_hit_with_our_external_question(mturk_stub, crowd_study):
    mturk_stub.add_response(
        "create_hit",
        {"HIT": {"HITId": "HIT1", "HITTypeId": "T1"}},
        {
            "Title": "Claims under test",
            "Description": ANY,
            "Question": ANY,
            "Reward": "0.50",
            "MaxAssignments": 6,
            "AssignmentDurationInSeconds": 1200,
            "LifetimeInSeconds": ANY,
            "RequesterAnnotation": "claims",
        },
    )
    out = run("publish", crowd_study.slug, "--reward", "0.50", "--minutes", "10", "--sandbox")
    record = PlatformStudy.objects.get(study=crowd_study)
    assert record.mturk_hit_id == "HIT1" and record.mturk_sandbox and '"hit_id": "HIT1"' in out
    call = PlatformCall.objects.get()
    assert call.method == "CreateHIT" and call.status == 200
    assert "<ExternalURL>https://roft.example/s/claims/</ExternalURL>" in call.request_body["Question"]


def test_publish_dry_run_calls_nothing(mturk_stub, crowd_study):
    out = run("publish", crowd_study.slug, "--reward", "0.50", "--minutes", "10", "--dry-run")
    assert "CreateHIT" in out and "ExternalQuestion" in out
    assert PlatformCall.objects.get().dry_run


def test_review_approves_rejects_and_leaves_once(mturk_stub, crowd_study):
    PlatformStudy.objects.create(study=crowd_study, mturk_hit_id="HIT1", mturk_sandbox=True)
    worker(crowd_study, "W-GOOD", GOOD)
    worker(crowd_study, "W-BAD", BAD)
    worker(crowd_study, "W-HALF", None)
    listed = [
        {"AssignmentId": f"as-{w}", "WorkerId": w, "HITId": "HIT1", "AssignmentStatus": "Submitted"}
        for w in ("W-GOOD", "W-BAD", "W-HALF")
    ]
    query = {"HITId": "HIT1", "AssignmentStatuses": ["Submitted"], "MaxResults": 100}
    # Every page is listed before the first decision (a decision takes an assignment out of
    # "Submitted", which would shift the pages after it).
    mturk_stub.add_response("list_assignments_for_hit", {"Assignments": listed[:2], "NextToken": "p2"}, query)
    mturk_stub.add_response(
        "list_assignments_for_hit", {"Assignments": listed[2:]}, {**query, "NextToken": "p2"}
    )
    mturk_stub.add_response("approve_assignment", {}, {"AssignmentId": "as-W-GOOD"})
    mturk_stub.add_response("reject_assignment", {}, {"AssignmentId": "as-W-BAD", "RequesterFeedback": ANY})
    out = run("review", crowd_study.slug)
    mturk_name = {w: named(crowd_study, w, Participant.Source.MTURK) for w in ("W-GOOD", "W-BAD", "W-HALF")}
    assert (
        f'"approved": ["{mturk_name["W-GOOD"]}"]' in out and f'"rejected": ["{mturk_name["W-BAD"]}"]' in out
    )
    assert mturk_name["W-HALF"] in out and "W-" not in out
    feedback = PlatformCall.objects.get(method="RejectAssignment").request_body["RequesterFeedback"]
    assert '"attn' in feedback

    # Listed again (MTurk's list lagging): no second approve or reject (Stubber fails on one).
    mturk_stub.add_response("list_assignments_for_hit", {"Assignments": listed}, query)
    again = run("review", crowd_study.slug)
    assert f'"already_sent": ["{mturk_name["W-GOOD"]}", "{mturk_name["W-BAD"]}"]' in again


def test_bonus_sends_one_unique_token_per_worker_and_reason_and_never_twice(
    mturk_stub, crowd_study, tmp_path
):
    PlatformStudy.objects.create(study=crowd_study, mturk_hit_id="HIT1", bonus_cap_cents=200)
    participant = worker(crowd_study, "W-GOOD", GOOD)
    path = tmp_path / "bonus.csv"
    path.write_text("W-GOOD,1.25,accuracy\n")
    token = mturk.bonus_token(crowd_study, participant, "accuracy")
    mturk_stub.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "W-GOOD",
            "BonusAmount": "1.25",
            "AssignmentId": "as-W-GOOD",
            "Reason": "accuracy",
            "UniqueRequestToken": token,
        },
    )
    run("bonus", crowd_study.slug, str(path))
    assert PlatformBonus.objects.get().state == "paid"
    out = run("bonus", crowd_study.slug, str(path))  # no call expected: Stubber would fail on one
    assert f'"already_paid": ["{named(crowd_study, "W-GOOD", Participant.Source.MTURK)}"]' in out


def test_a_refused_call_fails_the_job_and_pays_nothing(mturk_stub, crowd_study, tmp_path):
    PlatformStudy.objects.create(study=crowd_study, mturk_hit_id="HIT1", bonus_cap_cents=200)
    worker(crowd_study, "W-GOOD", GOOD)
    path = tmp_path / "bonus.csv"
    path.write_text("W-GOOD,1.25,accuracy\n")
    mturk_stub.add_client_error("send_bonus", "RequestError", "Insufficient funds.", http_status_code=400)
    with pytest.raises(CommandError, match="Insufficient funds"):
        run("bonus", crowd_study.slug, str(path))
    assert PlatformBonus.objects.get().state == "new"


def bonus_run(study, tmp_path) -> tuple[Participant, str, dict]:
    """One worker with a bonus file: the participant, the file's path and the SendBonus call."""
    PlatformStudy.objects.create(study=study, mturk_hit_id="HIT1", bonus_cap_cents=200)
    participant = worker(study, "W-GOOD", GOOD)
    path = tmp_path / "bonus.csv"
    path.write_text("W-GOOD,1.25,accuracy\n")
    token = mturk.bonus_token(study, participant, "accuracy")
    params = {
        "WorkerId": "W-GOOD",
        "BonusAmount": "1.25",
        "AssignmentId": "as-W-GOOD",
        "Reason": "accuracy",
        "UniqueRequestToken": token,
    }
    return participant, str(path), params


def test_a_bonus_of_unknown_outcome_is_sent_again_under_the_same_token_within_the_day(
    mturk_stub, crowd_study, tmp_path
):
    _, path, params = bonus_run(crowd_study, tmp_path)
    token = params["UniqueRequestToken"]
    mturk_stub.add_client_error(
        "send_bonus", "ServiceFault", "Busy.", http_status_code=500, expected_params=params
    )
    with pytest.raises(CommandError, match=f"may have been paid.*--settle {token}"):
        run("bonus", crowd_study.slug, path)
    bonus = PlatformBonus.objects.get()
    assert bonus.state == "paying" and bonus.batch_id == token
    assert f"Outcome unknown (settle it): payment {token}" in run("bonus", crowd_study.slug, "--list")

    mturk_stub.add_response("send_bonus", {}, params)  # the same token: MTurk pays it at most once
    out = run("bonus", crowd_study.slug, path)
    assert PlatformBonus.objects.get().state == "paid"
    assert f'"paid": ["{named(crowd_study, "W-GOOD", Participant.Source.MTURK)}"]' in out


def test_a_bonus_of_unknown_outcome_older_than_a_day_is_refused_until_settled(
    mturk_stub, crowd_study, tmp_path
):
    _, path, params = bonus_run(crowd_study, tmp_path)
    token = params["UniqueRequestToken"]
    mturk_stub.add_client_error(
        "send_bonus", "ServiceFault", "Busy.", http_status_code=500, expected_params=params
    )
    with pytest.raises(CommandError):
        run("bonus", crowd_study.slug, path)
    PlatformBonus.objects.update(paying_since=timezone.now() - timedelta(days=2))
    sends = PlatformCall.objects.filter(method="SendBonus").count()
    with pytest.raises(CommandError, match=f"may or may not have been paid.*: {token}"):
        run("bonus", crowd_study.slug, path)  # MTurk forgot the token: a resend could pay twice
    assert PlatformCall.objects.filter(method="SendBonus").count() == sends

    assert "Settled 1" in run("bonus", crowd_study.slug, "--settle", token, "paid")
    out = run("bonus", crowd_study.slug, path)  # no call expected: Stubber would fail on one
    assert PlatformBonus.objects.get().state == "paid" and '"already_paid": [' in out


def test_a_refused_resend_keeps_the_bonus_paying_and_settled_unpaid_it_is_sent_again(
    mturk_stub, crowd_study, tmp_path
):
    _, path, params = bonus_run(crowd_study, tmp_path)
    token = params["UniqueRequestToken"]
    mturk_stub.add_client_error(
        "send_bonus", "ServiceFault", "Busy.", http_status_code=500, expected_params=params
    )
    with pytest.raises(CommandError):
        run("bonus", crowd_study.slug, path)
    # MTurk refuses the same token again: the first call may have landed, so never given back.
    mturk_stub.add_client_error(
        "send_bonus", "RequestError", "Token used.", http_status_code=400, expected_params=params
    )
    with pytest.raises(CommandError, match="may have been paid"):
        run("bonus", crowd_study.slug, path)
    assert PlatformBonus.objects.get().state == "paying"

    assert "Settled 1" in run("bonus", crowd_study.slug, "--settle", token, "unpaid")
    assert PlatformBonus.objects.get().state == "new"
    mturk_stub.add_response("send_bonus", {}, params)  # keyed again by the same token
    run("bonus", crowd_study.slug, path)
    assert PlatformBonus.objects.get().state == "paid"


def test_the_platforms_page_names_a_payment_to_settle(mturk_stub, crowd_study, tmp_path, client):
    _, path, params = bonus_run(crowd_study, tmp_path)
    mturk_stub.add_client_error(
        "send_bonus", "ServiceFault", "Busy.", http_status_code=500, expected_params=params
    )
    with pytest.raises(CommandError):
        run("bonus", crowd_study.slug, path)
    owner = researcher_user("olga", password="pw")
    Study.objects.filter(pk=crowd_study.pk).update(owner=owner)
    client.force_login(owner)
    page = client.get(f"/research/s/{crowd_study.slug}/platforms/").content.decode()
    assert 'id="stuck-payments"' in page and f"<code>{params['UniqueRequestToken']}</code>" in page
