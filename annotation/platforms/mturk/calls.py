"""Mechanical Turk through boto3: publish a HIT, review its assignments, send bonuses.

The same rules as Prolific's (``prolific``): the link, the verdicts (``platform_review``),
the bonus records and cap (``platform_bonus``). Credentials come from the standard AWS
environment variables (boto3 reads them). Every call is written to the audit log; a dry run
sends no write and lists what it would send.

``SendBonus`` takes a ``UniqueRequestToken``: MTurk pays one bonus per token (for 24 hours),
so the token is derived from the study, the worker and the reason, and a bonus whose call
had no clear answer is sent again with the same token within that day, never after it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Enrollment, Participant, Platform, PlatformBonus, Study
from annotation.platforms.audit import CallContext, record_call
from annotation.platforms.bonuses import BonusLine, bonus_pseudonym, check_bonus_lines, record_bonuses
from annotation.platforms.errors import (
    PlatformError,
    PlatformOutcomeUnknown,
    PlatformRefused,
    PlatformUnreachable,
)
from annotation.platforms.money import as_currency
from annotation.platforms.prolific.calls import platform_study
from annotation.platforms.prolific.client import PlannedCall
from annotation.platforms.review import (
    APPROVE,
    LEAVE,
    send_decision_once,
    sent_decisions,
    shown_name,
    verdict,
)
from annotation.services.links import participant_links
from annotation.services.pseudonyms import PseudonymCache

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
TOKEN_DAYS = 1  # how long MTurk remembers a UniqueRequestToken
# MTurk's operations (as the audit log names them) and boto3's methods for them.
OPERATIONS = {
    "CreateHIT": "create_hit",
    "ListAssignmentsForHIT": "list_assignments_for_hit",
    "ApproveAssignment": "approve_assignment",
    "RejectAssignment": "reject_assignment",
    "SendBonus": "send_bonus",
}


def mturk_boto_client(*, sandbox: bool):
    """boto3's MTurk client (MTurk lives in us-east-1); credentials from the environment."""
    import boto3  # imported when a job needs it: the web process starts without it loaded

    return boto3.client(
        "mturk", region_name="us-east-1", endpoint_url=SANDBOX_ENDPOINT if sandbox else LIVE_ENDPOINT
    )


@dataclass
class MTurkCalls:
    """Calls through a boto3 client, each written to the audit log; writes held back in a dry run."""

    context: CallContext
    client: Any
    endpoint: str
    would_send: list[PlannedCall] = field(default_factory=list)

    def read(self, operation: str, **params: Any) -> dict:
        return self._call(operation, params)

    def write(self, operation: str, **params: Any) -> dict:
        if self.context.dry_run:
            self.would_send.append(PlannedCall(operation, self.endpoint, params))
            record_call(
                self.context, platform=Platform.MTURK, method=operation, path=self.endpoint, body=params
            )
            return {}
        return self._call(operation, params)

    def _call(self, operation: str, params: dict) -> dict:
        from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

        audit: dict[str, Any] = {
            "platform": Platform.MTURK,
            "method": operation,
            "path": self.endpoint,
            "body": params,
        }
        method = getattr(self.client, OPERATIONS[operation])
        try:
            reply = method(**params)
        except ClientError as exc:
            info = exc.response.get("ResponseMetadata", {})
            status = info.get("HTTPStatusCode") or 400
            error = exc.response.get("Error", {})
            record_call(self.context, **audit, status=status, reply=error)
            if status >= 500:
                raise PlatformOutcomeUnknown(
                    f"MTurk answered {status} to {operation}: {error.get('Message', '')}"
                ) from None
            raise PlatformRefused(
                f"MTurk refused {operation} ({error.get('Code', status)}): {error.get('Message', '')}",
                status=status,
                body=error,
            ) from None
        except EndpointConnectionError as exc:
            record_call(self.context, **audit, error=str(exc))
            raise PlatformUnreachable(f"MTurk could not be reached ({exc}); nothing was sent.") from None
        except BotoCoreError as exc:
            record_call(self.context, **audit, error=str(exc))
            raise PlatformOutcomeUnknown(f"MTurk did not answer {operation} ({exc}).") from None
        clean = {key: value for key, value in reply.items() if key != "ResponseMetadata"}
        status = reply.get("ResponseMetadata", {}).get("HTTPStatusCode", 200)
        record_call(self.context, **audit, status=status, reply=_jsonable(clean))
        return reply


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)  # datetimes


