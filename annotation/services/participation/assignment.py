"""Handing items to participants under row locks, and taking back abandoned ones.

The one writer of ``Assignment`` rows and of ``Item.slots_taken``: every assignment (a
participant's page, an exam question, an imported answer's) is created by
``create_assignment``, and leaves or re-enters the live states only here.

A participant's pages in a study are numbered 1, 2, … in the order they were handed out:
a new page takes the position after the last one they hold (``position_after``).
``create_assignment`` numbers a page itself; a caller writing a batch (an import, a
model's answers, a guest's pages moved to an account) takes its numbers from
``next_positions``, read once for the batch.

Each item keeps ``slots_taken``, its number of live (assigned or answered) assignments,
changed only by ``take_slots`` and ``free_slots`` and by the page handed out after the
item pick (``_take_first_item`` locks the item, ``create_assignment`` takes its slot right
after writing the page), in the same transaction as the assignments it counts. Because the
counter is a column of the locked row, PostgreSQL re-checks ``slots_taken < wanted``
against the newest row version when a lock is acquired, so a count is never stale.
"""

from __future__ import annotations

import functools
import itertools
import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Q
from django.utils import timezone
from psycopg import sql

from annotation.models import Assignment, Enrollment, Item, Participant, Study
from annotation.services.db import sql_rows
from annotation.services.populations import counted_per_item, people_items

from .adaptive import adaptive_settings
from .attention_schedule import attention_pages

LOCKED_RETRY_SECONDS = 0.02
LOCKED_WAIT_SECONDS = 5.0


def assign_next_item(
    *,
    participant: Participant,
    study: Study,
    now: datetime | None = None,
) -> Assignment | None:
    """The participant's current item in the study, or a new one; None when there is none.

    Never an item the participant has had; never more live assignments on an item than
    the study wants; the least-filled items first, and among those a random one drawn
    for this participant and page (``pick_draw``), so no two participants share an order.
    The returned page counts as shown from now (``shown_at``), in the same transaction.

    One transaction and a fixed number of statements whatever the study's size: the
    enrollment row serialises one participant's requests (two tabs); item rows are taken
    with SKIP LOCKED so players do not queue behind each other, looking again for a moment
    when every open item is locked by someone else's assignment in progress. Pages past
    their time are swept by the periodic ``release_expired_assignments`` task, not here;
    only when no item is open does a request sweep the study itself, so the last slots
    held by abandoned pages come back at once.
    """
    now = now or timezone.now()
    with transaction.atomic():
        enrollment, current, last_position = _lock_and_resume(participant, study, now)
        if current is not None:
            if current.shown_at is None:
                current.shown_at = now
                Assignment.objects.filter(pk=current.pk).update(shown_at=now)
            return current
        if enrollment.finished or enrollment.answered_count >= study.items_per_session:
            return None
        position = position_after(last_position)
        draw = pick_draw(study, participant, position)
        wants_check = (enrollment.answered_count + 1) in attention_pages(study, enrollment.pk)
        picked = _pick_item(study, participant, draw, attention=wants_check)
        if picked is None and wants_check:
            picked = _pick_item(study, participant, draw, attention=False)
        if picked is None:
            return None
        expires_at = page_expires_at(study, answered=enrollment.answered_count, now=now)
        return create_assignment(
            study=study,
            item=picked.item,
            participant=participant,
            now=now,
            position=position,
            shown_at=now,
            expires_at=expires_at,
            picked_slot=picked.takes_slot,
        )


def page_expires_at(study: Study, *, answered: int, now: datetime) -> datetime:
    """When a page handed out now goes back to the pool if it is not answered.

    The study's timeout; but a participant who has answered nothing yet in the study holds
    their first page only ``FIRST_PAGE_MINUTES``, whatever their source: a made-up crowd id
    costs no more than a new browser, so sessions that never answer cannot make a study look
    full to real newcomers for the full timeout (docs/crowd.md, "Places and time-outs").
    """
    minutes = study.timeout_minutes
    if answered == 0:
        minutes = min(minutes, settings.FIRST_PAGE_MINUTES)
    return now + timedelta(minutes=minutes)


def pick_draw(study: Study, participant: Participant, position: int) -> float:
    """Where in the items' random order the participant's page ``position`` starts looking.

    Seeded by study, participant and page, so a player's own sequence of draws can be
    recomputed for analysis, and two players (or two sessions of one person) draw apart.
    """
    return random.Random(f"pick:{study.pk}:{participant.pk}:{position}").random()


