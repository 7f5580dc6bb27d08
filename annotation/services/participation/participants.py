"""Who is annotating: participants from crowd platforms, the lab, or the open web."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from psycopg import sql

from annotation.errors import InputError
from annotation.models import Enrollment, Participant, Study
from annotation.services.db import sql_rows

MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# The query parameters of a study link that say who a crowd participant is.
CROWD_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId", "turkSubmitTo")


@dataclass(frozen=True)
class CrowdEntry:
    """The crowd platform's query parameters on the study link, as received."""

    source: str = Participant.Source.ORGANIC
    worker_id: str = ""
    session: dict[str, str] = field(default_factory=dict)
    preview: bool = False


# The worker ids the platforms put on a study link. Prolific's are 24 lowercase hexadecimal
# characters (a MongoDB ObjectId); MTurk's are "A" then capital letters and digits, 64
# characters at most (the MTurk API reference's WorkerId). Anything else was made up or
# mangled, and would hold pages as a participant no platform knows (review 3, N12).
PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")
MTURK_WORKER_ID = re.compile(r"A[A-Z0-9]{1,63}")


class CrowdIdRefused(InputError):
    """A study link whose crowd worker id is not of its platform's form (``field``: the
    query parameter); nothing is stored for it."""

    def __init__(self, field: str, platform: str):
        self.field = field
        self.platform = platform
        message = f"Not a {platform} id: the platform makes these, so the link was changed."
        super().__init__({field: [message]})


def parse_crowd_params(params) -> CrowdEntry:
    """Prolific (PROLIFIC_PID, STUDY_ID, SESSION_ID) or MTurk (workerId, assignmentId, hitId).
    The one place a crowd participant's id enters: ``CrowdIdRefused`` when it is not of the
    platform's form."""
    if params.get("PROLIFIC_PID"):
        session = {k: params[k] for k in ("STUDY_ID", "SESSION_ID") if params.get(k)}
        worker_id = _checked_worker_id(params, "PROLIFIC_PID", PROLIFIC_ID, "Prolific")
        return CrowdEntry(Participant.Source.PROLIFIC, worker_id, session)
    assignment_id = params.get("assignmentId", "")
    if assignment_id == MTURK_PREVIEW:
        return CrowdEntry(Participant.Source.MTURK, preview=True)
    if params.get("workerId"):
        keys = ("assignmentId", "hitId", "turkSubmitTo")
        session = {k: params[k] for k in keys if params.get(k)}
        worker_id = _checked_worker_id(params, "workerId", MTURK_WORKER_ID, "Mechanical Turk")
        return CrowdEntry(Participant.Source.MTURK, worker_id, session)
    return CrowdEntry()


def _checked_worker_id(params, field: str, form: re.Pattern, platform: str) -> str:
    worker_id = params[field].strip()
    if form.fullmatch(worker_id) is None:
        raise CrowdIdRefused(field, platform)
    return worker_id


def browser_participant(
    *, session_id: int | None, user=None, entry: CrowdEntry | None = None
) -> Participant | None:
    """The one answer to "which participant is this browser", in one order: the crowd id on
    the link (``entry``), then the participant this browser's session remembers
    (``session_id``), then the logged-in user's. Creates nothing (a study link that is only
    looked at, by a person or a link preview, leaves no rows behind).

    The session comes before the login: a logged-in researcher who opened a Prolific link
    goes on as that Prolific participant on every page until the login hook (a new login)
    or a new crowd link changes the session. The gate, the study link and consent, the
    game's pages and the login hook all ask here.
    """
    if entry is not None and entry.worker_id:
        return Participant.objects.filter(source=entry.source, platform_worker_id=entry.worker_id).first()
    if session_id:
        participant = Participant.objects.filter(pk=session_id).first()
        if participant is not None:
            return participant
    if user is not None and user.is_authenticated:
        return Participant.objects.filter(user=user).first()
    return None


def identify_participant(*, entry: CrowdEntry, session_participant_id: int | None, user=None) -> Participant:
    """The participant for this browser (``browser_participant``), created when there is
    none (on consent, or when a game round starts)."""
    if entry.worker_id:
        return participant_by_platform_id(entry.source, entry.worker_id)
    found = browser_participant(session_id=session_participant_id, user=user, entry=entry)
    if found is not None:
        return found
    owner = user if user is not None and user.is_authenticated else None
    return Participant.objects.create(source=entry.source, user=owner)


def participant_by_platform_id(
    source: str, platform_worker_id: str, *, defaults: dict | None = None
) -> Participant:
    """The one participant of (``source``, ``platform_worker_id``), created with ``defaults``
    on first use: crowd ids on a study link, imported workers, adjudicators, model raters.

    Safe when two first arrivals race (two requests, two imports, two workers): the loser's
    insert fails on the unique constraint inside its own savepoint, so an outer transaction
    goes on, and it reads the winner's row.
    """
    if not platform_worker_id:
        raise ValueError("A participant found by platform id needs one.")
    found = Participant.objects.filter(source=source, platform_worker_id=platform_worker_id).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return Participant.objects.create(
                source=source, platform_worker_id=platform_worker_id, **(defaults or {})
            )
    except IntegrityError:  # two first arrivals at once: the other one created it
        return Participant.objects.get(source=source, platform_worker_id=platform_worker_id)


