"""A study's status, written in one place: every way a status changes (the overview page's
buttons, the API's status endpoint, a study file created or loaded again, the admin's
actions, the quota and the adaptive rules) goes through ``change_study_status`` or
``close_study_by_rule`` here, so that a study moves only along ``STATUS_TRANSITIONS`` and
a closed study always says when and why it closed (``CLOSING_FIELDS``)."""

from __future__ import annotations

from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.populations import real_answers

# Which status a study may move to from each status. Back to draft only while no answer is
# stored (``answers_kept_live``): an answer means what the questions said when it was given,
# and a draft's questions change (test answers aside: they count nowhere).
STATUS_TRANSITIONS: dict[str, set[str]] = {
    Study.Status.DRAFT: {Study.Status.LIVE, Study.Status.CLOSED},
    Study.Status.LIVE: {Study.Status.CLOSED, Study.Status.DRAFT},
    Study.Status.CLOSED: {Study.Status.LIVE, Study.Status.DRAFT},
}


def stored_answers(study: Study | None) -> int:
    """The study's answers that keep it from becoming a draft again: every answer but the
    researchers' test runs (``populations.real_answers``)."""
    return 0 if study is None or study.pk is None else real_answers(study).count()


def answers_kept_live(current: str, answers: int) -> list[str]:
    """Why a ``current`` study with ``answers`` stored answers cannot become a draft."""
    if current == Study.Status.DRAFT or answers == 0:
        return []
    noun = "answer is" if answers == 1 else "answers are"
    return [
        f"A {current} study cannot become draft while answers are stored: {answers} {noun} "
        "stored (test answers aside). Duplicate it instead and edit the copy."
    ]


CLOSING_FIELDS = ["closed_at", "closed_because", "closed_details"]


def status_change_errors(current: str, wanted: str, *, answers: int = 0) -> list[str]:
    """Why a study of status ``current`` with ``answers`` stored answers (``stored_answers``)
    cannot become ``wanted`` (empty: it can, or it already is). The one check of the
    transitions, for the writer below and for a study file's check, which reports it beside
    the file's other errors before anything is written."""
    if wanted not in Study.Status.values:
        return [f"Unknown status {wanted!r}."]
    if wanted == current:
        return []
    if wanted in STATUS_TRANSITIONS[current]:
        return answers_kept_live(current, answers) if wanted == Study.Status.DRAFT else []
    allowed = " or ".join(sorted(STATUS_TRANSITIONS[current]))
    return [f"A {current} study cannot become {wanted} (it can become {allowed})."]


def change_study_status(study: Study, *, status: str, by_quota: bool = False) -> Study:
    """Move a study along ``STATUS_TRANSITIONS``; anything else is an input error naming
    ``status``, and nothing changes. Closing records when and why (``by_quota``: the study
    closes itself at its quota (``capacity.close_if_quota_reached``), which lets
    ``capacity.reopen_if_short`` open it again; any other change clears that)."""
    answers = stored_answers(study) if status == Study.Status.DRAFT else 0
    errors = status_change_errors(study.status, status, answers=answers)
    if errors:
        raise InputError({"status": errors})
    if status == study.status:
        return study
    now = timezone.now()
    closing = status == Study.Status.CLOSED
    because = (Study.ClosedBecause.QUOTA if by_quota else Study.ClosedBecause.RESEARCHER) if closing else ""
    Study.objects.filter(pk=study.pk, status=study.status).update(
        status=status,
        closed_by_quota=by_quota,
        updated_at=now,
        closed_at=now if closing else None,
        closed_because=because,
        closed_details={},
    )
    study.refresh_from_db()
    return study


def close_study_by_rule(study: Study, *, because: str, details: dict) -> bool:
    """Close a live study because a rule of its own says so (the adaptive budget or
    stopping rule, ``Study.ClosedBecause``), recording why, when and on what figures.

    One conditional UPDATE (live → closed) that changes one row or none: whichever of
    several concurrent deciders (submits, reports jobs) comes first closes the study, the
    others change nothing and get False, so a study closes exactly once."""
    now = timezone.now()
    changed = Study.objects.filter(pk=study.pk, status=Study.Status.LIVE).update(
        status=Study.Status.CLOSED,
        closed_by_quota=False,
        updated_at=now,
        closed_at=now,
        closed_because=because,
        closed_details=details,
    )
    study.refresh_from_db(fields=["status", "closed_by_quota", *CLOSING_FIELDS])
    return changed == 1
