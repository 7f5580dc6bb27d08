"""Flagging and excluding a participant in one study: the one writer of those marks.

A flag belongs to (participant, study): ``Enrollment.flagged`` (with its reason, who and
when) is the truth, and the pages, the API, the exports and the platform lists read it
there. ``Response.flagged`` is its per-response copy, which the reports and the
population filter (``populations.counts_q``) read; only ``flag_in_study`` /
``unflag_in_study`` write both together, and a flagged participant's later answers are
marked as they are stored (``submission``), so the two never disagree. Another study's
flag is invisible here. ``Participant.blocked`` is the only site-wide mark (an admin's).

When a participant's answers stop counting (flagged or excluded) their items' slots are
given back and a study the quota closed reopens if it is short again
(``capacity.reopen_if_short``); when they count again the slots are taken back.
"""

from __future__ import annotations

from collections import Counter

from django.db import transaction
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Assignment, Enrollment, Response
from annotation.services.populations import enrollment_keeps_slots

from .assignment import free_slots, take_slots
from .capacity import reopen_if_short


def flag_in_study(enrollment: Enrollment, *, reason: str, by=None) -> Enrollment:
    """Flag the participant in this study (``by``: the user; None for the attention
    checks): their answers here stop counting; a later flag replaces the reason."""
    return _write(enrollment, flagged=True, flag_reason=reason, flagged_by=by, flagged_at=timezone.now())


def unflag_in_study(enrollment: Enrollment, *, by=None) -> Enrollment:
    """Clear the participant's flag in this study (``by``: who did, for the caller's
    record; the flag's who and when are cleared): their answers count again."""
    return _write(enrollment, flagged=False, flag_reason="", flagged_by=None, flagged_at=None)


def set_excluded(enrollment: Enrollment, *, excluded: bool) -> Enrollment:
    """Leave the participant out of this study's counts and reports (data kept), or back in."""
    return _write(enrollment, excluded=excluded)


def set_study_marks(enrollment: Enrollment, *, changes: dict, by=None) -> Enrollment:
    """The researcher's page and API: ``flagged`` (with ``flag_reason``), ``excluded``,
    ``accepted`` (answers reviewed and found good). A reason alone rewrites a flag's reason."""
    if "flag_reason" in changes and not changes.get("flagged", enrollment.flagged) and changes["flag_reason"]:
        raise InputError({"flag_reason": ["A reason goes with a flag: send flagged: true with it."]})
    with transaction.atomic():
        if "flagged" in changes or "flag_reason" in changes:
            flagged = changes.get("flagged", enrollment.flagged)
            if flagged:
                reason = changes.get("flag_reason", enrollment.flag_reason if enrollment.flagged else "")
                enrollment = flag_in_study(enrollment, reason=reason, by=by)
            elif enrollment.flagged or "flagged" in changes:
                enrollment = unflag_in_study(enrollment, by=by)
        if "excluded" in changes:
            enrollment = set_excluded(enrollment, excluded=changes["excluded"])
        if "accepted" in changes:
            enrollment.accepted = changes["accepted"]
            enrollment.save(update_fields=["accepted"])
    return enrollment


def _write(enrollment: Enrollment, **fields) -> Enrollment:
    with transaction.atomic():
        rows = Enrollment.objects.select_related("study", "participant")
        locked = rows.select_for_update(of=("self",)).get(pk=enrollment.pk)
        held_before = enrollment_keeps_slots(locked)
        for name, value in fields.items():
            setattr(locked, name, value)
        locked.save(update_fields=list(fields))
        if "flagged" in fields:
            Response.objects.filter(study=locked.study_id, participant=locked.participant_id).update(
                flagged=locked.flagged
            )
        held_now = enrollment_keeps_slots(locked)
        if held_before != held_now:
            _move_slots(locked, back=held_now)
            if not held_now:
                reopen_if_short(locked.study)
    enrollment.__dict__.update({name: getattr(locked, name) for name in fields})
    return enrollment


def _move_slots(enrollment: Enrollment, *, back: bool) -> None:
    """Answers that stopped counting give back their items' slots (the items lack them
    again); answers that count again take them back. Pages still open keep theirs."""
    answered = Assignment.objects.filter(
        study=enrollment.study_id, participant=enrollment.participant_id, status=Assignment.Status.ANSWERED
    )
    per_item = Counter(answered.values_list("item_id", flat=True))
    (take_slots if back else free_slots)(per_item)