def enroll(
    *,
    participant: Participant,
    study: Study,
    session: dict | None = None,
    status: str = Enrollment.Status.STARTED,
    is_test: bool = False,
) -> Enrollment:
    """The participant's enrollment in the study, created on first entry (in ``status``:
    an import enrolls its participants as having completed the study). ``is_test``: a
    researcher who manages the study is trying it (``access.is_test_visit``); decided once,
    when the enrollment is created."""
    try:
        with transaction.atomic():
            defaults = {"platform_session": session or {}, "status": status, "is_test": is_test}
            enrollment, created = Enrollment.objects.get_or_create(
                participant=participant, study=study, defaults=defaults
            )
    except IntegrityError:
        enrollment, created = Enrollment.objects.get(participant=participant, study=study), False
    if not created and session and session != enrollment.platform_session:
        enrollment.platform_session = {**enrollment.platform_session, **session}
        enrollment.save(update_fields=["platform_session"])
    return enrollment


@dataclass(frozen=True)
class CountedAnswers:
    """The enrollment's row after ``count_answers``: what a submit decides on next."""

    enrollment_id: int
    attention_failed: int
    flagged: bool = False
    excluded: bool = False
    is_test: bool = False
    answered_count: int | None = None  # the enrollment's count after the update


def count_answers(
    *,
    participant_id: int,
    study_id: int,
    answers: int,
    points: float,
    passed: int = 0,
    failed: int = 0,
) -> CountedAnswers:
    """Add stored answers, their points and attention checks passed and failed to the
    enrollment's totals: the only writer of ``answered_count``, ``points_total``,
    ``attention_passed`` and ``attention_failed`` (an update in place, safe under
    concurrency). Negative amounts take answers away (a guest's moved to an account); no
    count goes below zero.

    One statement: the update returns the row's id and attention failures, so a submit
    needs no read of the enrollment before or after it.
    """
    params = [answers, points, passed, failed, participant_id, study_id]
    rows = sql_rows.execute(_count_statement(), params)
    if not rows:
        raise Enrollment.DoesNotExist(f"No enrollment of participant {participant_id} in study {study_id}.")
    row = rows[0]
    return CountedAnswers(
        enrollment_id=row[0],
        attention_failed=row[1],
        flagged=row[2],
        excluded=row[3],
        is_test=row[4],
        answered_count=row[5],
    )


@functools.cache
def _count_statement() -> sql_rows.Statement:
    # The larger of two values: GREATEST, which SQLite calls MAX (as Django's ``Greatest``
    # compiles it); the statement returns its row, which an ORM update does not.
    most = sql.SQL("GREATEST" if connection.vendor == "postgresql" else "MAX")
    query = sql.SQL(
        "UPDATE {enrollments} SET answered_count = {most}(answered_count + %s, 0), "
        "points_total = points_total + %s, "
        "attention_passed = {most}(attention_passed + %s, 0), "
        "attention_failed = {most}(attention_failed + %s, 0) "
        "WHERE participant_id = %s AND study_id = %s "
        "RETURNING id, attention_failed, flagged, excluded, is_test, answered_count"
    )
    enrollments = sql_rows.table(Enrollment)
    return sql_rows.Statement("roft_count_answers", query.format(enrollments=enrollments, most=most))


def give_consent(enrollment: Enrollment) -> None:
    if enrollment.status == Enrollment.Status.STARTED:
        enrollment.status = Enrollment.Status.ACTIVE
        enrollment.consented_at = timezone.now()
        enrollment.save(update_fields=["status", "consented_at"])


def is_anonymous(participant: Participant) -> bool:
    """A visitor known only by their browser session: no crowd id, no account."""
    return (
        participant.source == Participant.Source.ORGANIC
        and not participant.platform_worker_id
        and participant.user_id is None
    )


def session_cut_short(enrollment: Enrollment, study: Study) -> bool:
    """The session ended because the study ran out of items before its promised number of
    pages (``items_per_session``): the participant is told so, and gets the completion code
    only when the study pays such sessions (``pay_partial_sessions``)."""
    return (
        enrollment.status == Enrollment.Status.COMPLETED
        and enrollment.answered_count < study.items_per_session
    )


def complete_enrollment(enrollment: Enrollment) -> None:
    """The session is over with nothing left to do: the completion code is due."""
    if not enrollment.finished:
        enrollment.status = Enrollment.Status.COMPLETED
        enrollment.finished_at = timezone.now()
        enrollment.save(update_fields=["status", "finished_at"])