def _lock_and_resume(
    participant: Participant, study: Study, now: datetime
) -> tuple[Enrollment, Assignment | None, int]:
    """The participant's enrollment, locked (it serialises their requests: two tabs), a
    live assignment to resume (an out-of-date one is expired on the way), and their last
    position in the study (0 before the first page).

    One round trip: the lock, which returns the enrollment as it is once locked (the newest
    version, should another request of theirs have changed it while the lock waited), then
    a read of their pages that sees whatever that request committed (its own statement, so
    its own snapshot)."""
    key = [participant.pk, study.pk]
    resume = (_resume_statement(), key * 2)
    # The page handed out is written before its item's slot is taken: its key is checked then.
    keys_now = sql_rows.keys_checked_at_each_statement()
    then = [resume, *keys_now]
    locked, pages, *_ = sql_rows.execute_each_in_one_trip([(_lock_statement(), key), *then])
    if not locked:
        raise Enrollment.DoesNotExist(f"No enrollment of participant {participant.pk} in study {study.pk}.")
    names, _ = sql_rows.columns(Enrollment)
    enrollment = sql_rows.models_from_rows(Enrollment, names, locked)[0]
    enrollment.participant, enrollment.study = participant, study
    if not pages:
        return enrollment, None, 0
    newest, last_position = _resume_row(pages[0], study, participant)
    if newest is None or newest.status != Assignment.Status.ASSIGNED:
        return enrollment, None, last_position
    if assignment_is_open(newest, now):
        return enrollment, newest, last_position
    live = Assignment.objects.filter(participant=participant, study=study, status=Assignment.Status.ASSIGNED)
    _end_assignments(live.filter(expires_at__lte=now), Assignment.Status.EXPIRED)
    return enrollment, None, last_position


@functools.cache
def _lock_statement() -> sql_rows.Statement:
    """The participant's enrollment in the study, locked, with every column."""
    query = sql.SQL("SELECT {columns} FROM {table} WHERE participant_id = %s AND study_id = %s {lock}")
    return sql_rows.Statement(
        "roft_lock_enrollment",
        query.format(
            columns=sql_rows.columns(Enrollment)[1],
            table=sql_rows.table(Enrollment),
            lock=sql_rows.on_postgresql("FOR UPDATE"),
        ),
    )


RESUME_TABLES = ((Assignment, "a"), (Item, "i"))


@functools.cache
def _resume_statement() -> sql_rows.Statement:
    """The participant's newest page in the study, whose position is their last (read from
    the end of ``assignment_unique_position``: one entry, however many pages they have),
    and their live page, with its item: the newest page itself when it is live, else the
    newest live page below it (the partial index ``assignment_live_page``; the newest one,
    should there be two). No row before their first page.

    Only below the newest page: when it was answered it left its entry in the partial index
    (until a scan or VACUUM clears it), and the usual step, right after an answer, does not
    read that entry again."""
    query = sql.SQL(
        "SELECT {columns}, newest.position FROM ("
        "SELECT m.id, m.position, m.status FROM {pages} m "
        "WHERE m.participant_id = %s AND m.study_id = %s ORDER BY m.position DESC LIMIT 1"
        ") newest "
        "LEFT JOIN {pages} a ON a.id = CASE WHEN newest.status = {assigned} THEN newest.id ELSE ("
        "SELECT n.id FROM {pages} n WHERE n.participant_id = %s AND n.study_id = %s "
        "AND n.status = {assigned} AND n.position < newest.position ORDER BY n.position DESC LIMIT 1"
        ") END "
        "LEFT JOIN {items} i ON i.id = a.item_id"
    )
    return sql_rows.Statement(
        "roft_resume",
        query.format(
            columns=sql_rows.joined_columns(RESUME_TABLES),
            pages=sql_rows.table(Assignment),
            items=sql_rows.table(Item),
            assigned=sql.Literal(str(Assignment.Status.ASSIGNED)),
        ),
    )


def _resume_row(row, study: Study, participant: Participant) -> tuple[Assignment | None, int]:
    """The live assignment if any (with its item) and the last position from a row of
    ``_resume_statement``."""
    assignment, item = sql_rows.models_from_joined_row(RESUME_TABLES, row)
    if assignment is not None:
        item.study = study
        assignment.study, assignment.item, assignment.participant = study, item, participant
    return assignment, row[-1]


@dataclass(frozen=True)
class Picked:
    """An item the pick locked for a page, and the statement that takes its slot once the
    page is written (``_slot_statement``)."""

    item: Item
    takes_slot: sql_rows.Statement


