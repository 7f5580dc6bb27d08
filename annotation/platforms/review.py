"""The review of a platform's submissions: what each deserves, decided from our records, and
the one loop that sends it once (``review``), behind ``prolific review`` and ``mturk review``
(and their confirmation page). Each platform lists its submissions as ``Submission`` tuples
and says which call carries a decision; the rest is here.

- finished with the completion code and not flagged, excluded or blocked
  (``lists.platform_status`` is "completed") → approve;
- screened out by failed attention checks → reject, with a message that names the checks;
- anything else (flagged by a researcher, excluded, returned, not finished, cut short
  without pay, unknown to us) → left for the researcher, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from annotation.models import Enrollment, PlatformDecision, Response, Study
from annotation.platforms.base import PlatformCalls
from annotation.platforms.lists import platform_status
from annotation.services.participation.exits import mark_returned
from annotation.services.participation.participants import session_cut_short
from annotation.services.pseudonyms import PseudonymCache

APPROVE, REJECT, LEAVE = "APPROVE", "REJECT", "LEAVE"
ATTENTION_REASON = "failed attention checks"  # what ``attention.record_attention_outcome`` writes
# Prolific refuses a rejection message shorter than this.
MIN_REJECTION_MESSAGE = 100
# A review that claimed a decision and has not marked it sent after this long has died (a
# call times out after PLATFORM_API_TIMEOUT_S): the next review may take the decision over.
CLAIM_EXPIRES = timedelta(minutes=15)
# A submission's status as the loop reads it (each platform maps its own words onto these).
AWAITING = "awaiting review"
RELEASED = "released"  # returned or timed out: the participant's held pages go back


@dataclass(frozen=True)
class Verdict:
    action: str  # APPROVE, REJECT or LEAVE
    reason: str  # why (LEAVE: what the researcher should look at; REJECT: the message sent)


def verdict(study: Study, enrollment: Enrollment | None) -> Verdict:
    """The decision for one participant's submission to ``study``."""
    if enrollment is None:
        return Verdict(LEAVE, "not a participant of this study here (no session under this id)")
    if enrollment.is_test:
        return Verdict(LEAVE, "a researcher's test run")
    status = platform_status(enrollment)
    if status == "completed":
        if session_cut_short(enrollment, study) and not study.pay_partial_sessions:
            return Verdict(LEAVE, "the study ran out of pages before the session's end (no code was shown)")
        return Verdict(APPROVE, "finished and not flagged")
    if status == "screened out" and enrollment.flag_reason == ATTENTION_REASON:
        return Verdict(REJECT, rejection_message(study, enrollment))
    return Verdict(LEAVE, status)


def failed_checks(study: Study, enrollment: Enrollment) -> list[str]:
    """The attention checks the participant answered wrongly, by the item ids of the study file."""
    rows = Response.objects.filter(
        study=study, participant_id=enrollment.participant_id, is_attention_check=True, correct=False
    ).order_by("answered_at")
    return list(rows.values_list("item__external_id", flat=True))


def rejection_message(study: Study, enrollment: Enrollment) -> str:
    """The message a rejected participant reads: which checks failed, how many were allowed,
    and that the answers are kept; always at least ``MIN_REJECTION_MESSAGE`` characters."""
    names = failed_checks(study, enrollment)
    listed = ", ".join(f'"{name}"' for name in names) or "(not recorded)"
    return (
        f"Your submission failed {enrollment.attention_failed} attention check(s) of this study, more "
        f"than the {study.max_attention_failures} it allows, and the study ended your session with its "
        "screen-out code. "
        f"The checks answered wrongly: {listed}. Each had one answer given in the study's instructions."
    )


def shown_name(names: PseudonymCache, enrollment: Enrollment | None, platform_id: str) -> str:
    """How a job's result names a submission's participant: by the pseudonym of the
    participants page and exports, since every researcher of the study reads job results and
    raw platform ids are the owner's only (``access.can_see_platform_ids``); an id we do not
    know by its last four characters."""
    if enrollment is None:
        return f"unknown id …{platform_id[-4:]}"
    p = enrollment.participant
    return names.get(p.pk, p.source, p.platform_worker_id, p.public_id)


def sent_decisions(study: Study, platform: str):
    """The study's decisions on ``platform`` that went out: each review skips their
    submissions, and the plans leave their participants out."""
    return PlatformDecision.objects.filter(study=study, platform=platform, state=PlatformDecision.State.SENT)


