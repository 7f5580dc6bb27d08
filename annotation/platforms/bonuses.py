"""Bonuses on a crowd platform: the researcher's file, the cap, and the one state machine
that makes each bonus (one participant, one reason) paid at most once, whatever fails in
between, on every platform.

``PlatformBonus`` moves with conditional UPDATEs, each committed before the call it guards:

- NEW (recorded, ``record_bonuses``) → CREATING (``claim_new_bonuses``: one run's create call
  of a bulk bonus is going out) → CREATED (``name_created_bonuses``: in a bulk bonus the
  platform knows, not paid) for a platform that pays in two steps (Prolific);
- the state before the pay call (CREATED, or NEW on a platform that pays in one call, MTurk)
  → PAYING (``pay_once`` claims the rows of one payment) → PAID after the call;
- a call that did nothing (refused, never sent) gives the rows back to the state before it
  (``give_back``, ``give_back_claimed``); one whose outcome is unknown (a time-out, a 5xx, a
  crash) leaves them PAYING;
- a PAYING payment is never paid again, except under a key the platform itself keeps once
  (MTurk's ``UniqueRequestToken``, within its day: ``pay_again``), until the researcher says
  what the platform's records show (``settle``, by the payment's key, which ``stuck`` lists for
  the ``bonus --list`` command and the platforms page).

Every payment has a key in ``PlatformBonus.batch_id``: Prolific's bulk bonus id, or MTurk's
``UniqueRequestToken`` (set when the bonus is recorded). The cap holds whatever runs at once:
``record_bonuses`` checks the file against it and writes the rows while holding the study's
``PlatformStudy`` row (``SELECT … FOR UPDATE``), so a second run's check waits for the first
one's rows and counts them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Participant, Platform, PlatformBonus, PlatformStudy, Study
from annotation.platforms.errors import PlatformError, PlatformOutcomeUnknown, PlatformRefused
from annotation.platforms.lists import named_enrollments
from annotation.platforms.money import MAX_BONUS_CAP_CENTS, MAX_BONUS_CENTS, as_currency, cents_from_text
from annotation.platforms.review import CLAIM_EXPIRES
from annotation.services.pseudonyms import participant_pseudonym

MAX_REASON = 200


@dataclass(frozen=True)
class BonusLine:
    """One line of the researcher's file: who (pseudonym or platform id), how much, why."""

    participant: str
    amount_cents: int
    reason: str = ""

    def as_dict(self) -> dict:
        """As a job's parameters keep it (``from_dict`` reads it back)."""
        return {"participant": self.participant, "amount_cents": self.amount_cents, "reason": self.reason}

    @classmethod
    def from_dict(cls, row: dict) -> BonusLine:
        return cls(row["participant"], row["amount_cents"], row.get("reason", ""))


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
    known: dict[str, tuple[Participant, str]] = {}
    for enrollment, pseudonym in named_enrollments(study, platform):
        p = enrollment.participant
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
    totals: dict[int, int] = {}
    for (participant_id, _), cents in recorded.items():
        totals[participant_id] = totals.get(participant_id, 0) + cents
    errors = []
    for bonus in planned:
        key = (bonus.participant.pk, bonus.line.reason)
        if key in recorded:
            if recorded[key] != bonus.line.amount_cents:
                errors.append(
                    f"{bonus.line.participant}: a bonus for {bonus.line.reason or 'no reason'!r} is already "
                    f"recorded at {as_currency(recorded[key])}, not {as_currency(bonus.line.amount_cents)}"
                )
            continue
        totals[bonus.participant.pk] = totals.get(bonus.participant.pk, 0) + bonus.line.amount_cents
        if totals[bonus.participant.pk] > cap:
            errors.append(
                f"{bonus.line.participant}: {as_currency(totals[bonus.participant.pk])} in bonuses would "
                f"pass the study's cap of {as_currency(cap)}"
            )
    return errors


def record_bonuses(
    study: Study,
    *,
    platform: str,
    lines: list[BonusLine],
    user=None,
    key: Callable[[Participant, str], str] | None = None,
) -> tuple[list[PlannedBonus], list[PlatformBonus]]:
    """Check the lines (``check_bonus_lines``) and record them, as one step no other run can
    come between: the study's ``PlatformStudy`` row is locked first, so two files sent at
    once are checked against the cap one after the other, the second counting the first's
    rows. New bonuses are created NEW, recorded ones returned as they are. ``key``: a platform
    whose every bonus is its own payment names it here (MTurk's token, from the participant and
    the reason), so that from its first call on it can be settled by name; a row recorded
    without one gets it now. Both platforms' bonus runs record through here; ``InputError``
    (nothing recorded) as the check says."""
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
                defaults={
                    "amount_cents": bonus.line.amount_cents,
                    "created_by": user,
                    "batch_id": key(bonus.participant, bonus.line.reason) if key else "",
                },
            )
            if key and not row.batch_id:
                row.batch_id = key(bonus.participant, bonus.line.reason)
                PlatformBonus.objects.filter(pk=row.pk, batch_id="").update(batch_id=row.batch_id)
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


def stuck(study: Study, *, platform: str):
    """Bonuses whose pay call may have gone through (PAYING): never paid again as they are."""
    return PlatformBonus.objects.filter(study=study, platform=platform, state=PlatformBonus.State.PAYING)