def _pick_item(study: Study, participant: Participant, draw: float, *, attention: bool) -> Picked | None:
    """Lock an open item for the participant; when none is open, sweep expired pages once
    and look again."""
    picked = _lock_available_item(study, participant, draw, attention=attention)
    if picked is None and not attention and release_expired_assignments(study=study):
        picked = _lock_available_item(study, participant, draw, attention=attention)
    return picked


def _lock_available_item(
    study: Study, participant: Participant, draw: float, *, attention: bool
) -> Picked | None:
    """Lock an item for the participant, or None when every candidate is taken or locked."""
    deadline = time.monotonic() + LOCKED_WAIT_SECONDS
    while (picked := _take_first_item(study, participant, draw, attention=attention)) is None:
        open_items = (
            people_items(study)
            .filter(slots_taken__lt=study.annotations_per_item)
            .exclude(pk__in=Assignment.objects.filter(participant=participant, study=study).values("item_id"))
        )
        if attention or time.monotonic() >= deadline or not first_of(open_items):
            return None
        # Every item of the least-filled group is locked by someone mid-assignment (or
        # was filled meanwhile). Waiting on those locks could deadlock (a waiting statement
        # keeps the rows it rejected locked), so look again shortly: each new statement
        # sees the other transactions' commits.
        time.sleep(LOCKED_RETRY_SECONDS)
    return picked


def first_of(items) -> list[int]:
    """The id of the first of ``items`` (a queryset of one study's items) in
    ``item_pick_order``'s order, or none: whether there is one, read through that index.
    A plain EXISTS let the planner scan the table from its start (a large study's rows
    last) on every call."""
    return list(items.order_by("slots_taken").values_list("pk", flat=True)[:1])


def _take_first_item(
    study: Study, participant: Participant, draw: float, *, attention: bool
) -> Picked | None:
    """The first unlocked candidate at or after ``draw`` in the items' random order,
    wrapping around, locked (SKIP LOCKED), in one statement: two index range scans
    (``item_pick_order``) whatever the number of items, the second run only when the first
    finds nothing. Its slot is taken once its page is written (``create_assignment``).
    Candidates: items of the kind asked for (attention checks or not) the participant never
    had; ordinary items only among the least-filled open ones (attention checks are shown to
    everyone and have no annotation budget)."""
    names, _ = sql_rows.columns(Item, "i")
    adaptive = None if attention else adaptive_settings(study)
    if attention:
        params = [study.pk, True, participant.pk, draw] * 2
    else:
        # An adaptive study's least-filled group is only the items below its minimum.
        below = adaptive.min_answers if adaptive else study.annotations_per_item
        least = [study.pk, below, participant.pk]
        params = [*least, study.pk, False, participant.pk, draw, study.pk, False, participant.pk, draw]
        if adaptive:
            params += [study.pk, study.annotations_per_item, participant.pk]
    rows = sql_rows.execute(_pick_statement(attention, adaptive is not None), params)
    if not rows:
        return None
    item = sql_rows.models_from_rows(Item, names, rows)[0]
    item.study = study
    return Picked(item=item, takes_slot=_slot_statement(adaptive is not None))


