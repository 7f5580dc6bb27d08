"""``manage.py prolific publish|review|bonus`` against a local stand-in of Prolific's API
(``tests/helpers/fake_prolific.py``), on PostgreSQL: every call audited, each decision and
bonus sent at most once, whatever fails in between."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from annotation.models import (
    Assignment,
    Enrollment,
    Job,
    PlatformBonus,
    PlatformCall,
    PlatformDecision,
    PlatformStudy,
    Study,
)
from annotation.platforms.review import MIN_REJECTION_MESSAGE
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.flags import flag_in_study
from tests.factories import researcher_user
from tests.helpers.fake_prolific import TOKEN, closed_port_url
from tests.helpers.platforms import BAD, GOOD, crowd_participant, named

pytestmark = pytest.mark.django_db


def prolific(*args: str) -> str:
    out = StringIO()
    call_command("prolific", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def on_prolific(study, fake) -> str:
    """The study as published on the fake (its id stored on the study)."""
    prolific("publish", study.slug, "--reward", "1.50", "--minutes", "10")
    return PlatformStudy.objects.get(study=study).prolific_study_id


def test_publish_dry_run_sends_nothing_and_prints_the_body(fake_prolific, crowd_study):
    out = prolific("publish", crowd_study.slug, "--reward", "1.50", "--minutes", "10", "--dry-run")
    assert "Dry run" in out and "POST /api/v1/studies/ " in out
    assert "https://roft.example/s/claims/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in out
    assert '"code": "DONE-123"' in out and '"code": "OUT-999"' in out
    # 6 items x 2 answers wanted, 2 ordinary pages a session: 6 places.
    assert '"total_available_places": 6' in out
    assert fake_prolific.calls == []
    assert not PlatformStudy.objects.filter(study=crowd_study).exclude(prolific_study_id="").exists()
    assert set(PlatformCall.objects.values_list("dry_run", flat=True)) == {True}


def test_publish_creates_publishes_and_stores_the_id(fake_prolific, crowd_study):
    out = prolific("publish", crowd_study.slug, "--reward", "1.50", "--minutes", "10", "--places", "4")
    prolific_id = PlatformStudy.objects.get(study=crowd_study).prolific_study_id
    assert prolific_id and prolific_id in out
    created = fake_prolific.studies[prolific_id]
    assert (
        created["status"] == "ACTIVE" and created["total_available_places"] == 4 and created["reward"] == 150
    )
    assert created["external_study_url"].endswith(
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert fake_prolific.calls == [
        ("POST", "/api/v1/studies/"),
        ("POST", f"/api/v1/studies/{prolific_id}/transition/"),
    ]
    audit = list(PlatformCall.objects.order_by("id"))
    assert [(c.method, c.path, c.status, c.dry_run) for c in audit] == [
        ("POST", "/api/v1/studies/", 201, False),
        ("POST", f"/api/v1/studies/{prolific_id}/transition/", 200, False),
    ]
    assert audit[1].request_body == {"action": "PUBLISH"} and audit[1].study == crowd_study


def test_draft_is_not_published(fake_prolific, crowd_study):
    prolific("publish", crowd_study.slug, "--reward", "1.50", "--minutes", "10", "--draft")
    prolific_id = PlatformStudy.objects.get(study=crowd_study).prolific_study_id
    assert fake_prolific.studies[prolific_id]["status"] == "UNPUBLISHED"


def test_review_approves_rejects_leaves_and_runs_twice_without_a_second_transition(
    fake_prolific, crowd_study
):
    prolific_id = on_prolific(crowd_study, fake_prolific)
    crowd_participant(crowd_study, "pid-good", GOOD)
    crowd_participant(crowd_study, "pid-bad", BAD)
    flagged = crowd_participant(crowd_study, "pid-flagged", GOOD)
    flag_in_study(Enrollment.objects.get(participant=flagged, study=crowd_study), reason="copied answers")
    crowd_participant(crowd_study, "pid-unfinished", GOOD, pages=1)
    for pid in ("pid-good", "pid-bad", "pid-flagged", "pid-unfinished", "pid-stranger"):
        fake_prolific.add_submission(prolific_id, pid)
    assert Enrollment.objects.get(participant__platform_worker_id="pid-bad").status == "screened_out"

    dry = prolific("review", crowd_study.slug, "--dry-run")
    assert dry.count("/transition/") == 2 and fake_prolific.transitions == []

    calls_before = len(fake_prolific.calls)
    out = prolific("review", crowd_study.slug)
    assert (
        fake_prolific.status_of("pid-good") == "APPROVED" and fake_prolific.status_of("pid-bad") == "REJECTED"
    )
    for pid in ("pid-flagged", "pid-unfinished"):
        assert (
            fake_prolific.status_of(pid) == "AWAITING REVIEW"
            and named(crowd_study, pid) in out
            and pid not in out
        )
    left = Job.objects.filter(kind="prolific_review").latest("id").result["left"]
    assert fake_prolific.status_of("pid-stranger") == "AWAITING REVIEW"
    assert {
        "participant": "unknown id …nger",
        "why": "not a participant of this study here (no session under this id)",
    } in left
    rejection = next(body for _, body in fake_prolific.transitions if body["action"] == "REJECT")
    assert rejection["rejection_category"] == "FAILED_CHECK"
    assert len(rejection["message"]) >= MIN_REJECTION_MESSAGE and '"attn' in rejection["message"]
    # Four pages of submissions at two a page: every page was read.
    assert fake_prolific.calls[calls_before:].count(("GET", "/api/v1/submissions/")) == 3

    # Prolific still shows both as awaiting review (say its list lags): nothing is sent again.
    for submission in fake_prolific.submissions:
        submission["status"] = "AWAITING REVIEW"
    sent_before = len(fake_prolific.transitions)
    prolific("review", crowd_study.slug)
    assert len(fake_prolific.transitions) == sent_before
    assert Job.objects.filter(kind="prolific_review").latest("id").result["already_sent"] == [
        named(crowd_study, "pid-good"),
        named(crowd_study, "pid-bad"),
    ]
    assert PlatformDecision.objects.filter(state="sent").count() == 2


def test_returned_and_timed_out_submissions_release_their_pages_at_once(fake_prolific, crowd_study):
    prolific_id = on_prolific(crowd_study, fake_prolific)
    returned = crowd_participant(crowd_study, "pid-returned", GOOD, pages=1)
    timed_out = crowd_participant(crowd_study, "pid-timed-out")
    assign_next_item(participant=returned, study=crowd_study)
    assign_next_item(participant=timed_out, study=crowd_study)
    fake_prolific.add_submission(prolific_id, "pid-returned", "RETURNED")
    fake_prolific.add_submission(prolific_id, "pid-timed-out", "TIMED-OUT")
    prolific("review", crowd_study.slug)
    held = Assignment.objects.filter(participant__in=[returned, timed_out], status=Assignment.Status.ASSIGNED)
    assert not held.exists()
    assert set(
        Enrollment.objects.filter(participant__in=[returned, timed_out]).values_list("status", flat=True)
    ) == {"returned"}


def test_a_short_rejection_message_is_refused_by_the_fake(fake_prolific, crowd_study):
    """The stand-in keeps Prolific's rule, so the test above proves our message passes it."""
    import json
    import urllib.error
    import urllib.request

    prolific_id = on_prolific(crowd_study, fake_prolific)
    submission = fake_prolific.add_submission(prolific_id, "pid-x")
    request = urllib.request.Request(  # noqa: S310 - the local fake
        f"{fake_prolific.url}/api/v1/submissions/{submission}/transition/",
        data=json.dumps(
            {"action": "REJECT", "rejection_category": "FAILED_CHECK", "message": "too short"}
        ).encode(),
        headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)  # noqa: S310 - the local fake
    assert refused.value.code == 400


