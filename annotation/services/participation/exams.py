"""Qualification exams: loading their settings, and a participant's way through them.

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
from django.db.models import Q
from django.utils import timezone
from rest_framework import serializers

from annotation.errors import InputError, checked
from annotation.kinds.base import StrictSerializer
from annotation.models import Assignment, Enrollment, Exam, ExamAttempt, Item, Participant, Response, Study
from annotation.services.access import can_manage_study

from .assignment import assignment_is_open, create_assignment, reopen_assignment
from .participants import enroll, give_consent


class ExamFields(StrictSerializer):
    pass_mark = serializers.IntegerField(min_value=1)
    attempts = serializers.IntegerField(min_value=1, max_value=10, default=2)
    training = serializers.BooleanField(default=False)


# --- loading ---------------------------------------------------------------------------


def check_exam_block(raw, *, slug: str, items: list[dict], fields: dict) -> dict | None:
    """The ``exam`` block of a study file: a pass mark the exam can reach, never listed
    publicly (it is taken through other studies). The rules on each exam item (gold, no
    attention checks) are ``validation.validate_item``'s, checked with the file's items."""
    existing = Exam.objects.filter(study__slug=slug).first()
    if raw is None:
        if existing is not None and existing.required_by.exists():
            raise InputError({"exam": ["Studies require this exam; its file must keep the 'exam' block."]})
        return None
    block = checked(ExamFields, raw, place="exam")
    count = _exam_item_count(slug, items)
    errors = check_exam(pass_mark=block["pass_mark"], item_count=count, public=bool(fields.get("public")))
    if "pass_mark" in errors:
        errors["exam.pass_mark"] = errors.pop("pass_mark")
    if errors:
        raise InputError(errors)
    return block


def check_exam(*, pass_mark: int, item_count: int, public: bool) -> dict[str, list[str]]:
    """The rules on an exam as a whole, as errors (none: it may be saved). The study file,
    the API and the admin all ask this; the rules on each exam item are
    ``validation.validate_item``'s."""
    errors = {}
    if pass_mark > item_count:
        errors["pass_mark"] = [f"Higher than the number of exam items ({item_count})."]
    if public:
        errors["public"] = ["An exam is taken through the studies that require it; it cannot be public."]
    return errors


def _exam_item_count(slug: str, items: list[dict]) -> int:
    """Items after loading: the file's, plus those of the study the file does not mention."""
    in_file = {item["external_id"] for item in items}
    kept = Item.objects.filter(study__slug=slug).exclude(external_id__in=in_file)
    if kept.filter(Q(gold__isnull=True) | Q(is_attention_check=True)).exists():
        raise InputError(
            {"items": ["The study keeps attention checks or items without gold; an exam cannot have them."]}
        )
    return len(in_file) + kept.count()


def check_qualification(raw, *, slug: str, owner=None) -> Exam | None:
    """``qualification``: the slug of an exam study loaded before this file, that the study's
    owner may use (their own, one shared with them; any for an admin, or for a study without
    an owner, loaded by an operator). The loader, the API and the admin all check here.

    Another researcher's exam gets the same answer as no exam at all: the check neither lends
    their questions nor tells whether the slug exists.
    """
    if raw in (None, ""):
        return None
    if not isinstance(raw, str):
        raise InputError({"qualification": ["The slug of an exam study."]})
    if raw == slug:
        raise InputError({"qualification": ["A study cannot require itself."]})
    exam = Exam.objects.select_related("study").filter(study__slug=raw).first()
    if exam is None or (owner is not None and not can_manage_study(owner, exam.study)):
        raise InputError(
            {
                "qualification": [
                    f"No exam study {raw!r} that this study's owner can use; load its file"
                    " (with an 'exam' block) first, or ask its owner to share it."
                ]
            }
        )
    return exam


def detach_exam_from_unpermitted_studies(exam_study: Study) -> int:
    """After an exam study's sharing changed: the other researchers' studies that require it
    and whose owner may no longer use it (``check_qualification``'s rule) stop requiring it,
    so their participants are no longer asked its questions. Studies without an owner (loaded
    by an operator) keep it. Returns how many were detached."""
    exam = Exam.objects.filter(study=exam_study).first()
    if exam is None:
        return 0
    requiring = Study.objects.filter(qualification=exam).exclude(owner=None).select_related("owner")
    unpermitted = [study.pk for study in requiring if not can_manage_study(study.owner, exam_study)]
    return Study.objects.filter(pk__in=unpermitted).update(qualification=None)


def write_exam_settings(study: Study, block: dict | None) -> None:
    if block is None:
        Exam.objects.filter(study=study).delete()
        return
    Exam.objects.update_or_create(
        study=study,
        defaults={
            "pass_mark": block["pass_mark"],
            "attempts_allowed": block["attempts"],
            "training": block.get("training", False),
        },
    )


# --- taking an exam --------------------------------------------------------------------


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
