"""Prolific's webhooks through HTTP on PostgreSQL: a signed event that a submission was
returned, timed out or rejected frees the participant's held page at once (the next
participant gets that item); unsigned, wrongly signed, replayed, out-of-order and malformed
events change nothing, and the audit log says what each event came to."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import (
    Assignment,
    Enrollment,
    PlatformCall,
    PlatformDecision,
    PlatformEvent,
    PlatformStudy,
)
from annotation.platforms.audit import EVENT
from annotation.platforms.prolific.hooks import hook_secret, signature, store_hook_secret
from annotation.services.participation.assignment import assign_next_item
from tests.helpers.platforms import crowd_participant

pytestmark = pytest.mark.django_db

SECRET = "workspace-secret-for-tests"
SENT = 1_800_000_000  # X-Timestamp of the first event; later ones add seconds


@pytest.fixture
def one_place(make_claim_study):
    """A study with one item wanted once: whoever holds it holds the study's only place."""
    study = make_claim_study(slug="one-place", items=1, annotations_per_item=1, items_per_session=1)
    store_hook_secret(study, SECRET)
    return study


def deliver(client, study, body, *, event_id="ev-1", sent=SENT, secret=SECRET, headers=None):
    """POST ``body`` (a dict as JSON, or raw bytes) to the study's address, signed as Prolific signs."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    timestamp = str(sent)
    signed = {
        "X-Prolific-Request-Timestamp": timestamp,
        "X-Prolific-Request-Signature": signature(secret, timestamp, raw),
        "X-Event-ID": event_id,
        "X-Timestamp": timestamp,
    }
    return client.post(
        reverse("prolific-hook", kwargs={"slug": study.slug}),
        data=raw,
        content_type="application/json",
        headers=signed if headers is None else headers,
    )


def status_change(worker: str, status: str, submission: str | None = None) -> dict:
    return {
        "event_type": "submission.status.change",
        "resource_id": submission or worker,  # crowd_participant's SESSION_ID is the worker id
        "participant_id": worker,
        "status": status,
    }


def holding(study, name: str):
    """A Prolific participant of ``study`` holding its one place (an unanswered page)."""
    participant = crowd_participant(study, name)
    assert assign_next_item(participant=participant, study=study) is not None
    return participant


def held(participant) -> bool:
    return Assignment.objects.filter(participant=participant, status=Assignment.Status.ASSIGNED).exists()


def audit_rows(study):
    return list(PlatformCall.objects.filter(study=study, method=EVENT).order_by("id"))


@pytest.mark.parametrize("status", ["RETURNED", "TIMED-OUT", "REJECTED"])
def test_a_signed_event_frees_the_place_for_the_next_participant(client, one_place, status):
    first = holding(one_place, "pid-first")
    second = crowd_participant(one_place, "pid-second")
    assert assign_next_item(participant=second, study=one_place) is None  # the place is held

    reply = deliver(client, one_place, status_change("pid-first", status))

    assert reply.status_code == 200, reply.content
    assert reply.json()["outcome"] == "accepted" and reply.json()["released_pages"] == 1
    assert not held(first)
    assert Enrollment.objects.get(participant=first).status == Enrollment.Status.RETURNED
    page = assign_next_item(participant=second, study=one_place)
    assert page is not None and page.item.external_id == "c0"
    [row] = audit_rows(one_place)
    assert (row.path, row.status, row.response_body["outcome"]) == (
        "submission.status.change",
        200,
        "accepted",
    )
    assert row.request_body["event_id"] == "ev-1" and row.request_body["status"] == status


@pytest.mark.parametrize(
    "headers, reason",
    [
        ({"X-Event-ID": "ev-1"}, "X-Prolific-Request-Signature and X-Prolific-Request-Timestamp missing"),
        (
            {
                "X-Event-ID": "ev-1",
                "X-Prolific-Request-Timestamp": str(SENT),
                "X-Prolific-Request-Signature": signature("another-secret", str(SENT), b"{}"),
            },
            "signature does not match",
        ),
    ],
)
def test_an_unsigned_or_wrongly_signed_event_is_refused_and_changes_nothing(
    client, one_place, headers, reason
):
    first = holding(one_place, "pid-first")
    reply = deliver(client, one_place, status_change("pid-first", "RETURNED"), headers=headers)
    assert reply.status_code == 403
    assert reason in reply.json()["detail"]
    assert held(first) and not PlatformEvent.objects.exists()
    [row] = audit_rows(one_place)
    assert row.status == 403 and reason in row.error and row.response_body["outcome"] == "refused"


def test_a_body_changed_after_signing_is_refused(client, one_place):
    first = holding(one_place, "pid-first")
    timestamp = str(SENT)
    signed_body = json.dumps(status_change("pid-other", "RETURNED")).encode()
    headers = {
        "X-Event-ID": "ev-1",
        "X-Prolific-Request-Timestamp": timestamp,
        "X-Prolific-Request-Signature": signature(SECRET, timestamp, signed_body),
    }
    reply = deliver(client, one_place, status_change("pid-first", "RETURNED"), headers=headers)
    assert reply.status_code == 403 and held(first)


def test_a_replayed_event_id_does_nothing_a_second_time(client, one_place):
    first = holding(one_place, "pid-first")
    body = status_change("pid-first", "RETURNED")
    assert deliver(client, one_place, body).json()["released_pages"] == 1
    # the participant's page is held again (as by a second place): a second release would free it
    second_page = Assignment.objects.filter(participant=first).get()
    Assignment.objects.filter(pk=second_page.pk).update(status=Assignment.Status.ASSIGNED)

    again = deliver(client, one_place, body)

    assert again.status_code == 200
    assert again.json()["outcome"] == "duplicate" and again.json()["released_pages"] == 0
    assert held(first)
    assert PlatformEvent.objects.filter(study=one_place).count() == 1
    assert [row.response_body["outcome"] for row in audit_rows(one_place)] == ["accepted", "duplicate"]


def test_an_older_event_arriving_after_a_newer_one_changes_nothing(client, one_place):
    first = holding(one_place, "pid-first")
    newer = deliver(
        client, one_place, status_change("pid-first", "AWAITING REVIEW"), event_id="ev-2", sent=SENT + 60
    )
    assert newer.json()["outcome"] == "accepted" and held(first)

    older = deliver(client, one_place, status_change("pid-first", "RETURNED"), event_id="ev-1", sent=SENT)

    assert older.status_code == 200 and older.json()["outcome"] == "out of order"
    assert "AWAITING REVIEW" in older.json()["detail"]
    assert held(first)
    assert audit_rows(one_place)[-1].response_body["outcome"] == "out of order"


def test_a_return_after_the_study_approved_the_submission_releases_nothing(client, one_place):
    first = holding(one_place, "pid-first")
    PlatformDecision.objects.create(
        study=one_place,
        platform="prolific",
        submission_id="pid-first",
        participant=first,
        action=PlatformDecision.Action.APPROVE,
        state=PlatformDecision.State.SENT,
    )
    reply = deliver(client, one_place, status_change("pid-first", "RETURNED"))
    assert reply.json()["outcome"] == "ignored" and "approved" in reply.json()["detail"]
    assert held(first)


def test_a_time_out_of_an_unknown_participant_is_recorded_and_ignored(client, one_place):
    first = holding(one_place, "pid-first")
    reply = deliver(client, one_place, status_change("pid-stranger", "TIMED-OUT"))
    assert reply.status_code == 200 and reply.json()["outcome"] == "ignored"
    assert "no participant of this study" in reply.json()["detail"]
    assert held(first)
    [row] = audit_rows(one_place)
    assert row.response_body["outcome"] == "ignored" and row.request_body["participant_id"] == "pid-stranger"


def test_a_submission_of_another_study_in_the_workspace_releases_nothing_here(client, one_place):
    first = holding(one_place, "pid-first")
    reply = deliver(
        client, one_place, status_change("pid-first", "RETURNED", submission="another-submission")
    )
    assert reply.json()["outcome"] == "ignored" and "another study" in reply.json()["detail"]
    assert held(first)


@pytest.mark.parametrize(
    "body, event_id, named",
    [
        (b"{not json", "ev-1", "body: The body is not JSON"),
        (b"[1, 2]", "ev-1", "body: The body is not a JSON object"),
        (b"\xff\xfe", "ev-1", "body: The body is not UTF-8"),
        (
            json.dumps({"event_type": "submission.status.change", "resource_id": "s"}).encode(),
            "ev-1",
            "participant_id",
        ),
        (json.dumps(status_change("pid-first", "RETURNED")).encode(), "", "X-Event-ID"),
    ],
)
def test_a_signed_body_that_cannot_be_read_is_refused_naming_the_problem(
    client, one_place, body, event_id, named
):
    first = holding(one_place, "pid-first")
    reply = deliver(client, one_place, body, event_id=event_id)
    assert reply.status_code == 400
    assert named in reply.json()["detail"]
    assert held(first) and not PlatformEvent.objects.exists()
    assert audit_rows(one_place)[-1].response_body["outcome"] == "refused"


def test_a_study_without_a_secret_or_no_study_refuses_every_event(client, crowd_study):
    holding_none = deliver(client, crowd_study, status_change("pid-first", "RETURNED"))
    assert holding_none.status_code == 403 and "no webhook secret" in holding_none.json()["detail"]
    crowd_study.slug = "gone"
    missing = deliver(client, crowd_study, status_change("pid-first", "RETURNED"))
    assert missing.status_code == 404
    assert PlatformCall.objects.filter(method=EVENT, study=None, status=404).exists()


def test_the_address_takes_only_posts(client, one_place):
    reply = client.get(reverse("prolific-hook", kwargs={"slug": one_place.slug}))
    assert reply.status_code == 405


def test_the_command_keeps_the_secret_sealed_and_names_the_address(crowd_study, settings):
    settings.SITE_URL = "https://roft.example"
    out = StringIO()
    call_command("prolific", "webhook", crowd_study.slug, "--secret", "s3cret-value", stdout=out)
    assert f"https://roft.example/hooks/prolific/{crowd_study.slug}/" in out.getvalue()
    stored = bytes(PlatformStudy.objects.get(study=crowd_study).prolific_hook_secret)
    assert b"s3cret-value" not in stored and hook_secret(crowd_study) == "s3cret-value"
    with pytest.raises(CommandError, match="secret"):
        call_command("prolific", "webhook", crowd_study.slug, "--secret", "two words")
    call_command("prolific", "webhook", crowd_study.slug, "--clear", stdout=StringIO())
    assert hook_secret(crowd_study) == ""


def test_the_address_is_rate_limited_per_client_address(client, one_place, settings):
    from django.core.cache import cache

    settings.RATE_LIMIT_HOOK = "2/min"
    cache.clear()
    try:
        answers = [
            deliver(client, one_place, status_change("pid-x", "ACTIVE"), event_id=f"ev-{n}").status_code
            for n in range(3)
        ]
    finally:
        cache.clear()
    assert answers == [200, 200, 429]


def test_the_platforms_page_keeps_the_secret_and_shows_the_address(
    client, researcher, researchers_crowd_study
):
    study = researchers_crowd_study
    page = client.post(
        f"/research/s/{study.slug}/platforms/settings/", {"prolific_hook_secret": "page-secret"}, follow=True
    ).content.decode()
    assert "page-secret" not in page and "webhook secret is stored" in page
    assert f"/hooks/prolific/{study.slug}/" in page
    assert hook_secret(study) == "page-secret"
    signed = deliver(client, study, status_change("pid-none", "ACTIVE"), secret="page-secret")
    assert signed.status_code == 200
    audit = client.get(f"/research/s/{study.slug}/platforms/").content.decode()
    assert "Prolific, by webhook" in audit and "EVENT submission.status.change" in audit


def test_a_release_that_fails_keeps_no_event_so_the_next_delivery_applies_it(client, one_place, monkeypatch):
    from annotation.platforms import events

    first = holding(one_place, "pid-first")
    body = status_change("pid-first", "RETURNED")

    def broken(study, *, participants):
        raise RuntimeError("database went away")

    monkeypatch.setattr(events, "mark_returned", broken)
    client.raise_request_exception = False
    failed = deliver(client, one_place, body)
    assert failed.status_code == 500 and held(first) and not PlatformEvent.objects.exists()
    assert audit_rows(one_place)[-1].response_body["outcome"] == "failed"

    monkeypatch.undo()
    again = deliver(client, one_place, body)
    assert again.json()["outcome"] == "accepted" and not held(first)