def publish_hit(
    study: Study,
    calls: MTurkCalls,
    *,
    study_url: str,
    assignments: int | None,
    reward_cents: int,
    minutes: int,
    sandbox: bool,
) -> dict:
    """Create a HIT with the study's ExternalQuestion; its id is stored on the study."""
    from annotation.services.capacity import places_wanted

    record = platform_study(study)
    if record.mturk_hit_id:
        raise InputError({"study": [f"Already on MTurk as HIT {record.mturk_hit_id}."]})
    if not study_url.startswith("https://"):
        raise InputError({"study_url": ["MTurk shows only an https:// link in its frame."]})
    count = assignments or places_wanted(study)
    reply = calls.write(
        "CreateHIT",
        Title=study.title[:128],
        Description=(study.description or study.title)[:2000],
        Question=participant_links(study_url).mturk_external_question,
        Reward=as_currency(reward_cents),
        MaxAssignments=count,
        AssignmentDurationInSeconds=minutes * 60 * 2,
        LifetimeInSeconds=7 * 24 * 3600,
        RequesterAnnotation=study.slug[:255],
    )
    hit_id = reply.get("HIT", {}).get("HITId", "")
    if hit_id:
        type(record).objects.filter(pk=record.pk).update(
            mturk_hit_id=hit_id, mturk_sandbox=sandbox, reward_cents=reward_cents
        )
    return {
        "hit_id": hit_id,
        "assignments": count,
        "reward_cents": reward_cents,
        "cost_cents": count * reward_cents,
    }


def review_assignments(study: Study, calls: MTurkCalls) -> dict:
    """Approve, reject (feedback names the failed checks) or leave each submitted assignment;
    an assignment with a decision already sent gets nothing."""
    hit_id = platform_study(study).mturk_hit_id
    if not hit_id:
        raise InputError({"study": ["The study is not on MTurk yet (publish it first)."]})
    rows = Enrollment.objects.filter(
        study=study, participant__source=Participant.Source.MTURK
    ).select_related("participant")
    enrollments = {e.participant.platform_worker_id: e for e in rows}
    names = PseudonymCache(study.pseudonym_salt)
    outcome: dict[str, list] = {"approved": [], "rejected": [], "left": [], "already_sent": []}
    sent = set(sent_decisions(study, Platform.MTURK).values_list("submission_id", flat=True))
    token = None
    while True:
        page = calls.read(
            "ListAssignmentsForHIT",
            HITId=hit_id,
            AssignmentStatuses=["Submitted"],
            MaxResults=100,
            **({"NextToken": token} if token else {}),
        )
        for assignment in page.get("Assignments", []):
            worker, assignment_id = assignment["WorkerId"], assignment["AssignmentId"]
            enrollment = enrollments.get(worker)
            decided, name = verdict(study, enrollment), shown_name(names, enrollment, worker)
            if decided.action == LEAVE:
                outcome["left"].append({"participant": name, "why": decided.reason})
            elif assignment_id in sent:
                outcome["already_sent"].append(name)
            elif _decide(study, calls, assignment_id, enrollment, decided.action, decided.reason):
                outcome["approved" if decided.action == APPROVE else "rejected"].append(name)
            else:  # a review at the same time holds it
                outcome["already_sent"].append(name)
        token = page.get("NextToken")
        if not token:
            return outcome


