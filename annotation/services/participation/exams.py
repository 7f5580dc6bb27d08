"""Qualification exams: a participant's way through them (their settings, as a study file
writes them: ``authoring.exam_settings``).

An exam is a study of its own whose items all carry gold (``Exam`` marks it, with the
pass mark and the attempts allowed). A study that requires it points to it; before the
first page of that study a participant answers every exam item once per attempt. The
answers are ordinary responses of the exam study (validated, stored once and scored
against gold by ``submit_response``); their assignments carry the attempt number, and an
``ExamAttempt`` row keeps each attempt's outcome. A pass counts for every study requiring
the exam; failing the last attempt ends the study with the screen-out code.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Assignment, Enrollment, Exam, ExamAttempt, Item, Participant, Response, Study

from .assignment import assignment_is_open, create_assignment, reopen_assignment
from .participants import enroll, give_consent


def needs_exam(*, study: Study, participant: Participant) -> bool:
    """The study requires an exam this participant has not passed."""
    if study.qualification_id is None:
        return False
    passed = ExamAttempt.objects.filter(
        exam_id=study.qualification_id, participant=participant, status=ExamAttempt.Status.PASSED
    )
    return not passed.exists()


@dataclass(frozen=True)
class ExamStep:
    """Where a participant stands in an exam: a question to answer, or an attempt's result."""

    attempt: ExamAttempt
    assignment: Assignment | None = None  # the question to answer now
    number: int = 0  # its 1-based place in the attempt
    total: int = 0

    @property
    def finished(self) -> bool:
        return self.assignment is None

    @property
    def question(self) -> Assignment:
        """The question to answer now, in a step that is not ``finished``."""
        if self.assignment is None:
            raise LookupError("This attempt is finished: no question is left.")
        return self.assignment

    @property
    def can_retry(self) -> bool:
        return (
            self.attempt.status == ExamAttempt.Status.FAILED and self.attempt.number < self.attempts_allowed
        )

    @property
    def attempts_allowed(self) -> int:
        return self.attempt.exam.attempts_allowed

    @property
    def failed_out(self) -> bool:
        return self.attempt.status == ExamAttempt.Status.FAILED and not self.can_retry


def exam_step(*, participant: Participant, exam: Exam, now: datetime | None = None) -> ExamStep:
    """The participant's next exam question, starting the first attempt on the way; when
    the latest attempt has every item answered, it is scored and its result returned."""
    now = now or timezone.now()
    attempt = _latest_attempt(participant, exam) or _start_attempt(participant, exam, 1, now)
    if attempt.status != ExamAttempt.Status.STARTED:
        return ExamStep(attempt=attempt)
    assignment = _next_question(attempt, now)
    if assignment is None:
        return ExamStep(attempt=finish_attempt(attempt, now))
    answered = Assignment.objects.filter(
        study=exam.study, participant=participant, attempt=attempt.number, status=Assignment.Status.ANSWERED
    ).count()
    total = exam.study.items.count()
    return ExamStep(attempt=attempt, assignment=assignment, number=answered + 1, total=total)


def retry_exam(*, participant: Participant, exam: Exam, now: datetime | None = None) -> ExamAttempt | None:
    """Start the next attempt after a failed one, if one is left; a double click starts one."""
    latest = _latest_attempt(participant, exam)
    if latest is None or latest.status != ExamAttempt.Status.FAILED or latest.number >= exam.attempts_allowed:
        return None
    return _start_attempt(participant, exam, latest.number + 1, now or timezone.now())


def finish_attempt(attempt: ExamAttempt, now: datetime | None = None) -> ExamAttempt:
    """Score a completed attempt once (a conditional update), and close the exam enrollment
    when the participant passed or has no attempt left."""
    exam = attempt.exam
    answers = Response.objects.filter(
        study=exam.study, participant_id=attempt.participant_id, assignment__attempt=attempt.number
    )
    correct = answers.filter(correct=True).count()
    status = ExamAttempt.Status.PASSED if correct >= exam.pass_mark else ExamAttempt.Status.FAILED
    now = now or timezone.now()
    changed = ExamAttempt.objects.filter(pk=attempt.pk, status=ExamAttempt.Status.STARTED).update(
        status=status, correct_count=correct, question_count=exam.study.items.count(), finished_at=now
    )
    attempt.refresh_from_db()
    if changed and (status == ExamAttempt.Status.PASSED or attempt.number >= exam.attempts_allowed):
        closed = (
            Enrollment.Status.COMPLETED
            if status == ExamAttempt.Status.PASSED
            else Enrollment.Status.SCREENED_OUT
        )
        Enrollment.objects.filter(participant_id=attempt.participant_id, study=exam.study).update(
            status=closed, finished_at=now
        )
    return attempt


