"""A study's status, written in one place: every way a status changes (the overview page's
buttons, the API's status endpoint, a study file created or loaded again, the admin's
actions, the quota and the adaptive rules) goes through ``change_study_status`` or
``close_study_by_rule`` here, so that a study moves only along ``STATUS_TRANSITIONS`` and
a closed study always says when and why it closed (``CLOSING_FIELDS``)."""

from __future__ import annotations

from django.utils import timezone

from annotation.errors import InputError
from annotation.models import Study

# Which status a study may move to from each status (a study never becomes a draft again:
# participants who took part in it would lose the pages they hold, and the crowd platform
# keep sending them).
STATUS_TRANSITIONS: dict[str, set[str]] = {
    Study.Status.DRAFT: {Study.Status.LIVE, Study.Status.CLOSED},
    Study.Status.LIVE: {Study.Status.CLOSED},
    Study.Status.CLOSED: {Study.Status.LIVE},
}

CLOSING_FIELDS = ["closed_at", "closed_because", "closed_details"]


def status_change_errors(current: str, wanted: str) -> list[str]:
    """Why a study of status ``current`` cannot become ``wanted`` (empty: it can, or it
    already is). The one check of the transitions, for the writer below and for a study
    file's check, which reports it beside the file's other errors before anything is written."""
    if wanted not in Study.Status.values:
        return [f"Unknown status {wanted!r}."]
    if wanted == current or wanted in STATUS_TRANSITIONS[current]:
        return []
    allowed = " or ".join(sorted(STATUS_TRANSITIONS[current]))
    return [f"A {current} study cannot become {wanted} (it can become {allowed})."]


def change_study_status(study: Study, *, status: str, by_quota: bool = False) -> Study:
    """Move a study along ``STATUS_TRANSITIONS``; anything else is an input error naming
    ``status``, and nothing changes. Closing records when and why (``by_quota``: the study
    closes itself at its quota (``capacity.close_if_quota_reached``), which lets
    ``capacity.reopen_if_short`` open it again; any other change clears that)."""
    errors = status_change_errors(study.status, status)
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
