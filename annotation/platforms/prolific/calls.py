"""Prolific through its API: publish a study, review its submissions, pay bonuses.

The jobs (``workers/tasks/platforms.py``) call these with a ``ProlificClient``. What is
Prolific's own is here: the study body with our link and codes, the submissions listed as the
room's review loop reads them, the decision call, and the bulk bonus (created, then paid). The
rules are the room's: the verdicts and the loop (``platforms.review``), the bonus states
(``platforms.bonuses``), the record (``platforms.records``).
"""

from __future__ import annotations

from annotation.errors import InputError
from annotation.models import Platform, PlatformBonus, PlatformCall, PlatformStudy, Study
from annotation.platforms.bonuses import (
    BonusLine,
    bonus_pseudonym,
    check_bonus_lines,
    claim_new_bonuses,
    give_back_claimed,
    name_created_bonuses,
    pay_once,
    record_bonuses,
    refuse_stuck,
)
from annotation.platforms.errors import PlatformError
from annotation.platforms.links import participant_links
from annotation.platforms.money import as_currency
from annotation.platforms.plans import publish_places
from annotation.platforms.prolific.client import ProlificClient
from annotation.platforms.records import NOT_YET_ON, platform_study
from annotation.platforms.review import (
    AWAITING,
    REJECT,
    RELEASED,
    DecisionCall,
    Submission,
    Verdict,
    review,
)

# Prolific's submission statuses, as the room's review loop reads them.
STATUSES = {"AWAITING REVIEW": AWAITING, "RETURNED": RELEASED, "TIMED-OUT": RELEASED}
# Prolific's call that creates a bulk bonus (and the audit log's record of it).
CREATE_BONUS_PATH = "/api/v1/submissions/bonus-payments/"


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
    places = publish_places(study, places)
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


def review_submissions(study: Study, client: ProlificClient) -> dict:
    """Approve, reject or leave each submission awaiting review; release the pages of
    returned and timed-out ones (``review.review``)."""
    prolific_id = platform_study(study).prolific_study_id
    if not prolific_id:
        raise InputError({"study": [NOT_YET_ON["prolific"]]})
    listed = (
        Submission(row["id"], row.get("participant_id", ""), STATUSES.get(row.get("status", ""), ""))
        for row in client.pages("/api/v1/submissions/", {"study": prolific_id})
    )
    return review(study, client, listed, decision_call=_decision_call)


def _decision_call(submission_id: str, decided: Verdict) -> DecisionCall:
    body = {"action": decided.action}
    if decided.action == REJECT:
        body |= {"rejection_category": "FAILED_CHECK", "message": decided.reason}
    return DecisionCall("POST", f"/api/v1/submissions/{submission_id}/transition/", body)


# --- bonuses -----------------------------------------------------------------------------


def pay_bonuses(study: Study, client: ProlificClient, *, lines: list[BonusLine]) -> dict:
    """Pay the file's bonuses once each: checked against the cap, recorded, created on
    Prolific as one bulk bonus, then paid. Refuses while an earlier payment's outcome is
    unknown (PAYING rows), naming it: the researcher settles it first."""
    refuse_stuck(study, platform=Platform.PROLIFIC)
    if client.context.dry_run:
        planned = check_bonus_lines(study, platform=Platform.PROLIFIC, lines=lines)
        csv_text = "".join(
            f"{b.participant.platform_worker_id},{as_currency(b.line.amount_cents)}\n" for b in planned
        )
        prolific_id = platform_study(study).prolific_study_id or "<study id>"
        client.post(CREATE_BONUS_PATH, {"study_id": prolific_id, "csv_bonuses": csv_text})
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
            raise InputError({"study": [NOT_YET_ON["prolific"]]})
        return []
    claimed = claim_new_bonuses(study, platform=Platform.PROLIFIC)
    if not claimed:
        return []
    csv_text = "".join(
        f"{row.participant.platform_worker_id},{as_currency(row.amount_cents)}\n" for row in claimed
    )
    try:
        reply = client.post(CREATE_BONUS_PATH, {"study_id": prolific_id, "csv_bonuses": csv_text})
    except PlatformError:
        give_back_claimed(claimed)
        raise
    batch_id = str(reply.get("id", ""))
    if not batch_id:
        give_back_claimed(claimed)
        raise PlatformError("Prolific created the bonus payment but gave no id; nothing was paid.")
    name_created_bonuses(claimed, batch_id)
    return _pay_batch(study, client, batch_id)


def _pay_created(study: Study, client: ProlificClient) -> list[str]:
    """Pay each bulk bonus whose rows are CREATED (left by an earlier run), one payment each."""
    created = PlatformBonus.objects.filter(
        study=study, platform=Platform.PROLIFIC, state=PlatformBonus.State.CREATED
    )
    paid: list[str] = []
    for batch_id in sorted(set(created.values_list("batch_id", flat=True))):
        paid += _pay_batch(study, client, batch_id)
    return paid


def _pay_batch(study: Study, client: ProlificClient, batch_id: str) -> list[str]:
    """Pay one created bulk bonus (``pay_once``): the pseudonyms of the bonuses paid."""

    def pay() -> dict:
        return client.post(f"/api/v1/bulk-bonus-payments/{batch_id}/pay/", {})

    rows = pay_once(
        study, platform=Platform.PROLIFIC, key=batch_id, before=PlatformBonus.State.CREATED, send=pay
    )
    return [bonus_pseudonym(study, row) for row in rows]


def unpaid_batches(study: Study) -> list[dict]:
    """The bulk bonuses created on Prolific for this study and never paid, from the audit
    log (every create call and its reply is kept there): their id, amount, when, and how
    many of our bonuses wait in each (CREATED: the next run pays it; 0: none of ours does,
    such as one whose rows were settled as unpaid). Listed on the platforms page and by
    ``prolific bonus SLUG --list``, so that no bulk bonus is left created and forgotten."""
    created = PlatformCall.objects.filter(
        study=study,
        platform=Platform.PROLIFIC,
        method="POST",
        path=CREATE_BONUS_PATH,
        dry_run=False,
        status__gte=200,
        status__lt=300,
    ).order_by("id")
    rows = PlatformBonus.objects.filter(study=study, platform=Platform.PROLIFIC).exclude(batch_id="")
    states: dict[str, list[str]] = {}
    for batch_id, state in rows.values_list("batch_id", "state"):
        states.setdefault(batch_id, []).append(state)
    listed = []
    for call in created:
        reply = call.response_body if isinstance(call.response_body, dict) else {}
        batch_id = str(reply.get("id", ""))
        held = states.get(batch_id, [])
        if not batch_id or PlatformBonus.State.PAYING in held or PlatformBonus.State.PAID in held:
            continue
        listed.append(
            {
                "batch_id": batch_id,
                "amount_cents": reply.get("amount"),
                "created_at": call.created_at,
                "waiting": held.count(PlatformBonus.State.CREATED),
            }
        )
    return listed