@functools.cache
def _pick_statement(attention: bool, adaptive: bool = False) -> sql_rows.Statement:
    """The pick (see ``_take_first_item``): the locked item's columns.
    ``adaptive`` (an adaptive study, ``services.participation.adaptive``): the least-filled group is the
    items below the study's minimum, and only when there is none, a third scan
    (``item_adaptive_order``) takes the open item of highest ``priority``, the least
    settled (its slot statement lowers that priority: ``_slot_statement``)."""
    # Per candidate, a look-up of (participant, item) in ``assignment_once_per_item_attempt``
    # that finds nothing for an item they never had. OFFSET 0 keeps it a look-up on
    # PostgreSQL: as an anti-join the planner read all the participant's pages (or all the
    # item's) per pick. SQLite (the embedded runtime) takes no OFFSET without a LIMIT.
    had = sql.SQL(
        "NOT EXISTS (SELECT 1 FROM {pages} h WHERE h.participant_id = %s AND h.item_id = i.id {fence})"
    ).format(pages=sql_rows.table(Assignment), fence=sql_rows.on_postgresql("OFFSET 0"))
    parts = {
        "columns": sql_rows.columns(Item, "i")[1],
        "items": sql_rows.table(Item),
        "had": had,
        "group": sql.SQL("" if attention else "AND i.slots_taken = (SELECT slots_taken FROM least) "),
        "lock": sql_rows.on_postgresql("FOR UPDATE OF i SKIP LOCKED"),
    }

    def scan(name: str, comparison: str) -> sql.Composable:
        return sql.SQL(
            "{name} AS (SELECT {columns} FROM {items} i "
            "WHERE i.study_id = %s AND i.is_attention_check = %s AND i.for_humans {group}AND {had} "
            "AND i.shuffle_key {comparison} %s ORDER BY i.shuffle_key LIMIT 1 {lock})"
        ).format(name=sql.Identifier(name), comparison=sql.SQL(comparison), **parts)

    least = sql.SQL(
        "least AS (SELECT i.slots_taken FROM {items} i WHERE i.study_id = %s "
        "AND i.is_attention_check = FALSE AND i.for_humans AND i.slots_taken < %s AND {had} "
        "ORDER BY i.slots_taken LIMIT 1), "
    ).format(**parts)
    settled: sql.Composable = sql.SQL("")
    from_settled = sql.SQL("")
    if adaptive:
        settled = sql.SQL(
            ", settled AS (SELECT {columns} FROM {items} i WHERE i.study_id = %s "
            "AND i.is_attention_check = FALSE AND i.for_humans AND i.slots_taken < %s AND {had} "
            "ORDER BY i.priority DESC, i.shuffle_key LIMIT 1 {lock})"
        ).format(**parts)
        from_settled = sql.SQL(" UNION ALL SELECT * FROM settled")
    name = "check" if attention else ("adaptive" if adaptive else "item")
    query = sql.SQL(
        "WITH {least}{onward}, {wrapped}{settled} SELECT * FROM onward UNION ALL SELECT * FROM wrapped"
        "{from_settled} LIMIT 1"
    ).format(
        least=sql.SQL("") if attention else least,
        onward=scan("onward", ">="),
        wrapped=scan("wrapped", "<"),
        settled=settled,
        from_settled=from_settled,
    )
    return sql_rows.Statement(f"roft_pick_{name}", query)


@functools.cache
def _slot_statement(adaptive: bool) -> sql_rows.Statement:
    """Take the slot of the item the pick locked. ``adaptive``: also lower the item's
    priority by (n + 1) / (n + 2) for its n live pages, as the variance of a mean shrinks,
    so that pages spread over the unsettled items until the reports job writes their
    priorities again (docs/statistics.md, "Adaptive collection")."""
    decay = ", priority = priority * (slots_taken + 1) / (slots_taken + 2.0)" if adaptive else ""
    query = sql.SQL("UPDATE {items} SET slots_taken = slots_taken + 1{decay} WHERE id = %s RETURNING id")
    return sql_rows.Statement(
        f"roft_take_slot{'_adaptive' if adaptive else ''}",
        query.format(items=sql_rows.table(Item), decay=sql.SQL(decay)),
    )


def position_after(last: int | None) -> int:
    """The position of a participant's next page, after their ``last`` (None or 0: no page
    yet, so 1)."""
    return (last or 0) + 1


def next_positions(study: Study, participant_ids: Iterable[int]) -> dict[int, Iterator[int]]:
    """Participant id → the positions of their next pages in ``study``, one by one (the
    first after the last page they hold), read in one query for a batch of pages.

    The caller writes the pages in the same transaction; the unique (participant, study,
    position) refuses a number taken meanwhile by another writer."""
    ids = list(participant_ids)
    last = dict(
        Assignment.objects.filter(study=study, participant_id__in=ids)
        .values_list("participant_id")
        .annotate(last=Max("position"))
    )
    return {pk: itertools.count(position_after(last.get(pk))) for pk in ids}


