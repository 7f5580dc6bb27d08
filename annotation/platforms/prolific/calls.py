"""Prolific through its API: publish a study, review its submissions, pay bonuses.

The jobs (``workers/tasks/platforms.py``) call these with a ``ProlificClient``; the rules
they apply are the site's own: the link (``links``), the codes (the study's), the places
(``capacity.places_wanted``), the verdicts (``platform_review``), released pages
(``research.mark_returned``) and the bonus records (``platform_bonus``).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import (
    Enrollment,
    Participant,
    Platform,
    PlatformBonus,
    PlatformStudy,
    Study,
)
from annotation.platforms.bonuses import (
    PROLIFIC_CREATE_PATH,
    BonusLine,
    bonus_pseudonym,
    check_bonus_lines,
    claim_new_bonuses,
    give_back_claimed,
    name_created_bonuses,
    record_bonuses,
    stuck_bonuses,
)
from annotation.platforms.errors import PlatformError, PlatformRefused
from annotation.platforms.money import as_currency
from annotation.platforms.prolific.client import ProlificClient
from annotation.platforms.review import (
    APPROVE,
    LEAVE,
    REJECT,
    send_decision_once,
    sent_decisions,
    shown_name,
    verdict,
)
from annotation.services.capacity import places_wanted
from annotation.services.links import participant_links
from annotation.services.pseudonyms import PseudonymCache
from annotation.services.research import mark_returned

AWAITING_REVIEW = "AWAITING REVIEW"
RELEASED_STATUSES = {"RETURNED", "TIMED-OUT"}


def platform_study(study: Study) -> PlatformStudy:
    """The study's platform record, created on first use."""
    return PlatformStudy.objects.get_or_create(study=study)[0]


# --- publish -----------------------------------------------------------------------------


def prolific_study_body(
    study: Study, *, study_url: str, places: int, reward_cents: int, minutes: int
) -> dict:
    """The body of ``POST /api/v1/studies/``: our link with Prolific's placeholders, the
    study's completion code (and its screen-out code), places, reward and time."""
    if not study.completion_code:
        raise InputError(
            {"completion_code": ["The study needs a completion code before it goes on Prolific."]}
        )
    codes = [
        {"code": study.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}
    ]
    if study.screenout_code:
        codes.append(
            {
                "code": study.screenout_code,
                "code_type": "FAILED_ATTENTION_CHECK",
                "actions": [{"action": "MANUALLY_REVIEW"}],
            }
        )
    return {
        "name": study.title,
        "internal_name": study.slug,
        "description": study.description or study.title,
        "external_study_url": participant_links(study_url).prolific,
        "prolific_id_option": "url_parameters",
        "completion_codes": codes,
        "estimated_completion_time": minutes,
        "reward": reward_cents,
        "total_available_places": places,
    }


def publish_study(
    study: Study,
    client: ProlificClient,
    *,
    study_url: str,
    places: int | None,
    reward_cents: int,
    minutes: int,
    draft: bool,
) -> dict:
    """Create the Prolific study (unless it exists: then only publish the draft) and publish
    it unless ``draft``; the Prolific id is stored on the study as soon as Prolific gives it."""
    record = platform_study(study)
    places = places or places_wanted(study)
    if places <= 0:
        raise InputError({"places": ["The study lacks no answers: there is nothing to recruit for."]})
    prolific_id = record.prolific_study_id
    created = False
    if not prolific_id:
        body = prolific_study_body(
            study, study_url=study_url, places=places, reward_cents=reward_cents, minutes=minutes
        )
        reply = client.post("/api/v1/studies/", body)
        prolific_id = str(reply.get("id", ""))
        created = True
        if not client.context.dry_run:
            if not prolific_id:
                raise PlatformError("Prolific created the study but gave no id; look for it on Prolific.")
            PlatformStudy.objects.filter(pk=record.pk).update(
                prolific_study_id=prolific_id, reward_cents=reward_cents
            )
    elif draft:
        raise InputError({"study": [f"Already on Prolific as {prolific_id}; publish it without --draft."]})
    if not draft:
        client.post(f"/api/v1/studies/{prolific_id or '<new id>'}/transition/", {"action": "PUBLISH"})
    return {
        "prolific_study_id": prolific_id,
        "created": created,
        "published": not draft,
        "places": places,
        "reward_cents": reward_cents,
        "cost_cents": places * reward_cents,
    }


