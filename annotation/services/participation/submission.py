"""Storing an answer: validated by the kind, stored once, scored on the server.

The one writer of ``Response`` rows: answers given on the site (``submit_response``) and
answers imported from elsewhere (``annotation.services.authoring.answer_imports``) are both stored by
``store_response``, which scores them, works out their timing and calls the kind's
``after_response`` hook.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy
from psycopg import sql
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError
from annotation.models import Assignment, Enrollment, Item, Participant, Response, Study
from annotation.services.db import sql_rows
from annotation.services.populations import keeps_slot

from .assignment import OPEN_SQL, create_assignment, free_slots, open_params
from .attention import record_attention_outcome
from .authenticity import has_strong_sign
from .participants import count_answers

PAGE_EXPIRED = gettext_lazy("This page expired before it was answered; continue with the next one.")


class SubmissionClosed(Exception):
    """The assignment can no longer be answered (it expired or was released)."""


@dataclass(frozen=True)
class SubmitResult:
    response: Response
    created: bool  # False: a retried or double submit, answered with the stored result
    screened_out: bool = False
    counts: bool = False  # the answer counts toward the quota (``populations``)
    answered_count: int | None = None  # the enrollment's count after this answer (None: not counted now)


def submit_response(
    *, assignment: Assignment, answer: dict, now: datetime | None = None, authenticity: dict | None = None
) -> SubmitResult:
    """Validate ``answer`` with the study's kind and store it, once, with its authenticity
    signals (``authenticity.signals_from_form``; None: none recorded).

    A second submit for the same assignment (a retry, a double click) returns the stored
    response and awards nothing. Bad input raises ``InputError`` and writes nothing.
    """
    now = now or timezone.now()
    item = assignment.item
    kind = assignment.study.task_kind
    with transaction.atomic():
        locked = _lock_open(assignment, now)
        if locked is None:
            locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
            if locked.status == Assignment.Status.ANSWERED:
                return SubmitResult(response=Response.objects.get(assignment=locked), created=False)
            raise SubmissionClosed(PAGE_EXPIRED)
        try:  # a bad answer raises here, and the transaction lets the page go
            validated = kind.validate_answer(item, answer, state=locked.state)
        except ValidationError as exc:
            raise InputError.from_validation(exc) from exc
        locked.item, locked.study = item, assignment.study
        shown_at = locked.shown_at or locked.assigned_at
        response = store_response(
            assignment=locked, answer=validated, shown_at=shown_at, answered_at=now, authenticity=authenticity
        )
        screened_out, counts, answered = _update_enrollment(locked, response)
    return SubmitResult(
        response=response, created=True, screened_out=screened_out, counts=counts, answered_count=answered
    )


def _lock_open(assignment: Assignment, now: datetime) -> Assignment | None:
    """Lock the assignment when it is open (``assignment_is_open``: handed out, unanswered,
    in time); its row as it is then, which ``store_response`` marks answered once the
    response is written. None: it was answered already, or closed; nothing is locked.

    The response is written before the page changes, and the transaction checks its keys at
    each statement from here (``sql_rows.keys_checked_at_each_statement``): the response's key
    check finds the page's one index entry, where at commit, after the page's update, it read
    two. The lock is the one an update takes (``FOR NO KEY UPDATE``): a second submit of the
    page waits for this one, and the sweep of expired pages passes it by."""
    params = [assignment.pk, *open_params(now)]
    keys_now = sql_rows.keys_checked_at_each_statement()
    rows = sql_rows.execute_each_in_one_trip([(_lock_statement(), params), *keys_now])[0]
    if not rows:
        return None
    return sql_rows.models_from_rows(Assignment, sql_rows.columns(Assignment)[0], rows)[0]


@functools.cache
def _lock_statement() -> sql_rows.Statement:
    query = sql.SQL("SELECT {columns} FROM {pages} a WHERE id = %s AND {open} {lock}")
    return sql_rows.Statement(
        "roft_lock_open_assignment",
        query.format(
            columns=sql_rows.columns(Assignment, "a")[1],
            pages=sql_rows.table(Assignment),
            open=sql.SQL(OPEN_SQL),
            lock=sql_rows.on_postgresql("FOR NO KEY UPDATE"),
        ),
    )


@functools.cache
def _answered_statement() -> sql_rows.Statement:
    query = sql.SQL("UPDATE {pages} SET status = %s, answered_at = %s WHERE id = %s RETURNING id")
    return sql_rows.Statement("roft_mark_answered", query.format(pages=sql_rows.table(Assignment)))


def store_response(
    *,
    assignment: Assignment,
    answer: dict,
    shown_at: datetime | None,
    answered_at: datetime,
    imported: bool = False,
    missing: tuple[str, ...] = (),
    authenticity: dict | None = None,
) -> Response:
    """Store a validated ``answer`` to ``assignment``, scored by the kind, and mark the
    assignment answered. ``authenticity``: the page's signals, classified (only answers given
    on a page have them; ``strong_sign`` is read from their signs).

    The caller holds the transaction (and, on the site, the assignment's row lock); the
    ``OneToOne`` on ``Response.assignment`` keeps it to one response per assignment. The
    duration is unknown (None) when the page's showing time is. ``missing``: the answer's
    parts an import did not have (the response is marked incomplete; score details about
    those parts, such as ``evidence_f1`` for missing ``evidence``, are not kept).
    """
    study, item = assignment.study, assignment.item
    kind = study.task_kind
    score = kind.score(item, answer)
    details = score.details if score else {}
    if missing:
        details = {k: v for k, v in details.items() if not k.startswith(missing)}
        details["missing"] = list(missing)
    duration = max((answered_at - shown_at).total_seconds(), 0.0) if shown_at else None
    response = Response(
        assignment=assignment,
        study=study,
        item=item,
        participant_id=assignment.participant_id,
        answer=answer,
        points=score.points if score else None,
        correct=score.correct if score else None,
        score_details=details,
        display_order=kind.display_record(item, assignment.state),
        is_attention_check=item.is_attention_check,
        shown_at=shown_at,
        answered_at=answered_at,
        duration_seconds=duration,
        too_fast=answered_too_fast(duration, study.min_seconds_per_page),
        imported=imported,
        incomplete=bool(missing),
        authenticity=authenticity,
        strong_sign=has_strong_sign(authenticity),
        study_version=study.version or None,  # the version the page was answered under
    )
    if assignment.status == Assignment.Status.ANSWERED:
        sql_rows.insert(response, "roft_insert_response")
    else:  # marked answered after the response is written (``_lock_open``), in the same trip
        marked = [Assignment.Status.ANSWERED, answered_at, assignment.pk]
        sql_rows.insert_then(response, "roft_insert_response", _answered_statement(), marked)
        assignment.status, assignment.answered_at = Assignment.Status.ANSWERED, answered_at
    kind.after_response(response)
    return response


def store_answer_given_elsewhere(
    *,
    study: Study,
    participant: Participant,
    item: Item,
    answer: dict,
    state: dict,
    answered_at: datetime,
    shown_at: datetime | None = None,
    position: int | None = None,
    imported: bool = False,
    missing: tuple[str, ...] = (),
) -> Response:
    """An answered assignment and its response for an answer not given on a page: an
    import, an adjudication, a model's answer. ``answer`` is already validated by the kind.

    The assignment is written answered and takes no slot here: an adjudicator's or a
    model's answer takes none at all (``populations.keeps_slot``: not human), and an import
    takes the slots of its batch's answers that keep one beforehand (in item order, with
    ``take_slots``). The caller holds the transaction and counts the answers on the
    enrollment.
    """
    assignment = create_assignment(
        study=study,
        item=item,
        participant=participant,
        now=shown_at or answered_at,
        state=state,
        position=position,
        status=Assignment.Status.ANSWERED,
        expires_at=answered_at,
        shown_at=shown_at,
        answered_at=answered_at,
        takes_slot=False,
    )
    return store_response(
        assignment=assignment,
        answer=answer,
        shown_at=shown_at,
        answered_at=answered_at,
        imported=imported,
        missing=missing,
    )


def _update_enrollment(assignment: Assignment, response: Response) -> tuple[bool, bool, int | None]:
    """Count the answer on the enrollment; mark it flagged when its participant is flagged
    in the study, and give back the slot of an answer that does not count (flagged, excluded
    or a researcher's test: the item still lacks it); record an attention check's outcome. Returns
    (screened out by this answer, the answer counts toward the quota, the enrollment's count of
    answers now)."""
    study = assignment.study
    counted = count_answers(
        participant_id=assignment.participant_id,
        study_id=study.pk,
        answers=1,
        points=response.points or 0,
    )
    if counted.flagged:
        # Flagged in this study and still answering (a volunteer the kind lets play on, or
        # a researcher's flag during the session): the copy ``flags`` keeps in step.
        Response.objects.filter(pk=response.pk).update(flagged=True)
        response.flagged = True
    # Pages are handed to people only (a model's or an adjudicator's answers are stored
    # elsewhere, ``store_answer_given_elsewhere``): the answer keeps its slot when it counts.
    counts = keeps_slot(
        human=True, flagged=counted.flagged, excluded=counted.excluded, is_test=counted.is_test
    )
    if not counts:
        free_slots({assignment.item_id: 1})
    if not response.is_attention_check:
        return False, counts, counted.answered_count
    enrollment = Enrollment(pk=counted.enrollment_id, participant_id=assignment.participant_id, study=study)
    screened_out = record_attention_outcome(enrollment=enrollment, passed=response.correct is True)
    return screened_out, False, counted.answered_count


def answered_too_fast(duration_seconds: float | None, minimum: int | None) -> bool:
    """Faster than the study's minimum time per page: flagged on the response, never rejected."""
    if not minimum or duration_seconds is None:
        return False
    return duration_seconds < minimum