def create_assignment(
    *,
    study: Study,
    item: Item,
    participant: Participant,
    now: datetime,
    state: dict | None = None,
    attempt: int = 1,
    position: int | None = None,
    status: str = Assignment.Status.ASSIGNED,
    expires_at: datetime | None = None,
    shown_at: datetime | None = None,
    answered_at: datetime | None = None,
    takes_slot: bool = True,
    picked_slot: sql_rows.Statement | None = None,
) -> Assignment:
    """Create an assignment and take its item's slot, in the caller's transaction.

    ``state`` defaults to what the kind decides when it hands the item out; ``position``
    to the next place in the participant's sequence (a batch passes its own, from
    ``next_positions``); ``expires_at`` to the study's
    timeout. ``takes_slot=False`` only for a caller that took the slots of a whole batch
    at once with ``take_slots`` (an import, which must lock its items in id order).
    ``picked_slot``: the item was locked by the pick (``Picked``), whose statement takes its
    slot after the page is written, in the same round trip (``sql_rows.insert_then``): the
    page's key check, which a fetch makes at once (``sql_rows.keys_checked_at_each_statement``),
    then reads the item's one index entry, not its old version's beside it.
    """
    if position is None:
        position = next(next_positions(study, [participant.pk])[participant.pk])
    if state is None:
        state = study.task_kind.prepare_assignment(item, random.Random())
    if takes_slot and picked_slot is None:
        take_slots({item.pk: 1})
    assignment = Assignment(
        study=study,
        item=item,
        participant=participant,
        position=position,
        attempt=attempt,
        status=status,
        state=state,
        assigned_at=now,
        expires_at=expires_at or now + timedelta(minutes=study.timeout_minutes),
        shown_at=shown_at,
        answered_at=answered_at,
    )
    if picked_slot is None:
        sql_rows.insert(assignment, "roft_insert_assignment")
    else:
        sql_rows.insert_then(assignment, "roft_insert_assignment", picked_slot, [item.pk])
    return assignment


def reopen_assignment(assignment: Assignment, *, expires_at: datetime) -> None:
    """Hand an unanswered assignment back to its participant until ``expires_at``.

    An expired or released one takes its slot again (an exam question must be answered);
    the row is locked so that a release running at the same time cannot free it twice.
    """
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status == Assignment.Status.ANSWERED:
            return
        if locked.status != Assignment.Status.ASSIGNED:
            take_slots({locked.item_id: 1})
        reopened = {"status": Assignment.Status.ASSIGNED, "expires_at": expires_at}
        Assignment.objects.filter(pk=locked.pk).update(**reopened)
    assignment.status, assignment.expires_at = Assignment.Status.ASSIGNED, expires_at


def assignment_is_open(assignment: Assignment, now: datetime) -> bool:
    """Whether the assignment can still be worked on: handed out, unanswered, in time."""
    return assignment.status == Assignment.Status.ASSIGNED and assignment.expires_at > now


# ``assignment_is_open`` as the condition of a statement that acts on an assignment only
# while it is open: written for a query (``open_q``: a round's reveal) and for the submit's
# hand-written lock (``OPEN_SQL``, whose parameters are ``open_params(now)``).
OPEN_SQL = "status = %s AND expires_at > %s"


def open_q(now: datetime) -> Q:
    return Q(status=Assignment.Status.ASSIGNED, expires_at__gt=now)


def open_params(now: datetime) -> list:
    return [Assignment.Status.ASSIGNED, now]


def take_slots(counts: Mapping[int, int]) -> None:
    """Count new live assignments on items (``{item_id: how many}``).

    Items are updated in id order, so that callers changing several items at once
    cannot deadlock each other.
    """
    _add_to_slots(counts, 1)


def free_slots(counts: Mapping[int, int]) -> None:
    """Give back the slots of assignments that left the live states (expired, released)."""
    _add_to_slots(counts, -1)


def _add_to_slots(counts: Mapping[int, int], sign: int) -> None:
    for item_id in sorted(counts):
        if counts[item_id]:
            Item.objects.filter(pk=item_id).update(slots_taken=F("slots_taken") + sign * counts[item_id])


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
            .order_by()  # no join of the study for the default ordering's slug
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("pk", "item_id")
        )
        if not rows:
            return 0
        Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(status=status)
        free_slots(Counter(item_id for _, item_id in rows))
    return len(rows)


def pages_held_by_others(participant: Participant, study: Study) -> bool:
    """Whether the participant could still get a page once others' unanswered ones go back:
    an item they have not had that lacks answers but whose slots are all held."""
    had = Assignment.objects.filter(participant=participant, study=study).values("item_id")
    return (
        people_items(study)
        .exclude(pk__in=had)
        .annotate(answered=counted_per_item())
        .filter(answered__lt=study.annotations_per_item)
        .exists()
    )


def item_progress(study: Study) -> dict[str, int]:
    """Counts for progress displays: items, complete items, answers that count
    (``populations``) and wanted answers."""
    per_item = people_items(study).annotate(n=counted_per_item())
    counts = list(per_item.values_list("n", flat=True))
    return {
        "items": len(counts),
        "items_complete": sum(n >= study.annotations_per_item for n in counts),
        "responses": sum(counts),
        "responses_wanted": len(counts) * study.annotations_per_item,
    }
