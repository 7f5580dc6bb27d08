"""Mechanical Turk through boto3: publish a HIT, review its assignments, send bonuses.

What is MTurk's own is here: the HIT with our ExternalQuestion, the assignments listed as the
room's review loop reads them, the decision calls, and ``SendBonus`` with its token. The rules
are the room's, as for Prolific: the verdicts and the loop (``platforms.review``), the bonus
states and the cap (``platforms.bonuses``), the record (``platforms.records``).

``SendBonus`` takes a ``UniqueRequestToken``: MTurk pays one bonus per token (for 24 hours),
so the token is derived from the study, the worker and the reason and kept as the bonus's key.
A bonus whose call had no clear answer is sent again with the same token within that day
(``bonuses.pay_again``), never after it: then the run refuses, naming the token, and the
researcher settles it (``mturk bonus SLUG --settle TOKEN paid|unpaid``).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from annotation.errors import InputError
from annotation.models import Enrollment, Participant, Platform, PlatformBonus, Study
from annotation.platforms.bonuses import (
    BonusLine,
    bonus_pseudonym,
    check_bonus_lines,
    pay_again,
    pay_once,
    record_bonuses,
    refuse_stuck,
)
from annotation.platforms.links import participant_links
from annotation.platforms.money import as_currency
from annotation.platforms.mturk.client import MTurkCalls
from annotation.platforms.plans import publish_places
from annotation.platforms.records import NOT_YET_ON, platform_study
from annotation.platforms.review import APPROVE, AWAITING, DecisionCall, Submission, Verdict, review

TOKEN_LIFE = timedelta(days=1)  # how long MTurk remembers a UniqueRequestToken


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
    record = platform_study(study)
    if record.mturk_hit_id:
        raise InputError({"study": [f"Already on MTurk as HIT {record.mturk_hit_id}."]})
    if not study_url.startswith("https://"):
        raise InputError({"study_url": ["MTurk shows only an https:// link in its frame."]})
    count = publish_places(study, assignments)
    reply = calls.change(
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
    """Approve, reject (feedback names the failed checks) or leave each submitted assignment
    (``review.review``)."""
    hit_id = platform_study(study).mturk_hit_id
    if not hit_id:
        raise InputError({"study": [NOT_YET_ON["mturk"]]})
    return review(study, calls, _submitted(calls, hit_id), decision_call=_decision_call(calls))


def _submitted(calls: MTurkCalls, hit_id: str):
    """The HIT's submitted assignments, page after page."""
    token = None
    while True:
        page = calls.operation(
            "ListAssignmentsForHIT",
            HITId=hit_id,
            AssignmentStatuses=["Submitted"],
            MaxResults=100,
            **({"NextToken": token} if token else {}),
        )
        for assignment in page.get("Assignments", []):
            yield Submission(assignment["AssignmentId"], assignment["WorkerId"], AWAITING)
        token = page.get("NextToken")
        if not token:
            return


def _decision_call(calls: MTurkCalls):
    def call(assignment_id: str, decided: Verdict) -> DecisionCall:
        if decided.action == APPROVE:
            return DecisionCall("ApproveAssignment", calls.endpoint, {"AssignmentId": assignment_id})
        body = {"AssignmentId": assignment_id, "RequesterFeedback": decided.reason[:1024]}
        return DecisionCall("RejectAssignment", calls.endpoint, body)

    return call


def bonus_token(study: Study, participant: Participant, reason: str) -> str:
    """The UniqueRequestToken of one bonus (at most 64 characters): its key."""
    return hashlib.sha256(f"{study.pk}:{participant.platform_worker_id}:{reason}".encode()).hexdigest()[:64]


def send_bonuses(study: Study, calls: MTurkCalls, *, lines: list[BonusLine]) -> dict:
    """SendBonus for each line not paid yet, once per (worker, reason): recorded under its
    token, claimed (PAYING) before the call, PAID after it (``bonuses.pay_once``); a bonus
    left PAYING by a call without a clear answer is sent again under the same token within
    MTurk's day (``bonuses.pay_again``). Refuses, naming the token, while one is older."""
    if calls.context.dry_run:
        planned = check_bonus_lines(study, platform=Platform.MTURK, lines=lines)
        assignments = _assignment_ids(study, [bonus.participant for bonus in planned])
        for bonus in planned:
            calls.change(
                "SendBonus",
                **_bonus_params(
                    study, bonus.participant, bonus.line.amount_cents, bonus.line.reason, assignments
                ),
            )
        total = sum(bonus.line.amount_cents for bonus in planned)
        return {"bonuses": len(planned), "total_cents": total, "paid": [], "already_paid": []}
    planned, rows = record_bonuses(
        study,
        platform=Platform.MTURK,
        lines=lines,
        user=calls.context.user,
        key=lambda participant, reason: bonus_token(study, participant, reason),
    )
    refuse_stuck(study, platform=Platform.MTURK, resend_within=TOKEN_LIFE)
    total = sum(bonus.line.amount_cents for bonus in planned)
    paid, already = [], []
    assignments = _assignment_ids(study, [row.participant for row in rows])
    for row in rows:
        if row.state == PlatformBonus.State.PAID:
            already.append(bonus_pseudonym(study, row))
            continue
        params = _bonus_params(study, row.participant, row.amount_cents, row.reason, assignments)

        def send(params=params):
            return calls.change("SendBonus", **params)

        if row.state == PlatformBonus.State.PAYING:
            sent = pay_again(study, platform=Platform.MTURK, key=row.batch_id, send=send)
        else:
            sent = pay_once(study, platform=Platform.MTURK, key=row.batch_id, before=row.state, send=send)
        paid += [bonus_pseudonym(study, bonus) for bonus in sent]
    return {"bonuses": len(planned), "total_cents": total, "paid": paid, "already_paid": already}


def _assignment_ids(study: Study, participants: list[Participant]) -> dict[int, str]:
    """Each participant's MTurk AssignmentId in this study, as their session keeps it (one query
    for the whole file)."""
    sessions = Enrollment.objects.filter(study=study, participant__in=participants).values_list(
        "participant_id", "platform_session"
    )
    return {pk: (session or {}).get("assignmentId", "") for pk, session in sessions}


def _bonus_params(
    study: Study, participant: Participant, cents: int, reason: str, assignments: dict[int, str]
) -> dict:
    assignment_id = assignments.get(participant.pk, "")
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