def send_decision_once(
    study: Study,
    *,
    platform: str,
    submission_id: str,
    enrollment: Enrollment | None,
    action: str,
    message: str,
    send: Callable[[], object],
) -> bool:
    """Record a decision on a platform's submission (SENDING), claim it, ``send`` it, mark it
    SENT. Returns whether this run sent it.

    A SENT decision is never sent again (``sent_decisions``). Only the run holding the claim
    sends: the run that created the row holds it, and a run at the same time (two review
    confirmations at once) finds it held and sends nothing. A send that failed gives the claim
    back, for the next review; a run that died between the send and the mark leaves it
    SENDING and held until ``CLAIM_EXPIRES``, after which the next review sends it again only
    if the platform still lists the submission as awaiting review, that is, if the first
    send never landed."""
    decision, created = PlatformDecision.objects.get_or_create(
        platform=platform,
        submission_id=submission_id,
        defaults={
            "study": study,
            "participant_id": enrollment.participant_id if enrollment else None,
            "action": action,
            "message": message,
            "claimed_at": timezone.now(),
        },
    )
    if not created and not _claim(decision):
        return False
    try:
        send()
    except Exception:
        PlatformDecision.objects.filter(pk=decision.pk, state=PlatformDecision.State.SENDING).update(
            claimed_at=None
        )
        raise
    PlatformDecision.objects.filter(pk=decision.pk).update(
        state=PlatformDecision.State.SENT, sent_at=timezone.now()
    )
    return True


def _claim(decision: PlatformDecision) -> bool:
    """Take a SENDING decision that no live run holds (one conditional UPDATE)."""
    now = timezone.now()
    free = Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_EXPIRES)
    rows = PlatformDecision.objects.filter(free, pk=decision.pk, state=PlatformDecision.State.SENDING)
    return rows.update(claimed_at=now) == 1


@dataclass(frozen=True)
class Submission:
    """One submission as the platform lists it: its id there (Prolific's submission id,
    MTurk's AssignmentId), the worker's platform id, and ``AWAITING``, ``RELEASED`` or
    anything else (passed over)."""

    submission_id: str
    worker_id: str
    status: str


@dataclass(frozen=True)
class DecisionCall:
    """The write that carries a decision on the platform."""

    method: str
    path: str
    body: dict


def review(
    study: Study,
    calls: PlatformCalls,
    submissions: Iterable[Submission],
    *,
    decision_call: Callable[[str, Verdict], DecisionCall],
) -> dict:
    """Approve, reject or leave each submission awaiting review (``verdict``); release the
    pages of returned and timed-out ones. A submission with a decision already sent gets
    nothing, and only one review sends each decision (``send_decision_once``). A dry run sends
    no decision and records none. Returns the job's result: who was approved, rejected, left
    (and why), already sent and released, each named by pseudonym."""
    enrollments = {
        e.participant.platform_worker_id: e
        for e in Enrollment.objects.filter(study=study, participant__source=calls.platform).select_related(
            "participant"
        )
    }
    names = PseudonymCache(study.pseudonym_salt)
    outcome: dict[str, list] = {
        "approved": [],
        "rejected": [],
        "left": [],
        "already_sent": [],
        "released": [],
    }
    released: list[str] = []
    sent = set(sent_decisions(study, calls.platform).values_list("submission_id", flat=True))
    for submission in list(submissions):  # every page first: a decision would shift the pages
        enrollment = enrollments.get(submission.worker_id)
        name = shown_name(names, enrollment, submission.worker_id)
        if submission.status == RELEASED and enrollment is not None:
            released.append(submission.worker_id)
            outcome["released"].append(name)
            continue
        if submission.status != AWAITING:
            continue
        decided = verdict(study, enrollment)
        if decided.action == LEAVE:
            outcome["left"].append({"participant": name, "why": decided.reason})
        elif submission.submission_id in sent:
            outcome["already_sent"].append(name)
        elif _send(
            study, calls, submission, enrollment, decided, decision_call(submission.submission_id, decided)
        ):
            outcome["approved" if decided.action == APPROVE else "rejected"].append(name)
        else:  # a review at the same time holds it
            outcome["already_sent"].append(name)
    if released and not calls.context.dry_run:
        outcome["released_pages"] = mark_returned(study, participants=released)["released_assignments"]
    return outcome


def _send(
    study: Study,
    calls: PlatformCalls,
    submission: Submission,
    enrollment: Enrollment | None,
    decided: Verdict,
    call: DecisionCall,
) -> bool:
    """Send one decision; whether this run sent it."""
    if calls.context.dry_run:
        calls.write(call.method, call.path, call.body)
        return True
    return send_decision_once(
        study,
        platform=calls.platform,
        submission_id=submission.submission_id,
        enrollment=enrollment,
        action=decided.action,
        message=decided.reason if decided.action == REJECT else "",
        send=lambda: calls.write(call.method, call.path, call.body),
    )