def stuck_keys(study: Study, *, platform: str) -> list[str]:
    """The keys of the payments to settle, as ``--settle`` and the platforms page name them."""
    return sorted(set(stuck(study, platform=platform).values_list("batch_id", flat=True)))


def refuse_stuck(study: Study, *, platform: str, resend_within: timedelta | None = None) -> None:
    """Refuse a bonus run while a payment may or may not have been paid, naming its key: all
    of them, or (``resend_within``: how long the platform keeps a payment's key) those older
    than that, which could now be paid twice. ``PlatformError``; nothing sent."""
    rows = stuck(study, platform=platform)
    if resend_within is not None:
        cutoff = timezone.now() - resend_within
        rows = rows.filter(Q(paying_since__lt=cutoff) | Q(paying_since__isnull=True, created_at__lt=cutoff))
    keys = sorted(set(rows.values_list("batch_id", flat=True)))
    if keys:
        name = Platform(platform).label
        raise PlatformError(
            f"An earlier bonus payment may or may not have been paid (the run stopped while paying); "
            f"nothing was sent now. Check {name}'s records, then run '{platform} bonus {study.slug} "
            f"--settle ID paid' (or 'unpaid') for each of: {', '.join(keys)}."
        )


def pay_once(
    study: Study, *, platform: str, key: str, before: str, send: Callable[[], object]
) -> list[PlatformBonus]:
    """One payment through the states: its rows in ``before`` are claimed (→ PAYING, committed),
    ``send`` makes the platform's call, and they become PAID. A call that did nothing gives them
    back to ``before``; one of unknown outcome leaves them PAYING. Returns the rows paid (none:
    another run claimed them first)."""
    rows = PlatformBonus.objects.filter(study=study, platform=platform, batch_id=key)
    with transaction.atomic():
        ids = list(rows.select_for_update().filter(state=before).values_list("pk", flat=True))
        claimed = rows.filter(pk__in=ids, state=before).update(
            state=PlatformBonus.State.PAYING, paying_since=timezone.now()
        )
    if not claimed:
        return []
    try:
        send()
    except PlatformError as exc:
        if not exc.maybe_done:
            give_back(rows.filter(pk__in=ids), to=before)
        raise _pay_failed(exc, study, platform, key) from None
    return _mark_paid(rows.filter(pk__in=ids))


def pay_again(study: Study, *, platform: str, key: str, send: Callable[[], object]) -> list[PlatformBonus]:
    """A PAYING payment sent again under its key, which the platform pays at most once (MTurk's
    token, within its day; the caller checks the day, ``refuse_stuck``). PAID if the call goes
    through; any failure leaves it PAYING: a refusal may mean the first call landed."""
    ids = list(stuck(study, platform=platform).filter(batch_id=key).values_list("pk", flat=True))
    try:
        send()
    except PlatformError as exc:
        raise _pay_failed(exc, study, platform, key, resent=True) from None
    return _mark_paid(PlatformBonus.objects.filter(pk__in=ids))


def give_back(rows, *, to: str) -> int:
    """The pay call did nothing: its PAYING rows are back in the state before it."""
    return rows.filter(state=PlatformBonus.State.PAYING).update(state=to, paying_since=None)


def _mark_paid(rows) -> list[PlatformBonus]:
    rows.filter(state=PlatformBonus.State.PAYING).update(
        state=PlatformBonus.State.PAID, paid_at=timezone.now()
    )
    return list(rows.select_related("participant").order_by("id"))


def _pay_failed(
    exc: PlatformError, study: Study, platform: str, key: str, *, resent: bool = False
) -> PlatformError:
    """The error a failed pay call ends the run with: what became of the payment, and how to
    settle it when that is the researcher's to do (its outcome unknown, or a resend failed)."""
    if exc.maybe_done or resent:
        kind = type(exc) if exc.maybe_done else PlatformOutcomeUnknown
        # Ours first: a job's error keeps the first 300 characters, and the key must be in them.
        return kind(
            f"The bonus payment may have been paid: it stays 'paying', never paid again until you check "
            f"{Platform(platform).label}'s records and run "
            f"'{platform} bonus {study.slug} --settle {key} paid' (or 'unpaid'). {exc}"
        )
    if isinstance(exc, PlatformRefused):
        return PlatformRefused(f"{exc} Nothing was paid.", status=exc.status, body=exc.body)
    return type(exc)(f"{exc} Nothing was paid.")


def settle(study: Study, *, platform: str, key: str, paid: bool) -> int:
    """The researcher checked the platform's records for a payment whose outcome was unknown
    (its ``key``, as ``stuck_keys`` lists it): paid → PAID; not paid → NEW, without the key
    (the next run pays it afresh: in a new bulk bonus, or under the token ``record_bonuses``
    gives it again). Returns how many rows changed."""
    rows = stuck(study, platform=platform).filter(batch_id=key)
    if paid:
        return rows.update(state=PlatformBonus.State.PAID, paid_at=timezone.now())
    return rows.update(state=PlatformBonus.State.NEW, batch_id="", paying_since=None)


def bonus_pseudonym(study: Study, bonus: PlatformBonus) -> str:
    """A bonus's participant as a job's result names them (``review.shown_name``)."""
    return participant_pseudonym(study, bonus.participant)