def bonus_file(tmp_path, text: str):
    path = tmp_path / "bonuses.csv"
    path.write_text(text)
    return str(path)


def bonus_study(study, fake, cap: int = 500) -> None:
    prolific_id = on_prolific(study, fake)
    for pid in ("pid-a", "pid-b"):
        crowd_participant(study, pid, GOOD)
        fake.add_submission(prolific_id, pid)
    PlatformStudy.objects.filter(study=study).update(bonus_cap_cents=cap)


def test_bonus_is_paid_once_across_a_dropped_reply_and_a_rerun(fake_prolific, crowd_study, tmp_path):
    bonus_study(crowd_study, fake_prolific)
    path = bonus_file(tmp_path, "participant,amount,reason\npid-a,1.50,accuracy\npid-b,0.75,accuracy\n")
    fake_prolific.pay_failure = "drop_after_paying"  # Prolific pays, and the reply never arrives
    with pytest.raises(CommandError, match="may have been paid"):
        prolific("bonus", crowd_study.slug, path)
    assert len(fake_prolific.payments) == 1
    assert "pid-a" not in str(Job.objects.get(kind="prolific_bonus").parameters)  # named by pseudonym
    batch = PlatformBonus.objects.values_list("batch_id", flat=True).first()
    assert set(PlatformBonus.objects.values_list("state", flat=True)) == {"paying"}

    with pytest.raises(CommandError, match="may or may not have been paid"):
        prolific("bonus", crowd_study.slug, path)  # a rerun pays nothing
    assert len(fake_prolific.payments) == 1

    assert "Settled 2" in prolific("bonus", crowd_study.slug, "--settle", batch, "paid")
    out = prolific("bonus", crowd_study.slug, path)  # the same file once more: already paid
    assert (
        len(fake_prolific.payments) == 1
        and f'"already_paid": ["{named(crowd_study, "pid-a")}", "{named(crowd_study, "pid-b")}"]' in out
    )


