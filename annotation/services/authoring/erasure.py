"""Erasing a participant: every row that came from them, their places back in the pool.

One rule behind every way in: the participants page, the API, ``manage.py erase``, the
Leave page's "delete my answers" (a withdrawal, where the study allows it) and the
retention rule run by the scheduled worker. It lives in authoring, the room that reaches
the others, because an erasure touches them all: the participant's pages go back through
participation's own writers (``flags.set_excluded`` gives back the answered pages' slots
and reopens a study the quota closed, ``assignment.release_participant_assignments`` the
open ones), the study's reports are recomputed by the reports job, and the exports
written before it are deleted (docs/privacy.md).

What goes, per study: answers, pages, the enrollment (flags, marks, platform session),
exam attempts in an exam study, the study's bonus and decision records of the person,
and the person's identifiers wherever the app copied them into a log or a job (jobs'
parameters and results, the platforms' audit log, the API's stored replies). The
participant row itself (with its platform id and the game's totals) goes once no study
holds them. What stays: one ``Erasure`` row per study, with counts and never an identity.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from django.db import transaction
from django.db.models import Model, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.errors import InputError, NotAllowed
from annotation.models import (
    Assignment,
    Enrollment,
    Erasure,
    ExamAttempt,
    IdempotencyKey,
    Job,
    ModelOutput,
    Participant,
    PlatformBonus,
    PlatformCall,
    PlatformDecision,
    PlatformEvent,
    Response,
    Study,
)
from annotation.services.access import can_change_study, is_researcher
from annotation.services.exports.export import export_path
from annotation.services.jobs import start_job
from annotation.services.participation.assignment import release_participant_assignments
from annotation.services.participation.flags import set_excluded
from annotation.services.populations import NOT_HUMAN
from annotation.services.pseudonyms import PseudonymCache, participant_pseudonym

# What an identifier copied into a log or a job's record becomes.
ERASED = "[erased]"
# The ways to name the participant to erase, each an input field of its own, and what its
# errors call it.
LOOKUPS = {"participant": "public id", "platform_id": "platform id", "pseudonym": "pseudonym"}
# Bonus and decision records whose call to the platform may be under way: erasing them
# would lose the one record that stops a second payment or transition (invariant 14).
IN_FLIGHT_BONUS = (PlatformBonus.State.CREATING, PlatformBonus.State.CREATED, PlatformBonus.State.PAYING)
REPORTS_JOB = "reports"  # scoring's kind, started by name (annotation does not import scoring)
EXPORT_JOB = "export"
M = TypeVar("M", bound=Model)


@dataclass
class ErasureResult:
    """What one erasure removed, for the page's message and the command's output."""

    studies: list[str] = field(default_factory=list)
    answers: int = 0
    pages: int = 0
    exam_attempts: int = 0
    participant_removed: bool = False


def find_enrollment(
    study: Study, *, participant: str = "", platform_id: str = "", pseudonym: str = ""
) -> Enrollment:
    """The enrollment in ``study`` of the one participant named by exactly one of: their
    public id (``participant``), platform id or pseudonym in this study; an ``InputError``
    naming the field otherwise (an unknown one included), nothing changed."""
    given = {
        name: value.strip()
        for name, value in zip(LOOKUPS, (participant, platform_id, pseudonym), strict=True)
        if value
    }
    if len(given) != 1:
        raise InputError(
            {"participant": ["Name the participant by one of: public id, platform id or pseudonym."]}
        )
    ((name, value),) = given.items()
    enrollments = Enrollment.objects.filter(study=study).select_related("participant", "study")
    if name == "participant":
        found = list(enrollments.filter(participant__public_id=value))
    elif name == "platform_id":
        found = list(enrollments.filter(participant__platform_worker_id=value))
    else:
        cache = PseudonymCache(study.pseudonym_salt)
        found = [
            e
            for e in enrollments.iterator()
            if cache.get(
                e.participant_id,
                e.participant.source,
                e.participant.platform_worker_id,
                e.participant.public_id,
            )
            == value
        ]
    if not found:
        raise InputError(
            {name: [f"{value!r}: no participant of study {study.slug!r} has this {LOOKUPS[name]}."]}
        )
    if len(found) > 1:
        raise InputError({name: [f"{value!r} names {len(found)} participants here: give their public id."]})
    return found[0]


def erase_from_study(user, enrollment: Enrollment, *, how: str) -> ErasureResult:
    """A researcher's erasure: the study's owner or an admin (``can_change_study``); the
    participant's qualification exam goes too where the same person may change it."""
    study = enrollment.study
    if not can_change_study(user, study):
        raise NotAllowed("Only the study's owner (or an admin) may erase a participant's data.")
    studies = [study]
    exam_study = study.qualification.study if study.qualification is not None else None
    if exam_study is not None and can_change_study(user, exam_study):
        studies.append(exam_study)
    return erase(enrollment.participant, studies=studies, by=user, how=how)


