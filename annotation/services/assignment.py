"""Handing items to participants under row locks, and taking back abandoned ones.

Each item keeps ``slots_taken``, its number of live (assigned or answered) assignments,
changed only here and in the same transaction as the assignment it counts. Because the
counter is a column of the locked row, PostgreSQL re-checks ``slots_taken < wanted``
against the newest row version when a lock is acquired, so a count is never stale.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import Assignment, Enrollment, Item, Participant, Study

from .attention import attention_pages

LOCKED_RETRY_SECONDS = 0.02
LOCKED_WAIT_SECONDS = 5.0


def assign_next_item(
    *, participant: Participant, study: Study, now: datetime | None = None
) -> Assignment | None:
    """The participant's current item in the study, or a new one; None when there is none.

    Never an item the participant has had; never more live assignments on an item than
    the study wants; items closest to completion first. The enrollment row serialises one
    participant's requests (two tabs); item rows are taken with SKIP LOCKED so players do
    not queue behind each other, looking again for a moment when every open item is
    locked by someone else's assignment in progress.
    """
    now = now or timezone.now()
    release_expired_assignments(study=study, now=now)
    with transaction.atomic():
        enrollment = Enrollment.objects.select_for_update().get(participant=participant, study=study)
        current = _current_assignment(participant, study, now)
        if current is not None:
            return current
        if enrollment.finished or enrollment.answered_count >= study.items_per_session:
            return None
        wants_check = (enrollment.answered_count + 1) in attention_pages(study, enrollment.pk)
        item = _lock_available_item(study, participant, attention=wants_check)
        if item is None and wants_check:
            item = _lock_available_item(study, participant, attention=False)
        if item is None:
            return None
        return _create_assignment(study, participant, item, now)


def _current_assignment(participant: Participant, study: Study, now: datetime) -> Assignment | None:
    """A live assignment to resume; an out-of-date one is expired on the way."""
    live = Assignment.objects.filter(participant=participant, study=study, status=Assignment.Status.ASSIGNED)
    current = live.select_related("item").order_by("-position").first()
    if current is None:
        return None
    if current.expires_at > now:
        return current
    _end_assignments(live.filter(expires_at__lte=now), Assignment.Status.EXPIRED)
    return None


def _lock_available_item(study: Study, participant: Participant, *, attention: bool) -> Item | None:
    had = Assignment.objects.filter(participant=participant, study=study).values("item_id")
    candidates = Item.objects.filter(study=study, is_attention_check=attention).exclude(pk__in=had)
    if attention:
        # Attention checks are shown to everyone; they have no annotation budget.
        return candidates.order_by("?").select_for_update(skip_locked=True, of=("self",)).first()
    open_items = candidates.filter(slots_taken__lt=study.annotations_per_item)
    ordered = open_items.order_by("-slots_taken", "?").select_for_update(skip_locked=True, of=("self",))
    deadline = time.monotonic() + LOCKED_WAIT_SECONDS
    while (item := ordered.first()) is None and open_items.exists() and time.monotonic() < deadline:
        # Every open item is locked by someone mid-assignment. Waiting on those locks could
        # deadlock (a waiting statement keeps the rows it rejected locked), so look again
        # shortly: each new statement sees the other transactions' commits.
        time.sleep(LOCKED_RETRY_SECONDS)
    return item


def _create_assignment(study: Study, participant: Participant, item: Item, now: datetime) -> Assignment:
    last = Assignment.objects.filter(participant=participant, study=study).order_by("-position").first()
    state = study.task_kind.prepare_assignment(item, random.Random())
    Item.objects.filter(pk=item.pk).update(slots_taken=F("slots_taken") + 1)
    return Assignment.objects.create(
        study=study,
        item=item,
        participant=participant,
        position=(last.position + 1) if last else 1,
        state=state,
        assigned_at=now,
        expires_at=now + timedelta(minutes=study.timeout_minutes),
    )


def release_expired_assignments(*, study: Study | None = None, now: datetime | None = None) -> int:
    """Mark assignments past their time as expired, freeing their slots; returns how many."""
    now = now or timezone.now()
    expired = Assignment.objects.filter(status=Assignment.Status.ASSIGNED, expires_at__lte=now)
    if study is not None:
        expired = expired.filter(study=study)
    return _end_assignments(expired, Assignment.Status.EXPIRED)


def release_participant_assignments(*, participant: Participant, study: Study) -> int:
    """Give back a participant's unanswered items (they returned or left the study)."""
    held = Assignment.objects.filter(participant=participant, study=study, status=Assignment.Status.ASSIGNED)
    return _end_assignments(held, Assignment.Status.RELEASED)


def _end_assignments(queryset, status: str) -> int:
    """Move unanswered assignments to ``status`` and give their slots back.

    Rows being answered right now are locked by the submission and skipped; item
    counters are decremented in id order so concurrent releases cannot deadlock.
    """
    with transaction.atomic():
        rows = list(
            queryset.filter(status=Assignment.Status.ASSIGNED)
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("pk", "item_id")
        )
        if not rows:
            return 0
        Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(status=status)
        freed = Counter(item_id for _, item_id in rows)
        for item_id in sorted(freed):
            Item.objects.filter(pk=item_id).update(slots_taken=F("slots_taken") - freed[item_id])
    return len(rows)


def item_progress(study: Study) -> dict[str, int]:
    """Counts for progress displays: items, complete items, answered and wanted responses."""
    answered = Count("assignments", filter=Q(assignments__status=Assignment.Status.ANSWERED))
    per_item = Item.objects.filter(study=study, is_attention_check=False).annotate(n=answered)
    counts = list(per_item.values_list("n", flat=True))
    return {
        "items": len(counts),
        "items_complete": sum(n >= study.annotations_per_item for n in counts),
        "responses": sum(counts),
        "responses_wanted": len(counts) * study.annotations_per_item,
    }
