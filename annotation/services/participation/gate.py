"""The one gate of every participant step (DESIGN.md, invariant 7).

Every step a participant takes (a task page, a submit, a round step, an exam question or
answer, consent, leaving) passes ``require_live_step``: the study takes answers, the
participant is not blocked, their enrollment is under way, and the page they act on is
theirs and still open. It is checked on every request, so a study closed or a participant
blocked mid-session stops at their next request. The rules of who may see what are
``access``'s; the gate reads a step's rows in one statement (``_step_statement``) and
applies them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from django.http import Http404
from django.utils import timezone
from psycopg import sql

from annotation.models import Assignment, Enrollment, Exam, Item, Participant, Study
from annotation.numbers import whole_number
from annotation.services.access import (
    access_assignment_for_participant,
    access_study_for_participant,
    can_manage_study,
)
from annotation.services.db import sql_rows

from .assignment import assignment_is_open
from .participants import browser_participant

# The gate's one query: the enrollment, its study and participant, the page and its item.
STEP_TABLES = ((Enrollment, "e"), (Study, "s"), (Participant, "p"), (Assignment, "a"), (Item, "i"))


class StepRefused(Exception):
    """The gate refused a participant's step; nothing was done. ``reason`` names the rule."""

    CLOSED = "closed"  # the study takes no answers (closed, or a draft to a non-manager)
    BLOCKED = "blocked"  # a researcher blocked the participant
    NOT_STARTED = "not_started"  # no participant or enrollment yet, or consent not given
    FINISHED = "finished"  # completed, screened out or returned
    EXPIRED = "expired"  # the page ran out of time or was given back

    def __init__(self, reason: str, study: Study, enrollment: Enrollment | None = None):
        self.reason, self.study, self.enrollment = reason, study, enrollment
        super().__init__(reason)


@dataclass(frozen=True)
class LiveStep:
    """What a step may act on, once the gate let it through."""

    study: Study
    enrollment: Enrollment
    assignment: Assignment | None = None

    @property
    def participant(self) -> Participant:
        return self.enrollment.participant

    @property
    def owned_assignment(self) -> Assignment:
        """The assignment of a step that names one (``participant_step(assignment=True)``)."""
        if self.assignment is None:
            raise LookupError("This step names no assignment.")
        return self.assignment

    @property
    def qualification_exam(self) -> Exam:
        """The study's exam, for an exam step that names a page (the gate answers 404 for
        such a step in a study without one)."""
        if self.study.qualification is None:
            raise LookupError("This study has no exam.")
        return self.study.qualification


def require_study_open(study: Study, user=None, enrollment: Enrollment | None = None) -> None:
    """A live study takes answers; a draft only from those who manage it (their preview).

    A study that takes no answers still gives ``enrollment`` (the participant's, if they
    have one) its place: a participant who finished (completed, screened out, returned) is
    refused as ``FINISHED``, which sends them to their code, whatever closed the study;
    anyone else is refused as ``CLOSED``, with their enrollment named (None: never started).
    """
    if study.status == Study.Status.LIVE:
        return
    if study.status == Study.Status.DRAFT and can_manage_study(user, study):
        return
    if enrollment is not None and enrollment.finished:
        raise StepRefused(StepRefused.FINISHED, study, enrollment)
    raise StepRefused(StepRefused.CLOSED, study, enrollment)


def _exam_closed(exam_id: int) -> bool:
    """A closed exam study takes no answers (so the studies requiring it take no one new)."""
    return Exam.objects.filter(pk=exam_id, study__status=Study.Status.CLOSED).exists()


def require_not_blocked(participant: Participant, study: Study) -> None:
    """A blocked participant (blocked site-wide by a researcher) takes no further step."""
    if participant.blocked:
        raise StepRefused(StepRefused.BLOCKED, study)