def test_bonus_created_but_not_paid_is_paid_by_the_rerun(fake_prolific, crowd_study, tmp_path):
    bonus_study(crowd_study, fake_prolific)
    path = bonus_file(tmp_path, "pid-a,1.50,accuracy\n")
    fake_prolific.pay_failure = "503"  # a 5xx: maybe paid, so kept as paying
    with pytest.raises(CommandError, match="may have been paid"):
        prolific("bonus", crowd_study.slug, path)
    assert fake_prolific.payments == []
    batch = PlatformBonus.objects.get().batch_id
    prolific("bonus", crowd_study.slug, "--settle", batch, "unpaid")
    prolific("bonus", crowd_study.slug, path)
    assert len(fake_prolific.payments) == 1 and PlatformBonus.objects.get().state == "paid"
    assert len(fake_prolific.bonuses) == 2  # a fresh bulk bonus; the first one was never paid


def test_a_bulk_bonus_created_and_never_paid_is_listed_by_the_command_and_the_page(
    fake_prolific, crowd_study, tmp_path, client
):
    """Settled as unpaid, a bulk bonus stays on Prolific unpaid while the rerun pays a fresh
    one: the command's --list and the platforms page name it, so it is not forgotten."""
    bonus_study(crowd_study, fake_prolific)
    path = bonus_file(tmp_path, "pid-a,1.50,accuracy\n")
    fake_prolific.pay_failure = "503"
    with pytest.raises(CommandError, match="may have been paid"):
        prolific("bonus", crowd_study.slug, path)
    first = PlatformBonus.objects.get().batch_id
    assert f"Outcome unknown (settle it): payment {first}" in prolific("bonus", crowd_study.slug, "--list")
    prolific("bonus", crowd_study.slug, "--settle", first, "unpaid")
    prolific("bonus", crowd_study.slug, path)
    second = PlatformBonus.objects.get(state="paid").batch_id

    listed = prolific("bonus", crowd_study.slug, "--list")
    assert f"Created, not paid: bulk bonus {first} (1.50)" in listed and "nothing here will pay it" in listed
    assert second not in listed
    owner = researcher_user("olga", password="pw")
    Study.objects.filter(pk=crowd_study.pk).update(owner=owner)
    client.force_login(owner)
    page = client.get(f"/research/s/{crowd_study.slug}/platforms/").content.decode()
    assert 'id="unpaid-batches"' in page and f"<code>{first}</code>" in page
    assert f"<code>{second}</code>" not in page


def test_a_bulk_bonus_refused_at_payment_is_listed_as_waiting_for_the_next_run(
    fake_prolific, crowd_study, tmp_path
):
    bonus_study(crowd_study, fake_prolific)
    fake_prolific.pay_failure = "400"
    with pytest.raises(CommandError, match="Nothing was paid"):
        prolific("bonus", crowd_study.slug, bonus_file(tmp_path, "pid-a,1.50,accuracy\n"))
    batch = PlatformBonus.objects.get().batch_id
    assert f"bulk bonus {batch} (1.50); 1 bonus(es) of ours wait in it" in prolific(
        "bonus", crowd_study.slug, "--list"
    )


