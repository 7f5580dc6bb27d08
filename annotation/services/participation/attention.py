"""Attention checks: what passing and failing them does (where they fall in a session:
``attention_schedule``, which the hand-out of pages reads)."""

from __future__ import annotations

from django.utils import timezone

from annotation.models import Enrollment, Participant

from .flags import flag_in_study
from .participants import count_answers


def record_attention_outcome(*, enrollment: Enrollment, passed: bool) -> bool:
    """Count a passed or failed check; screen the participant out past the allowance.

    Returns True when this failure screened the participant out. Their responses are
    kept and marked ``flagged`` so that reports can leave them out. Where the study's kind
    lets the participant carry on (the game's volunteers), they are flagged the same way
    but their session goes on.
    """
    count_answers(
        participant_id=enrollment.participant_id,
        study_id=enrollment.study_id,
        answers=0,
        points=0,
        passed=int(passed),
        failed=int(not passed),
    )
    enrollment.refresh_from_db(fields=["attention_passed", "attention_failed", "status"])
    if passed or enrollment.attention_failed <= enrollment.study.max_attention_failures:
        return False
    participant = Participant.objects.get(pk=enrollment.participant_id)
    if not enrollment.study.task_kind.ends_session_on_attention_failure(enrollment.study, participant):
        flag_participant(enrollment=enrollment, reason="failed attention checks")
        return False
    screen_out(enrollment=enrollment, reason="failed attention checks")
    return True


def flag_participant(*, enrollment: Enrollment, reason: str) -> None:
    """Flag the participant in the study (``flags.flag_in_study``); the session goes on."""
    flag_in_study(enrollment, reason=reason, by=None)


def screen_out(*, enrollment: Enrollment, reason: str) -> None:
    Enrollment.objects.filter(pk=enrollment.pk).update(
        status=Enrollment.Status.SCREENED_OUT, finished_at=timezone.now()
    )
    flag_participant(enrollment=enrollment, reason=reason)
    enrollment.refresh_from_db(fields=["status", "finished_at"])
