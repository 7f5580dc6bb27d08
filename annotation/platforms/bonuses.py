"""Bonuses on a crowd platform: the researcher's file, the cap, and the records that make
each bonus (one participant, one reason) paid at most once, whatever fails in between.

``PlatformBonus`` moves NEW → CREATING → CREATED → PAYING → PAID with conditional UPDATEs;
the platform's create and pay calls go out only after one run has claimed the rows in a
committed transaction, so two runs at once never send the same rows, and a crash at any
point leaves either rows that were never paid (NEW, CREATING, CREATED: paid by the next run)
or rows whose payment may have happened (PAYING: never paid again until the researcher says,
``settle_bonuses``, what the platform's own records show).

The cap holds whatever runs at once: ``record_bonuses`` checks the file against it and
writes the rows while holding the study's ``PlatformStudy`` row (``SELECT … FOR UPDATE``),
so a second run's check waits for the first one's rows and counts them.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Participant, Platform, PlatformBonus, PlatformCall, PlatformStudy, Study
from annotation.platforms.money import MAX_BONUS_CAP_CENTS, MAX_BONUS_CENTS, cents_from_text
from annotation.platforms.review import CLAIM_EXPIRES
from annotation.services.populations import real_enrollments
from annotation.services.pseudonyms import PseudonymCache

MAX_REASON = 200
# Prolific's call that creates a bulk bonus (and the audit log's record of it).
PROLIFIC_CREATE_PATH = "/api/v1/submissions/bonus-payments/"


@dataclass(frozen=True)
class BonusLine:
    """One line of the researcher's file: who (pseudonym or platform id), how much, why."""

    participant: str
    amount_cents: int
    reason: str = ""

    def as_dict(self) -> dict:
        return {"participant": self.participant, "amount_cents": self.amount_cents, "reason": self.reason}


def parse_bonus_csv(text: str) -> list[BonusLine]:
    """``participant,amount[,reason]`` lines (a header line is allowed); amounts in the study's
    currency with at most two decimals (``1.50``). Every bad line named at once."""
    lines, errors = [], []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if number == 1 and len(cells) > 1 and cells[1].lower() in {"amount", "bonus"}:
            continue
        if len(cells) not in (2, 3) or not cells[0]:
            errors.append(f"line {number}: expected participant,amount[,reason]")
            continue
        try:
            cents = cents_from_text(cells[1], field="amount", high=MAX_BONUS_CENTS)
        except InputError as exc:
            errors.append(f"line {number}: {cells[1][:40]!r}: {' '.join(exc.errors['amount'])}")
            continue
        reason = cells[2] if len(cells) == 3 else ""
        if len(reason) > MAX_REASON:
            errors.append(f"line {number}: the reason is longer than {MAX_REASON} characters")
            continue
        lines.append(BonusLine(cells[0], cents, reason))
    if not lines and not errors:
        errors.append("the file lists no bonus")
    if errors:
        raise InputError({"file": errors})
    return lines


def set_bonus_cap(study: Study, text: str) -> int:
    """The study's bonus cap per participant from an amount typed by a person (``2.50``;
    ``0``: no bonuses), at most ``MAX_BONUS_CAP_CENTS``. ``InputError`` naming
    ``bonus_cap``, nothing changed, otherwise. Returns the cap in cents."""
    cents = cents_from_text(text, field="bonus_cap", high=MAX_BONUS_CAP_CENTS, zero_ok=True)
    PlatformStudy.objects.update_or_create(study=study, defaults={"bonus_cap_cents": cents})
    return cents


@dataclass(frozen=True)
class PlannedBonus:
    participant: Participant
    pseudonym: str
    line: BonusLine


def check_bonus_lines(study: Study, *, platform: str, lines: list[BonusLine]) -> list[PlannedBonus]:
    """Each line's participant (one of the study's from ``platform``, by pseudonym or
    platform id) and the cap: a participant's bonuses in this study, paid or on their way,
    with these, stay within ``PlatformStudy.bonus_cap_cents``. ``InputError`` naming every
    line at fault; nothing is recorded."""
    cap = PlatformStudy.objects.filter(study=study).values_list("bonus_cap_cents", flat=True).first() or 0
    if cap <= 0:
        raise InputError(
            {"bonus_cap_cents": ["Set the study's bonus cap (per participant) before paying bonuses."]}
        )
    known = _participants_by_name(study, platform)
    errors, planned = [], []
    seen: set[tuple[int, str]] = set()
    for number, line in enumerate(lines, start=1):
        found = known.get(line.participant)
        if found is None:
            errors.append(
                f"line {number}: {line.participant!r} is not a {platform} participant of this study"
            )
            continue
        participant, pseudonym = found
        if (participant.pk, line.reason) in seen:
            errors.append(f"line {number}: {line.participant!r} is listed twice with the same reason")
            continue
        seen.add((participant.pk, line.reason))
        planned.append(PlannedBonus(participant, pseudonym, line))
    errors += _over_cap(study, platform, planned, cap)
    if errors:
        raise InputError({"file": errors})
    return planned


def pseudonymous_lines(study: Study, *, platform: str, lines: list[BonusLine]) -> list[BonusLine]:
    """The lines with each known participant named by their pseudonym: what a job's parameters
    keep, since every researcher of the study reads them and platform ids are the owner's only.
    An unknown name stays as given (the job refuses it, naming it)."""
    known = _participants_by_name(study, platform)
    return [
        BonusLine(known[line.participant][1], line.amount_cents, line.reason)
        if line.participant in known
        else line
        for line in lines
    ]


