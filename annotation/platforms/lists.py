"""The "for Prolific" / "for MTurk" lists: one row per crowd participant of a study with
what a researcher needs to approve, reject or pay a bonus on the platform.

Status is the one decision a researcher acts on, most serious first: excluded (by a
researcher), flagged, screened out, returned, completed, or not finished.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import QuerySet

from annotation.models import Enrollment, Participant, Study
from annotation.services.exports.columns import neutralise
from annotation.services.populations import real_enrollments
from annotation.services.pseudonyms import PseudonymCache


@dataclass(frozen=True)
class PlatformRow:
    platform_id: str
    pseudonym: str
    status: str
    seconds_taken: int | None
    code: str
    reason: str
    assignment_id: str = ""
    hit_id: str = ""


def platform_status(enrollment: Enrollment) -> str:
    participant = enrollment.participant
    if enrollment.excluded:
        return "excluded"
    if enrollment.status == Enrollment.Status.SCREENED_OUT:
        return "screened out"  # with the screen-out code they were shown
    if enrollment.flagged or participant.blocked:  # this study's flag; a block is site-wide
        return "flagged"
    if enrollment.status == Enrollment.Status.RETURNED:
        return "returned"
    if enrollment.status == Enrollment.Status.COMPLETED:
        return "completed"
    return "not finished"


def named_enrollments(
    study: Study, platform: str, *, without: QuerySet | None = None
) -> Iterator[tuple[Enrollment, str]]:
    """The study's real enrollments from ``platform``, in order of arrival, each with its
    participant's pseudonym: what the lists, the plans and the bonus file's names read.
    ``without``: participant ids to leave out."""
    enrollments = real_enrollments(study).filter(participant__source=platform)
    if without is not None:
        enrollments = enrollments.exclude(participant_id__in=without)
    names = PseudonymCache(study.pseudonym_salt)
    for enrollment in enrollments.select_related("participant").order_by("id"):
        p = enrollment.participant
        yield enrollment, names.get(p.pk, p.source, p.platform_worker_id, p.public_id)


def platform_rows(study: Study, source: str) -> list[PlatformRow]:
    """The study's participants from ``source`` (prolific or mturk), in order of arrival."""
    rows = []
    for enrollment, pseudonym in named_enrollments(study, source):
        participant = enrollment.participant
        status = platform_status(enrollment)
        code = {"completed": study.completion_code, "screened out": study.screenout_code}.get(status, "")
        session = enrollment.platform_session or {}
        rows.append(
            PlatformRow(
                platform_id=participant.platform_worker_id,
                pseudonym=pseudonym,
                status=status,
                seconds_taken=_seconds_taken(enrollment),
                code=code,
                reason=enrollment.flag_reason,
                assignment_id=session.get("assignmentId", ""),
                hit_id=session.get("hitId", ""),
            )
        )
    return rows


def _seconds_taken(enrollment: Enrollment) -> int | None:
    if enrollment.consented_at is None or enrollment.finished_at is None:
        return None
    return round((enrollment.finished_at - enrollment.consented_at).total_seconds())


def spreadsheet_safe(value: object) -> str:
    """A cell as text, neutralised like every CSV cell the platform writes (a platform id
    comes from a URL anyone can write)."""
    return neutralise("" if value is None else str(value))


def platform_csv_lines(study: Study, source: str) -> list[list[str]]:
    """Header and rows of the list for ``source``, every cell safe to open in a spreadsheet."""
    id_name = "PROLIFIC_PID" if source == Participant.Source.PROLIFIC else "WorkerId"
    header = [id_name, "participant", "status", "seconds_taken", "code", "reason"]
    if source == Participant.Source.MTURK:
        header += ["AssignmentId", "HITId"]
    lines = [header]
    for row in platform_rows(study, source):
        cells = [row.platform_id, row.pseudonym, row.status, row.seconds_taken, row.code, row.reason]
        if source == Participant.Source.MTURK:
            cells += [row.assignment_id, row.hit_id]
        lines.append([spreadsheet_safe(cell) for cell in cells])
    return lines
