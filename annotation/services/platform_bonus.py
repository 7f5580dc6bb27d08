"""Bonuses on a crowd platform: the researcher's file, the cap, and the records that make
each bonus (one participant, one reason) paid at most once, whatever fails in between.

``PlatformBonus`` moves NEW → CREATED → PAYING → PAID with conditional UPDATEs; the platform's
pay call goes out only after the rows are PAYING in a committed transaction, so a crash at
any point leaves either rows that were never paid (NEW, CREATED: paid by the next run) or
rows whose payment may have happened (PAYING: never paid again until the researcher says,
``settle_bonuses``, what the platform's own records show).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db.models import Sum

from annotation.errors import InputError
from annotation.models import Participant, PlatformBonus, PlatformStudy, Study

from .populations import real_enrollments
from .pseudonyms import PseudonymCache

MAX_REASON = 200


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
        cents = _cents(cells[1])
        if cents is None:
            errors.append(f"line {number}: {cells[1]!r} is not an amount above 0 with at most two decimals")
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


def _cents(text: str) -> int | None:
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    cents = value * 100
    if not value.is_finite() or value <= 0 or cents != cents.to_integral_value():
        return None
    return int(cents)


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
    study: Study, *, platform: str, planned: list[PlannedBonus], user=None
) -> list[PlatformBonus]:
    """The bonus rows of these lines: new ones created NEW, recorded ones as they are."""
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
    return rows


def stuck_bonuses(study: Study, *, platform: str):
    """Bonuses whose pay call may have gone through (PAYING): never paid again as they are."""
    return PlatformBonus.objects.filter(study=study, platform=platform, state=PlatformBonus.State.PAYING)


def settle_bonuses(study: Study, *, platform: str, batch_id: str, paid: bool) -> int:
    """The researcher checked the platform's records for a payment whose outcome was unknown:
    paid → PAID; not paid → NEW (the next run pays it). Returns how many rows changed."""
    rows = stuck_bonuses(study, platform=platform).filter(batch_id=batch_id)
    if paid:
        from django.utils import timezone

        return rows.update(state=PlatformBonus.State.PAID, paid_at=timezone.now())
    return rows.update(state=PlatformBonus.State.NEW, batch_id="")


def bonus_pseudonym(study: Study, bonus: PlatformBonus) -> str:
    """A bonus's participant as a job's result names them (``platform_review.shown_name``)."""
    p = bonus.participant
    return PseudonymCache(study.pseudonym_salt).get(p.pk, p.source, p.platform_worker_id, p.public_id)