def require_live_step(
    *,
    slug: str,
    user,
    participant_id: int | None,
    assignment_id=None,
    exam: bool = False,
    before_consent: bool = False,
    now: datetime | None = None,
    read: Enrollment | None = None,
) -> LiveStep:
    """The one gate of every participant step (DESIGN.md, invariant 7).

    ``participant_id``: the participant this browser's session remembers (else the
    logged-in user's participant is the one). Raises ``Http404`` for a study or page that
    is not the participant's to see, and ``StepRefused`` when the study takes no answers,
    the participant is blocked, their enrollment is not under way (``before_consent`` lets
    the consent page through), or the page (``assignment_id``; in the study's qualification
    exam when ``exam``) is no longer open. An answered page passes: a retried submit gets
    the stored result.

    A step under way costs one query for the participant, the study, the enrollment and
    the page together (an exam's page: one more); the refusals read them one by one, in
    the order below. ``read``: the enrollment of this participant in the study ``slug``,
    with its study and participant, as this same request's earlier step (the answer whose
    page this is, ``views.steps.one_trip``) read them and left them: the rules are applied
    to it without reading the rows again (not for a step that names a page).
    """
    page_id = _row_id(assignment_id) if assignment_id is not None and not exam else None
    enrollment: Enrollment | None
    if read is not None and assignment_id is None and not exam:
        enrollment, page = read, None
    else:
        enrollment, page = _step_enrollment(slug, participant_id, user, page_id)
    if enrollment is None:
        study = access_study_for_participant(user, slug)
        participant = browser_participant(session_id=participant_id, user=user)
        if participant is not None and participant.pk != participant_id:
            enrollment = Enrollment.objects.filter(participant=participant, study=study).first()
    else:
        study, participant = enrollment.study, enrollment.participant
        if study.status == Study.Status.DRAFT and not can_manage_study(user, study):
            raise Http404("No such study.")
    # The enrollment is named, so that a finished participant is sent to their code and a
    # session the study's quota ended to its done page.
    require_study_open(study, user, enrollment)
    if participant is None:
        raise StepRefused(StepRefused.NOT_STARTED, study)
    require_not_blocked(participant, study)
    enrollment = _under_way(enrollment, study, before_consent=before_consent)
    if exam and study.qualification_id is not None and _exam_closed(study.qualification_id):
        raise StepRefused(StepRefused.CLOSED, study)  # a closed exam takes no answers
    if assignment_id is None:
        return LiveStep(study=study, enrollment=enrollment)
    if exam and study.qualification_id is None:
        raise Http404("This study has no exam.")
    if page is not None:
        assignment = page
    else:
        qualification = study.qualification
        page_study = qualification.study if exam and qualification is not None else study
        assignment = access_assignment_for_participant(
            participant=participant, study=page_study, assignment_id=assignment_id
        )
    answered = assignment.status == Assignment.Status.ANSWERED
    if not (answered or assignment_is_open(assignment, now or timezone.now())):
        raise StepRefused(StepRefused.EXPIRED, study, enrollment)
    return LiveStep(study=study, enrollment=enrollment, assignment=assignment)


def _step_enrollment(
    slug: str, participant_id: int | None, user, page_id: int | None = None
) -> tuple[Enrollment | None, Assignment | None]:
    """The enrollment of this step's participant in the study ``slug`` (not an exam), with
    its participant and study, and the page ``page_id`` when it is that participant's in
    that study (with its item), in one query; (None, None) when there is none to find that
    way. The session's participant (every participant's usual case) is read by a prepared
    statement; a logged-in user without one by the ORM."""
    if participant_id:
        return _session_step(slug, participant_id, page_id)
    if user is None or not user.is_authenticated:
        return None, None
    query = Enrollment.objects.select_related("participant", "study")
    enrollment = query.filter(participant__user=user, study__slug=slug, study__exam__isnull=True).first()
    return enrollment, None


@functools.cache
def _step_statement() -> sql_rows.Statement:
    query = sql.SQL(
        "SELECT {columns} FROM {enrollments} e "
        "JOIN {studies} s ON s.id = e.study_id "
        "JOIN {participants} p ON p.id = e.participant_id "
        "LEFT JOIN {pages} a "
        "ON a.id = %s AND a.study_id = e.study_id AND a.participant_id = e.participant_id "
        "LEFT JOIN {items} i ON i.id = a.item_id "
        "WHERE e.participant_id = %s AND s.slug = %s "
        "AND NOT EXISTS (SELECT 1 FROM {exams} x WHERE x.study_id = s.id)"
    )
    tables = {"enrollments": Enrollment, "studies": Study, "participants": Participant, "pages": Assignment}
    tables |= {"items": Item, "exams": Exam}
    parts = {name: sql_rows.table(model) for name, model in tables.items()}
    columns = sql_rows.joined_columns(STEP_TABLES)
    return sql_rows.Statement("roft_step_gate", query.format(columns=columns, **parts))


def _session_step(
    slug: str, participant_id: int, page_id: int | None
) -> tuple[Enrollment | None, Assignment | None]:
    rows = sql_rows.execute(_step_statement(), [page_id, int(participant_id), slug])
    if not rows:
        return None, None
    built = sql_rows.models_from_joined_row(STEP_TABLES, rows[0])
    enrollment, study, participant, assignment, item = built
    enrollment.study, enrollment.participant = study, participant
    if assignment is not None:
        item.study = study
        assignment.study, assignment.item, assignment.participant = study, item, participant
    return enrollment, assignment


def _under_way(enrollment: Enrollment | None, study: Study, *, before_consent: bool) -> Enrollment:
    """The participant's consented, unfinished enrollment (or a new one, ``before_consent``)."""
    allowed = {Enrollment.Status.ACTIVE, *([Enrollment.Status.STARTED] if before_consent else [])}
    if enrollment is not None and enrollment.status in allowed:
        return enrollment
    finished = enrollment is not None and enrollment.finished
    raise StepRefused(StepRefused.FINISHED if finished else StepRefused.NOT_STARTED, study, enrollment)


def _row_id(value) -> int | None:
    """``value`` as a row id (a positive 64-bit integer), else None."""
    number = whole_number(value)
    return number if number is not None and 0 < number < 2**63 else None