def _participants_by_name(study: Study, platform: str) -> dict[str, tuple[Participant, str]]:
    names = PseudonymCache(study.pseudonym_salt)
    known: dict[str, tuple[Participant, str]] = {}
    rows = real_enrollments(study).filter(participant__source=platform).select_related("participant")
    for enrollment in rows:
        p = enrollment.participant
        pseudonym = names.get(p.pk, p.source, p.platform_worker_id, p.public_id)
        known[pseudonym] = known[p.platform_worker_id] = (p, pseudonym)
    return known


def _over_cap(study: Study, platform: str, planned: list[PlannedBonus], cap: int) -> list[str]:
    """Lines that would take a participant past the cap. A line already recorded (same
    participant and reason) adds nothing new: it is that bonus again, paid at most once."""
    recorded = {
        (row["participant_id"], row["reason"]): row["amount_cents"]
        for row in PlatformBonus.objects.filter(study=study, platform=platform).values(
            "participant_id", "reason", "amount_cents"
        )
    }
    totals = dict(
        PlatformBonus.objects.filter(study=study, platform=platform)
        .values_list("participant_id")
        .annotate(total=Sum("amount_cents"))
    )
    errors = []
    for bonus in planned:
        key = (bonus.participant.pk, bonus.line.reason)
        if key in recorded:
            if recorded[key] != bonus.line.amount_cents:
                errors.append(
                    f"{bonus.line.participant}: a bonus for {bonus.line.reason or 'no reason'!r} is already "
                    f"recorded at {recorded[key]} cents, not {bonus.line.amount_cents}"
                )
            continue
        totals[bonus.participant.pk] = totals.get(bonus.participant.pk, 0) + bonus.line.amount_cents
        if totals[bonus.participant.pk] > cap:
            errors.append(
                f"{bonus.line.participant}: {totals[bonus.participant.pk]} cents in bonuses would pass the "
                f"study's cap of {cap} cents"
            )
    return errors


def record_bonuses(
    study: Study, *, platform: str, lines: list[BonusLine], user=None
) -> tuple[list[PlannedBonus], list[PlatformBonus]]:
    """Check the lines (``check_bonus_lines``) and record them, as one step no other run can
    come between: the study's ``PlatformStudy`` row is locked first, so two files sent at
    once are checked against the cap one after the other, the second counting the first's
    rows. New bonuses are created NEW, recorded ones returned as they are. Both platforms'
    bonus runs record through here; ``InputError`` (nothing recorded) as the check says."""
    with transaction.atomic():
        list(PlatformStudy.objects.select_for_update().filter(study=study).values_list("pk"))
        planned = check_bonus_lines(study, platform=platform, lines=lines)
        rows = []
        for bonus in planned:
            row, _ = PlatformBonus.objects.get_or_create(
                study=study,
                platform=platform,
                participant=bonus.participant,
                reason=bonus.line.reason,
                defaults={"amount_cents": bonus.line.amount_cents, "created_by": user},
            )
            rows.append(row)
    return planned, rows


def claim_new_bonuses(study: Study, *, platform: str) -> list[PlatformBonus]:
    """The NEW rows this run will create a bulk bonus for, claimed (→ CREATING, committed)
    so that a run at the same time finds none of them and creates no second bulk bonus for
    them. Claims left by a run that died (older than ``CLAIM_EXPIRES``) are given
    back first."""
    rows = PlatformBonus.objects.filter(study=study, platform=platform)
    rows.filter(state=PlatformBonus.State.CREATING, paying_since__lt=timezone.now() - CLAIM_EXPIRES).update(
        state=PlatformBonus.State.NEW, paying_since=None
    )
    with transaction.atomic():
        ids = list(
            rows.select_for_update(skip_locked=True)
            .filter(state=PlatformBonus.State.NEW)
            .order_by("id")
            .values_list("pk", flat=True)
        )
        rows.filter(pk__in=ids, state=PlatformBonus.State.NEW).update(
            state=PlatformBonus.State.CREATING, paying_since=timezone.now()
        )
    return list(rows.filter(pk__in=ids).select_related("participant").order_by("id"))


def name_created_bonuses(rows: list[PlatformBonus], batch_id: str) -> None:
    """The claimed rows are in the platform's bulk bonus ``batch_id`` (CREATING → CREATED)."""
    PlatformBonus.objects.filter(pk__in=[r.pk for r in rows], state=PlatformBonus.State.CREATING).update(
        state=PlatformBonus.State.CREATED, batch_id=batch_id, paying_since=None
    )


def give_back_claimed(rows: list[PlatformBonus]) -> None:
    """The create call failed: the claimed rows are NEW again (creating paid nothing)."""
    PlatformBonus.objects.filter(pk__in=[r.pk for r in rows], state=PlatformBonus.State.CREATING).update(
        state=PlatformBonus.State.NEW, paying_since=None
    )


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
        path=PROLIFIC_CREATE_PATH,
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


def stuck_bonuses(study: Study, *, platform: str):
    """Bonuses whose pay call may have gone through (PAYING): never paid again as they are."""
    return PlatformBonus.objects.filter(study=study, platform=platform, state=PlatformBonus.State.PAYING)


def settle_bonuses(study: Study, *, platform: str, batch_id: str, paid: bool) -> int:
    """The researcher checked the platform's records for a payment whose outcome was unknown:
    paid → PAID; not paid → NEW (the next run pays it). Returns how many rows changed."""
    rows = stuck_bonuses(study, platform=platform).filter(batch_id=batch_id)
    if paid:
        return rows.update(state=PlatformBonus.State.PAID, paid_at=timezone.now())
    return rows.update(state=PlatformBonus.State.NEW, batch_id="")


def bonus_pseudonym(study: Study, bonus: PlatformBonus) -> str:
    """A bonus's participant as a job's result names them (``platform_review.shown_name``)."""
    p = bonus.participant
    return PseudonymCache(study.pseudonym_salt).get(p.pk, p.source, p.platform_worker_id, p.public_id)