def erase_everywhere(user, participant: Participant, *, how: str) -> ErasureResult:
    """An admin's erasure of a participant from every study they took part in."""
    if not (user is not None and user.is_superuser and is_researcher(user)):
        raise NotAllowed("Only an admin may erase a participant from every study.")
    return erase(participant, studies=participant_studies(participant), by=user, how=how)


def participant_studies(participant: Participant) -> list[Study]:
    """Every study holding something of the participant's: an enrollment or an exam attempt."""
    held = Q(enrollments__participant=participant) | Q(exam__attempts__participant=participant)
    return list(Study.objects.filter(held).distinct().order_by("pk"))


def withdraw(enrollment: Enrollment) -> ErasureResult:
    """The participant's own "delete my answers" on the Leave page, where the study allows it."""
    if not enrollment.study.participants_may_erase:
        raise NotAllowed("This study keeps the answers of participants who leave.")
    return erase(enrollment.participant, studies=[enrollment.study], by=None, how=Erasure.How.WITHDRAWAL)


def erase(
    participant: Participant, *, studies: Iterable[Study], by, how: str, recompute: bool = True
) -> ErasureResult:
    """Erase ``participant`` from ``studies``: the one writer of erasures (see the module).
    ``recompute``: start each study's reports job (the retention rule starts one per study
    after all its participants instead)."""
    studies = list(studies)
    result = ErasureResult()
    with transaction.atomic():
        participant = Participant.objects.select_for_update().get(pk=participant.pk)
        _refuse_in_flight(participant, studies)
        identifiers = {
            participant.public_id,
            *([participant.platform_worker_id] if participant.platform_worker_id else []),
        }
        identifiers |= {participant_pseudonym(study, participant) for study in studies}
        submissions = _submission_ids(participant, studies)
        identifiers |= submissions
        PlatformEvent.objects.filter(study__in=studies, submission_id__in=submissions).delete()
        for study in studies:
            _erase_in_study(participant, study, by=by, how=how, result=result)
        _redact(identifiers, studies)
        if not (participant.enrollments.exists() or participant.exam_attempts.exists()):
            participant.delete()  # its platform id, the game's totals, what is left of it
            result.participant_removed = True
        else:  # the kinds' per-participant totals, rebuilt once from the rounds left
            for kind in {study.kind: study.task_kind for study in studies}.values():
                kind.after_responses_moved([participant.pk])
        if recompute:
            for study in studies:
                recompute_reports(study, by=by)
        old_exports = list(Job.objects.filter(kind=EXPORT_JOB, study__in=studies).select_related("study"))
        transaction.on_commit(lambda: _delete_export_files(old_exports))
    return result


# The keys of a platform session that name this person's own submission (Prolific's
# SESSION_ID, MTurk's assignmentId): ids of a person, unlike the platform study's own id.
SUBMISSION_KEYS = ("SESSION_ID", "assignmentId")


def _submission_ids(participant: Participant, studies: list[Study]) -> set[str]:
    """The platform's ids of the participant's submissions in ``studies``: the webhooks'
    events and the audit log name them."""
    sessions = Enrollment.objects.filter(participant=participant, study__in=studies).values_list(
        "platform_session", flat=True
    )
    return {
        str(session[key]) for session in sessions if session for key in SUBMISSION_KEYS if session.get(key)
    }


def recompute_reports(study: Study, *, by=None) -> Job:
    """A fresh reports job (never the one already running: it may have read the erased rows)."""
    return start_job(kind=REPORTS_JOB, parameters={"trigger": "erasure"}, study=study, user=by)


def _refuse_in_flight(participant: Participant, studies: list[Study]) -> None:
    bonuses = PlatformBonus.objects.filter(
        participant=participant, study__in=studies, state__in=IN_FLIGHT_BONUS
    )
    decisions = PlatformDecision.objects.filter(
        participant=participant, study__in=studies, state=PlatformDecision.State.SENDING
    )
    if bonuses.exists() or decisions.exists():
        raise InputError(
            {
                "participant": [
                    "A bonus or a review decision of this participant is on its way to the platform: "
                    "settle it first (bonus --list), then erase."
                ]
            }
        )


def _erase_in_study(participant: Participant, study: Study, *, by, how: str, result: ErasureResult) -> None:
    enrollment = Enrollment.objects.filter(study=study, participant=participant).first()
    if enrollment is not None and not enrollment.excluded:
        set_excluded(enrollment, excluded=True)  # answered pages give their slots back
    release_participant_assignments(participant=participant, study=study)  # open pages too
    ModelOutput.objects.filter(study=study, participant=participant).delete()
    _, deleted = Response.objects.filter(study=study, participant=participant).delete()
    answers = deleted.get(Response._meta.label, 0)
    pages, _ = Assignment.objects.filter(study=study, participant=participant).delete()
    attempts, _ = ExamAttempt.objects.filter(exam__study=study, participant=participant).delete()
    PlatformBonus.objects.filter(study=study, participant=participant).delete()
    PlatformDecision.objects.filter(study=study, participant=participant).delete()
    if enrollment is not None:
        enrollment.delete()
    elif not (answers or pages or attempts):
        return
    Erasure.objects.create(
        study=study, erased_by=by, how=how, answers=answers, pages=pages, exam_attempts=attempts
    )
    result.studies.append(study.slug)
    result.answers += answers
    result.pages += pages
    result.exam_attempts += attempts


