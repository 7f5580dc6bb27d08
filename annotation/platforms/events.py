"""Events a platform sends us (webhooks), once for every platform: a verified event is kept by
its id (a second delivery does nothing), read in the order the platform sent it (an older
event arriving after a newer one for the same submission does nothing), and, when it says
that the participant's place is free again, their held pages go back to the pool through the
one release (``exits.mark_returned``, as the review's). Every event, refused ones included,
is written in the audit log (``audit.record_event``) with what it did or why it did nothing.

The platform's folder verifies the signature and reads its own body into an ``Event``
(``prolific/hooks.py``); what follows is here. The release runs in the request, inside the
transaction that keeps the event's id: a release that fails keeps no id, so the platform's
next delivery of the same event tries again. Polling stays the reconciliation: each review
releases the pages of every returned or timed-out submission the platform lists, so an event
that never arrived is caught there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction

from annotation.models import Enrollment, PlatformDecision, PlatformEvent, Study
from annotation.platforms.audit import record_event
from annotation.services.participation.exits import mark_returned

# What an event came to, as the audit log and the answer to the platform say it.
ACCEPTED = "accepted"  # read and acted on (or nothing was needed)
IGNORED = "ignored"  # read, but about no participant or submission of this study
OUT_OF_ORDER = "out of order"  # older than an event already applied to its submission
DUPLICATE = "duplicate"  # its id arrived before
REFUSED = "refused"  # not verified or not readable: nothing read, nothing done
FAILED = "failed"  # verified and read, but applying it raised: nothing kept (answered 500)


@dataclass(frozen=True)
class Event:
    """One verified event as the room reads it. ``frees_place``: the platform's folder says
    that the participant's place is free again (returned, timed out, rejected).
    ``session_key``: where the participant's session (``Enrollment.platform_session``) keeps
    the platform's id of the submission, to tell their submission in this study from one in
    another study that reaches the same address."""

    platform: str
    event_id: str
    event_type: str
    submission_id: str
    worker_id: str
    status: str
    sent_at: datetime | None
    frees_place: bool
    session_key: str
    body: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """What the endpoint answers the platform, and what the audit log keeps of it."""

    status: int  # HTTP
    outcome: str
    detail: str
    released_pages: int = 0

    def as_dict(self) -> dict:
        return {"outcome": self.outcome, "detail": self.detail, "released_pages": self.released_pages}


def refuse(
    study: Study | None, *, platform: str, status: int, detail: str, body: object = None, event_type: str = ""
) -> Answer:
    """An event refused before it was read (no study, no secret, a bad signature, a body that
    cannot be read): nothing changes; the audit log says why."""
    answer = Answer(status, REFUSED, detail)
    record_event(
        study,
        platform=platform,
        event_type=event_type,
        body=body,
        status=status,
        outcome=answer.as_dict(),
        error=detail,
    )
    return answer


def receive(study: Study, event: Event) -> Answer:
    """Keep a verified event by its id and apply it once (``_apply``); a second delivery of
    the same id changes nothing and is answered 200 so the platform stops sending it."""
    body = {**event.body, "event_id": event.event_id, "sent_at": _when(event.sent_at)}
    try:
        with transaction.atomic():
            answer = _apply(study, event)
    except IntegrityError:  # the id is kept already: this event arrived before
        answer = Answer(200, DUPLICATE, f"Event {event.event_id} arrived before; nothing was done again.")
    except Exception as exc:  # nothing kept: the platform's next delivery tries again
        failed = Answer(500, FAILED, f"{type(exc).__name__}: {exc}")
        record_event(
            study,
            platform=event.platform,
            event_type=event.event_type,
            body=body,
            status=500,
            outcome=failed.as_dict(),
            error=failed.detail,
        )
        raise
    record_event(
        study,
        platform=event.platform,
        event_type=event.event_type,
        body=body,
        status=answer.status,
        outcome=answer.as_dict(),
    )
    return answer


def _apply(study: Study, event: Event) -> Answer:
    """Keep the event's id (a duplicate raises ``IntegrityError``), then act on it."""
    PlatformEvent.objects.create(
        study=study,
        platform=event.platform,
        event_id=event.event_id,
        submission_id=event.submission_id,
        status=event.status,
        sent_at=event.sent_at,
    )
    newer = _newer_event(study, event)
    if newer is not None:
        return Answer(
            200,
            OUT_OF_ORDER,
            f"An event sent later for submission {event.submission_id} ({newer.status or newer.event_id}, "
            f"sent {_when(newer.sent_at)}) arrived first; this older one ({event.status}) changes nothing.",
        )
    if not event.frees_place:
        what = f"{event.event_type} {event.status}".strip()
        return Answer(
            200,
            ACCEPTED,
            f"{what}: nothing to do (only a returned, timed-out or rejected submission frees pages).",
        )
    enrollment = (
        Enrollment.objects.filter(
            study=study, participant__source=event.platform, participant__platform_worker_id=event.worker_id
        )
        .select_related("participant")
        .first()
    )
    if enrollment is None:
        return Answer(
            200,
            IGNORED,
            f"{event.status}: no participant of this study has the platform id of submission "
            f"{event.submission_id}; nothing to release.",
        )
    session_submission = (enrollment.platform_session or {}).get(event.session_key, "")
    if session_submission and session_submission != event.submission_id:
        return Answer(
            200,
            IGNORED,
            f"{event.status}: submission {event.submission_id} is not the one this participant opened "
            f"this study with ({session_submission}): another study's, or an earlier attempt. "
            "Nothing released.",
        )
    approved = PlatformDecision.objects.filter(
        study=study,
        platform=event.platform,
        submission_id=event.submission_id,
        action=PlatformDecision.Action.APPROVE,
        state=PlatformDecision.State.SENT,
    )
    if approved.exists():
        return Answer(
            200,
            IGNORED,
            f"{event.status}: this study approved submission {event.submission_id} already; the event "
            "is out of step with it and releases nothing.",
        )
    released = mark_returned(study, participants=[event.worker_id])["released_assignments"]
    return Answer(
        200,
        ACCEPTED,
        f"{event.status}: released {released} held page(s) of submission {event.submission_id} to the pool.",
        released_pages=released,
    )


def _newer_event(study: Study, event: Event) -> PlatformEvent | None:
    """An event for the same submission that the platform sent after this one, if one arrived."""
    if not event.submission_id or event.sent_at is None:
        return None
    return (
        PlatformEvent.objects.filter(
            study=study, platform=event.platform, submission_id=event.submission_id, sent_at__gt=event.sent_at
        )
        .order_by("-sent_at")
        .first()
    )


def _when(moment: datetime | None) -> str:
    return moment.isoformat() if moment else "(no time given)"
