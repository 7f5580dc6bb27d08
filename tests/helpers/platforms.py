"""Crowd participants for the platform API tests: enrolled as the study link does, and
answering right (``GOOD``) or wrong (``BAD``, screened out at the first attention check)."""

from __future__ import annotations

from annotation.models import Enrollment, Participant, Study
from annotation.services.participation.participants import (
    complete_enrollment,
    enroll,
    give_consent,
    participant_by_platform_id,
)
from tests.helpers.flow import answer_pages

GOOD = {"label": "neutral", "evidence": []}  # right on the attention checks
BAD = {"label": "supports", "evidence": [0]}  # wrong on them


def crowd_participant(
    study: Study,
    worker_id: str,
    answer: dict | None = None,
    pages: int | None = None,
    *,
    source: str = Participant.Source.PROLIFIC,
    session: dict | None = None,
) -> Participant:
    """A consented participant of ``study`` who answered ``pages`` pages (all: finished)."""
    participant = participant_by_platform_id(source, worker_id)
    enrollment = enroll(participant=participant, study=study, session=session or {"SESSION_ID": worker_id})
    give_consent(enrollment)
    if answer is not None:
        answer_pages(study, participant, answer, pages)
        enrollment.refresh_from_db()
        if pages is None and enrollment.status == Enrollment.Status.ACTIVE:
            complete_enrollment(enrollment)  # what the next page does when none is left
    return participant


def named(study: Study, worker_id: str, source: str = Participant.Source.PROLIFIC) -> str:
    """The pseudonym a job's result gives this participant (never their platform id)."""
    from annotation.services.pseudonyms import pseudonym

    p = Participant.objects.get(source=source, platform_worker_id=worker_id)
    return pseudonym(
        study.pseudonym_salt, source=p.source, platform_worker_id=p.platform_worker_id, public_id=p.public_id
    )