def screen_out_after_exam(enrollment: Enrollment) -> None:
    """The participant failed every attempt: the study ends with the screen-out code.

    Not a flag on the participant: failing an exam is not failing attention checks.
    """
    Enrollment.objects.filter(pk=enrollment.pk, status=Enrollment.Status.ACTIVE).update(
        status=Enrollment.Status.SCREENED_OUT, finished_at=timezone.now()
    )
    enrollment.refresh_from_db(fields=["status", "finished_at"])


@dataclass(frozen=True)
class QuestionFeedback:
    """What a training quiz shows after a question: whether the answer was right, the right
    answer (gold) and the study file's explanation of it."""

    correct: bool
    gold: dict
    explanation: str
    number: int
    total: int


def question_feedback(assignment: Assignment) -> QuestionFeedback | None:
    """The feedback on an answered exam question (None while it is unanswered: the right
    answer is never shown before the participant's own answer is stored)."""
    response = Response.objects.filter(assignment=assignment).select_related("item").first()
    if response is None:
        return None
    item = response.item
    total = Item.objects.filter(study_id=item.study_id).count()
    return QuestionFeedback(
        correct=response.correct is True,
        gold=item.gold or {},
        explanation=item.explanation,
        number=Assignment.objects.filter(
            study_id=assignment.study_id,
            participant_id=assignment.participant_id,
            attempt=assignment.attempt,
            position__lte=assignment.position,
        ).count(),
        total=total,
    )


def failed_exam_attempt(study: Study, enrollment: Enrollment) -> ExamAttempt | None:
    """The last attempt of the exam that screened this participant out of ``study`` (None when
    the screen-out had another cause, or there was none): the last page speaks of the exam."""
    exam = study.qualification
    if exam is None or enrollment.status != Enrollment.Status.SCREENED_OUT:
        return None
    latest = _latest_attempt(enrollment.participant, exam)
    return latest if latest is not None and latest.status == ExamAttempt.Status.FAILED else None


def _latest_attempt(participant: Participant, exam: Exam) -> ExamAttempt | None:
    attempts = ExamAttempt.objects.filter(exam=exam, participant=participant).select_related("exam__study")
    return attempts.filter(status=ExamAttempt.Status.PASSED).first() or attempts.order_by("-number").first()


def _start_attempt(participant: Participant, exam: Exam, number: int, now: datetime) -> ExamAttempt:
    give_consent(enroll(participant=participant, study=exam.study))
    try:
        with transaction.atomic():
            ExamAttempt.objects.create(exam=exam, participant=participant, number=number, started_at=now)
    except IntegrityError:  # two tabs started it at once
        pass
    return ExamAttempt.objects.select_related("exam__study").get(
        exam=exam, participant=participant, number=number
    )


def attempt_order(attempt: ExamAttempt) -> list[int]:
    """The exam items' ids in the order this attempt asks them: shuffled, seeded by the exam,
    the participant and the attempt number, so a reload asks the same next question while the
    next attempt (of this participant or another) asks them in another order; one attempt's
    feedback is not a list of answers for the next."""
    ids = list(attempt.exam.study.items.order_by("id").values_list("id", flat=True))
    random.Random(f"exam:{attempt.exam_id}:{attempt.participant_id}:{attempt.number}").shuffle(ids)
    return ids


def _next_question(attempt: ExamAttempt, now: datetime) -> Assignment | None:
    """The attempt's unanswered question, or the next exam item in the attempt's order.

    The attempt row is locked so that two tabs get the same question. A question left open
    past the study's timeout is handed back, not lost: an exam item must be answered.
    """
    exam_study = attempt.exam.study
    with transaction.atomic():
        ExamAttempt.objects.select_for_update().get(pk=attempt.pk)
        mine = Assignment.objects.filter(
            study=exam_study, participant_id=attempt.participant_id, attempt=attempt.number
        )
        expires_at = now + timedelta(minutes=exam_study.timeout_minutes)
        pending = (
            mine.exclude(status=Assignment.Status.ANSWERED)
            .select_related("item")
            .order_by("position")
            .first()
        )
        if pending is not None:
            if not assignment_is_open(pending, now):
                reopen_assignment(pending, expires_at=expires_at)
            return pending
        served = set(mine.values_list("item_id", flat=True))
        left = [pk for pk in attempt_order(attempt) if pk not in served]
        if not left:
            return None
        item = Item.objects.get(pk=left[0])
        return create_assignment(
            study=exam_study,
            item=item,
            participant=attempt.participant,
            now=now,
            attempt=attempt.number,
            expires_at=expires_at,
            shown_at=now,
        )