def _decide(
    study: Study,
    calls: MTurkCalls,
    assignment_id: str,
    enrollment: Enrollment | None,
    action: str,
    reason: str,
) -> bool:
    """Send the decision once (``send_decision_once``); whether this run sent it."""
    if action == APPROVE:
        operation, params = "ApproveAssignment", {"AssignmentId": assignment_id}
    else:
        operation, params = (
            "RejectAssignment",
            {"AssignmentId": assignment_id, "RequesterFeedback": reason[:1024]},
        )
    if calls.context.dry_run:
        calls.write(operation, **params)
        return True
    return send_decision_once(
        study,
        platform=Platform.MTURK,
        submission_id=assignment_id,
        enrollment=enrollment,
        action=action,
        message=params.get("RequesterFeedback", ""),
        send=lambda: calls.write(operation, **params),
    )


def bonus_token(study: Study, participant: Participant, reason: str) -> str:
    """The UniqueRequestToken of one bonus (at most 64 characters)."""
    return hashlib.sha256(f"{study.pk}:{participant.platform_worker_id}:{reason}".encode()).hexdigest()[:64]


def send_bonuses(study: Study, calls: MTurkCalls, *, lines: list[BonusLine]) -> dict:
    """SendBonus for each line not paid yet, once per (worker, reason)."""
    if calls.context.dry_run:
        planned = check_bonus_lines(study, platform=Platform.MTURK, lines=lines)
        total = sum(bonus.line.amount_cents for bonus in planned)
        for bonus in planned:
            calls.write(
                "SendBonus",
                **_bonus_params(study, bonus.participant, bonus.line.amount_cents, bonus.line.reason),
            )
        return {"bonuses": len(planned), "total_cents": total, "paid": [], "already_paid": []}
    planned, rows = record_bonuses(study, platform=Platform.MTURK, lines=lines, user=calls.context.user)
    total = sum(bonus.line.amount_cents for bonus in planned)
    paid, already = [], []
    for row in rows:
        if row.state == PlatformBonus.State.PAID:
            already.append(bonus_pseudonym(study, row))
            continue
        if row.state == PlatformBonus.State.PAYING and (
            row.paying_since or row.created_at
        ) < timezone.now() - timedelta(days=TOKEN_DAYS):
            raise PlatformError(
                f"The bonus for {bonus_pseudonym(study, row)} ({row.reason or 'no reason'}) may have "
                "been paid more than a day ago and MTurk no longer knows its token: check MTurk's records "
                "and settle it."
            )
        if row.state != PlatformBonus.State.PAYING:  # a PAYING row keeps the time its first call left
            claimed = PlatformBonus.objects.filter(pk=row.pk, state=row.state).update(
                state=PlatformBonus.State.PAYING, paying_since=timezone.now()
            )
            if not claimed:
                continue  # a run at the same time took it (and sends it)
        try:
            calls.write("SendBonus", **_bonus_params(study, row.participant, row.amount_cents, row.reason))
        except PlatformError as exc:
            if not exc.maybe_done:
                PlatformBonus.objects.filter(pk=row.pk).update(state=PlatformBonus.State.NEW)
            raise
        PlatformBonus.objects.filter(pk=row.pk).update(state=PlatformBonus.State.PAID, paid_at=timezone.now())
        paid.append(bonus_pseudonym(study, row))
    return {"bonuses": len(planned), "total_cents": total, "paid": paid, "already_paid": already}


def _bonus_params(study: Study, participant: Participant, cents: int, reason: str) -> dict:
    enrollment = Enrollment.objects.filter(study=study, participant=participant).first()
    assignment_id = (enrollment.platform_session or {}).get("assignmentId", "") if enrollment else ""
    if not assignment_id:
        raise InputError(
            {"file": [f"{participant.platform_worker_id}: no MTurk assignment is known for this worker."]}
        )
    return {
        "WorkerId": participant.platform_worker_id,
        "BonusAmount": as_currency(cents),
        "AssignmentId": assignment_id,
        "Reason": reason or f"A bonus for your work on {study.title}.",
        "UniqueRequestToken": bonus_token(study, participant, reason),
    }