def test_bonus_created_and_refused_at_payment_is_paid_in_the_same_bulk_bonus_by_the_rerun(
    fake_prolific, crowd_study, tmp_path
):
    bonus_study(crowd_study, fake_prolific)
    path = bonus_file(tmp_path, "pid-a,1.50,accuracy\n")
    fake_prolific.pay_failure = "400"  # created on Prolific, then the pay call refused: nothing paid
    with pytest.raises(CommandError, match="Nothing was paid"):
        prolific("bonus", crowd_study.slug, path)
    bonus = PlatformBonus.objects.get()
    assert bonus.state == "created" and fake_prolific.payments == []
    prolific("bonus", crowd_study.slug, path)
    assert (
        fake_prolific.payments == [bonus.batch_id] and len(fake_prolific.bonuses) == 1
    )  # no second bulk bonus
    assert PlatformBonus.objects.get().state == "paid"


def test_bonus_over_the_cap_or_without_one_is_refused_before_any_call(fake_prolific, crowd_study, tmp_path):
    bonus_study(crowd_study, fake_prolific, cap=100)
    calls = len(fake_prolific.calls)
    with pytest.raises(CommandError, match=r"cap of 1\.00"):
        prolific("bonus", crowd_study.slug, bonus_file(tmp_path, "pid-a,0.60,one\npid-a,0.60,two\n"))
    PlatformStudy.objects.filter(study=crowd_study).update(bonus_cap_cents=0)
    with pytest.raises(CommandError, match="bonus cap"):
        prolific("bonus", crowd_study.slug, bonus_file(tmp_path, "pid-a,0.60,one\n"))
    assert len(fake_prolific.calls) == calls and not PlatformBonus.objects.exists()


def test_bonus_dry_run_shows_the_csv_and_pays_nothing(fake_prolific, crowd_study, tmp_path):
    bonus_study(crowd_study, fake_prolific)
    out = prolific("bonus", crowd_study.slug, bonus_file(tmp_path, "pid-a,1.50\n"), "--dry-run")
    assert "pid-a,1.50" in out and "/pay/" in out
    assert fake_prolific.bonuses == {} and fake_prolific.payments == [] and not PlatformBonus.objects.exists()


def test_a_refused_token_fails_the_job_with_the_reason(fake_prolific, crowd_study):
    with override_settings(PROLIFIC_API_TOKEN="wrong"), pytest.raises(CommandError, match=r"token \(401\)"):
        prolific("publish", crowd_study.slug, "--reward", "1.50", "--minutes", "10")
    job = Job.objects.get(kind="prolific_publish")
    assert job.status == "failed" and "401" in job.error
    assert PlatformCall.objects.get().status == 401


def test_a_platform_that_is_down_fails_the_job_and_marks_nothing_paid(fake_prolific, crowd_study, tmp_path):
    bonus_study(crowd_study, fake_prolific)
    with (
        override_settings(PROLIFIC_API_URL=closed_port_url()),
        pytest.raises(CommandError, match="be reached"),
    ):
        prolific("bonus", crowd_study.slug, bonus_file(tmp_path, "pid-a,1.50\n"))
    assert Job.objects.filter(kind="prolific_bonus").get().status == "failed"
    assert not PlatformBonus.objects.filter(state__in=["paying", "paid"]).exists()
    assert PlatformCall.objects.filter(status=None).exclude(error="").exists()
    prolific("bonus", crowd_study.slug, bonus_file(tmp_path, "pid-a,1.50\n"))  # up again: paid now, once
    assert len(fake_prolific.payments) == 1


@pytest.mark.parametrize(
    ("site", "named_in_error"),
    [("http://127.0.0.1:8000", "'127.0.0.1'"), ("http://eval.example.org", "https only")],
)
def test_a_link_participants_cannot_open_is_never_published_but_a_dry_run_shows_it(
    fake_prolific, crowd_study, site, named_in_error
):
    with override_settings(SITE_URL=site):
        with pytest.raises(CommandError, match="study_url") as refused:
            prolific("publish", crowd_study.slug, "--reward", "1.50", "--minutes", "10")
        assert named_in_error in str(refused.value)
        assert not fake_prolific.studies and not PlatformCall.objects.exists()
        shown = prolific("publish", crowd_study.slug, "--reward", "1.50", "--minutes", "10", "--dry-run")
    assert f"{site}/s/{crowd_study.slug}/" in shown and not fake_prolific.studies