def _redact(identifiers: set[str], studies: list[Study]) -> None:
    """Replace the identifiers where the app copied them: jobs' parameters and results and
    the platforms' audit log (of these studies, or of none), the API's stored replies."""
    in_scope = Q(study__in=studies) | Q(study__isnull=True)
    _redact_rows(Job.objects.filter(in_scope), ("parameters", "result"), identifiers)
    _redact_rows(PlatformCall.objects.filter(in_scope), ("request_body", "response_body"), identifiers)
    IdempotencyKey.objects.annotate(body_text=Cast("body", TextField())).filter(
        _mentions(("body_text",), identifiers)
    ).delete()


def _redact_rows(rows: QuerySet[M], fields: tuple[str, ...], identifiers: set[str]) -> None:
    """The JSON ``fields`` of ``rows`` without the identifiers: one read of the rows that
    mention one and one UPDATE for them all (``bulk_update``), not an UPDATE per row."""
    texts = {f"{name}_text": Cast(name, TextField()) for name in fields}
    found = list(rows.annotate(**texts).filter(_mentions(texts, identifiers)).only("pk", *fields))
    for row in found:
        for name in fields:
            setattr(row, name, _without(getattr(row, name), identifiers))
    rows.bulk_update(found, fields)


def _mentions(texts: Iterable[str], identifiers: set[str]) -> Q:
    """Rows whose annotated text columns ``texts`` hold any of the identifiers."""
    found = Q()
    for column in texts:
        for text in identifiers:
            found |= Q(**{f"{column}__contains": text})
    return found


def _without(value, identifiers: set[str]):
    """``value`` (decoded JSON) with every identifier inside a string replaced by ``ERASED``."""
    if isinstance(value, dict):
        return {_without(key, identifiers): _without(item, identifiers) for key, item in value.items()}
    if isinstance(value, list):
        return [_without(item, identifiers) for item in value]
    if isinstance(value, str):
        for text in identifiers:
            value = value.replace(text, ERASED)
    return value


def _delete_export_files(jobs: list[Job]) -> None:
    """Exports written before the erasure held the participant: their files go (the jobs'
    rows stay, so the exports page says the file is gone and a new export has no trace)."""
    for job in jobs:
        try:
            export_path(job).unlink(missing_ok=True)
        except (KeyError, ValueError):  # a job that failed before it had a format or a path
            continue


@dataclass
class RetentionResult:
    studies: int = 0
    platform_ids_deleted: int = 0
    participants_erased: int = 0


def apply_retention(now: datetime | None = None) -> RetentionResult:
    """The studies' retention periods (the scheduled worker, daily): a participant who
    arrived more than ``retention_days`` ago loses their platform session in the study and,
    once every study they took part in has passed its period, their platform id (a study
    without one keeps it: its owner may still have to pay them); with
    ``retention_erases_answers`` their answers in the study are erased as by a researcher."""
    now = now or timezone.now()
    result = RetentionResult()  # (a study's period is at least a day: the model's validator)
    for study in Study.objects.filter(retention_days__isnull=False):
        result.studies += 1
        past = Enrollment.objects.filter(
            study=study, created_at__lte=now - timedelta(days=study.retention_days or 0)
        )
        if study.retention_erases_answers:
            people = [
                e.participant
                for e in past.exclude(participant__source__in=NOT_HUMAN).select_related("participant")
            ]
            for person in people:
                erase(person, studies=[study], by=None, how=Erasure.How.RETENTION, recompute=False)
            if people:
                recompute_reports(study)
            result.participants_erased += len(people)
            continue
        past.exclude(platform_session={}).update(platform_session={})
        for participant in (
            Participant.objects.filter(enrollments__in=past)
            .exclude(platform_worker_id="")
            .distinct()
            .prefetch_related("enrollments__study")  # not two queries per participant
        ):
            enrollments = participant.enrollments.all()
            if all(_past_retention(e, now) for e in enrollments):
                Participant.objects.filter(pk=participant.pk).update(platform_worker_id="")
                _redact({participant.platform_worker_id}, [e.study for e in enrollments])
                result.platform_ids_deleted += 1
    return result


def _past_retention(enrollment: Enrollment, now: datetime) -> bool:
    days = enrollment.study.retention_days
    return days is not None and enrollment.created_at <= now - timedelta(days=days)