# --- review ------------------------------------------------------------------------------


def _enrollments_by_pid(study: Study) -> dict[str, Enrollment]:
    rows = Enrollment.objects.filter(study=study, participant__source=Participant.Source.PROLIFIC)
    return {e.participant.platform_worker_id: e for e in rows.select_related("participant")}


def review_submissions(study: Study, client: ProlificClient) -> dict:
    """Approve, reject or leave each submission awaiting review; release the pages of
    returned and timed-out ones. A submission with a decision already sent gets nothing."""
    prolific_id = platform_study(study).prolific_study_id
    if not prolific_id:
        raise InputError({"study": ["The study is not on Prolific yet (publish it first)."]})
    enrollments = _enrollments_by_pid(study)
    names = PseudonymCache(study.pseudonym_salt)
    outcome: dict[str, list] = {
        "approved": [],
        "rejected": [],
        "left": [],
        "already_sent": [],
        "released": [],
    }
    released: list[str] = []
    sent = set(sent_decisions(study, Platform.PROLIFIC).values_list("submission_id", flat=True))
    for submission in list(client.pages("/api/v1/submissions/", {"study": prolific_id})):
        pid, status = submission.get("participant_id", ""), submission.get("status", "")
        enrollment = enrollments.get(pid)
        name = shown_name(names, enrollment, pid)
        if status in RELEASED_STATUSES and enrollment is not None:
            released.append(pid)
            outcome["released"].append(name)
            continue
        if status != AWAITING_REVIEW:
            continue
        decided = verdict(study, enrollment)
        if decided.action == LEAVE:
            outcome["left"].append({"participant": name, "why": decided.reason})
            continue
        if submission["id"] in sent:
            outcome["already_sent"].append(name)
            continue
        if _transition(study, client, submission["id"], enrollment, decided.action, decided.reason):
            outcome["approved" if decided.action == APPROVE else "rejected"].append(name)
        else:  # a review at the same time holds it
            outcome["already_sent"].append(name)
    if released and not client.context.dry_run:
        outcome["released_pages"] = mark_returned(study, participants=released)["released_assignments"]
    return outcome


def _transition(
    study: Study,
    client: ProlificClient,
    submission_id: str,
    enrollment: Enrollment | None,
    action: str,
    reason: str,
) -> bool:
    """Record the decision (SENDING), send it, mark it SENT; whether this run sent it (a
    review running at the same time may hold it). A dry run records nothing."""
    body = {"action": action}
    if action == REJECT:
        body |= {"rejection_category": "FAILED_CHECK", "message": reason}
    if client.context.dry_run:
        client.post(f"/api/v1/submissions/{submission_id}/transition/", body)
        return True
    return send_decision_once(
        study,
        platform=Platform.PROLIFIC,
        submission_id=submission_id,
        enrollment=enrollment,
        action=action,
        message=body.get("message", ""),
        send=lambda: client.post(f"/api/v1/submissions/{submission_id}/transition/", body),
    )


# --- bonuses -----------------------------------------------------------------------------


def pay_bonuses(study: Study, client: ProlificClient, *, lines: list[BonusLine]) -> dict:
    """Pay the file's bonuses once each: checked against the cap, recorded, created on
    Prolific as one bulk bonus, then paid. Refuses while an earlier payment's outcome is
    unknown (PAYING rows), naming it: the researcher settles it first."""
    stuck = list(
        stuck_bonuses(study, platform=Platform.PROLIFIC).values_list("batch_id", flat=True).distinct()
    )
    if stuck:
        raise PlatformError(
            f"An earlier bonus payment ({', '.join(stuck)}) may or may not have been paid (the run stopped "
            "while paying). Check Prolific's records, then run 'prolific bonus SLUG --settle ID paid' (or "
            "'unpaid'); nothing was sent now."
        )
    if client.context.dry_run:
        planned = check_bonus_lines(study, platform=Platform.PROLIFIC, lines=lines)
        csv_text = "".join(
            f"{b.participant.platform_worker_id},{as_currency(b.line.amount_cents)}\n" for b in planned
        )
        prolific_id = platform_study(study).prolific_study_id or "<study id>"
        client.post(PROLIFIC_CREATE_PATH, {"study_id": prolific_id, "csv_bonuses": csv_text})
        client.post("/api/v1/bulk-bonus-payments/<id>/pay/", {})
        total = sum(bonus.line.amount_cents for bonus in planned)
        return {"bonuses": len(planned), "total_cents": total, "paid": [], "already_paid": []}
    planned, rows = record_bonuses(study, platform=Platform.PROLIFIC, lines=lines, user=client.context.user)
    total = sum(bonus.line.amount_cents for bonus in planned)
    already = [bonus_pseudonym(study, r) for r in rows if r.state == PlatformBonus.State.PAID]
    paid = _pay_created(study, client) + _create_and_pay(study, client)
    return {"bonuses": len(planned), "total_cents": total, "paid": paid, "already_paid": already}


def _create_and_pay(study: Study, client: ProlificClient) -> list[str]:
    """The NEW rows, claimed by this run (``claim_new_bonuses``): one bulk bonus on Prolific
    (creating pays nothing), then paid. A run at the same time claims none of them, so it
    creates no second bulk bonus for the same bonuses."""
    prolific_id = platform_study(study).prolific_study_id
    if not prolific_id:
        if PlatformBonus.objects.filter(
            study=study, platform=Platform.PROLIFIC, state=PlatformBonus.State.NEW
        ).exists():
            raise InputError({"study": ["The study is not on Prolific yet (publish it first)."]})
        return []
    claimed = claim_new_bonuses(study, platform=Platform.PROLIFIC)
    if not claimed:
        return []
    csv_text = "".join(
        f"{row.participant.platform_worker_id},{as_currency(row.amount_cents)}\n" for row in claimed
    )
    try:
        reply = client.post(PROLIFIC_CREATE_PATH, {"study_id": prolific_id, "csv_bonuses": csv_text})
    except PlatformError:
        give_back_claimed(claimed)
        raise
    batch_id = str(reply.get("id", ""))
    if not batch_id:
        give_back_claimed(claimed)
        raise PlatformError("Prolific created the bonus payment but gave no id; nothing was paid.")
    name_created_bonuses(claimed, batch_id)
    return _pay_created(study, client)


def _pay_created(study: Study, client: ProlificClient) -> list[str]:
    """Pay each bulk bonus whose rows are all CREATED: the rows become PAYING (committed)
    before the call, PAID after it; a refusal or an unsent call puts them back to CREATED."""
    created = PlatformBonus.objects.filter(
        study=study, platform=Platform.PROLIFIC, state=PlatformBonus.State.CREATED
    )
    paid: list[str] = []
    for batch_id in sorted(set(created.values_list("batch_id", flat=True))):
        batch = PlatformBonus.objects.filter(study=study, platform=Platform.PROLIFIC, batch_id=batch_id)
        with transaction.atomic():
            claimed = batch.filter(state=PlatformBonus.State.CREATED).update(
                state=PlatformBonus.State.PAYING, paying_since=timezone.now()
            )
        if not claimed:
            continue  # another run took it
        try:
            client.post(f"/api/v1/bulk-bonus-payments/{batch_id}/pay/", {})
        except PlatformError as exc:
            if not exc.maybe_done:  # refused, or never sent: nothing was paid
                batch.filter(state=PlatformBonus.State.PAYING).update(state=PlatformBonus.State.CREATED)
            raise _pay_failed(exc, batch_id) from None
        batch.filter(state=PlatformBonus.State.PAYING).update(
            state=PlatformBonus.State.PAID, paid_at=timezone.now()
        )
        paid += [bonus_pseudonym(study, row) for row in batch.select_related("participant")]
    return paid


def _pay_failed(exc: PlatformError, batch_id: str) -> PlatformError:
    if exc.maybe_done:
        return type(exc)(
            f"{exc} The bonus payment {batch_id} may have been paid: it is kept as 'paying' and will not "
            "be paid again. Check Prolific's records, then settle it (--settle)."
        )
    if isinstance(exc, PlatformRefused):
        return PlatformRefused(f"{exc} Nothing was paid.", status=exc.status, body=exc.body)
    return type(exc)(f"{exc} Nothing was paid.")
