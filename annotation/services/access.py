"""The only ways a view fetches objects on someone's behalf; permissions live here.

Every step a participant takes (a task page, a submit, a round step, an exam question or
answer, consent, leaving) passes ``require_live_step``, the one gate: the study takes
answers, the participant is not blocked, their enrollment is under way, and the page they
act on is theirs and still open. It is checked on every request, so a study closed or a
participant blocked mid-session stops at their next request.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Q
from django.http import Http404
from django.utils import timezone

from annotation.errors import NotAllowed
from annotation.models import Assignment, Enrollment, Exam, Item, Job, Participant, Response, Study
from annotation.numbers import whole_number

from . import sql_rows
from .assignment import assignment_is_open
from .participants import browser_participant
from .populations import not_a_test_q

RESEARCHERS_GROUP = "researchers"
# The gate's one query: the enrollment, its study and participant, the page and its item.
STEP_TABLES = ((Enrollment, "e"), (Study, "s"), (Participant, "p"), (Assignment, "a"), (Item, "i"))


def is_researcher(user) -> bool:
    """Researchers are staff users or members of the 'researchers' group; admins are superusers."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    return user.is_staff or user.is_superuser or user.groups.filter(name=RESEARCHERS_GROUP).exists()


def researchers_group() -> Group:
    """The group that makes an account a researcher. Migration 0014 creates it; this finds
    it, or creates it again where it was deleted (an admin, a test's flushed database)."""
    return Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0]


def can_invite_researchers(user) -> bool:
    """Staff and admins invite researchers; a researcher by group membership alone does not
    (an invitation makes an account, which is the admins' decision)."""
    return bool(user and user.is_authenticated and user.is_active and (user.is_staff or user.is_superuser))


def researcher_accounts():
    """Every account ``is_researcher`` says yes to, as a query: the accounts a study may be
    owned by or shared with (never the game's players)."""
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(is_staff=True) | Q(is_superuser=True) | Q(groups__name=RESEARCHERS_GROUP))
        .distinct()
        .order_by("username")
    )


def can_manage_study(user, study: Study) -> bool:
    """Those who reach the study in the researcher pages and the API (``researcher_studies``:
    its owner, researchers it is shared with, admins) manage it: they preview drafts, and
    their own visits are tests. An owner who left the researchers group manages nothing.
    Changing the study is narrower: ``can_change_study``."""
    return researcher_studies(user).filter(pk=study.pk).exists()


def is_test_visit(user, study: Study) -> bool:
    """Someone who manages the study taking part in it is trying it: their enrollment is a
    test (``Enrollment.is_test``), whose answers count nowhere (``populations``)."""
    return can_manage_study(user, study)


def _owns(user, study: Study | None) -> bool:
    """Admins, and the study's owner while a researcher (never those it is shared with)."""
    if not is_researcher(user):
        return False
    return user.is_superuser or (study is not None and study.owner_id == user.pk)


NOT_THE_OWNER = (
    "This study is shared with you to read and analyse; only its owner (or an admin) may change it."
)


def can_change_study(user, study: Study) -> bool:
    """The one rule for every change of a study's state and every deletion: its status, its
    settings, config and items (the builder, PATCH, a study file loaded over it, an items
    upload), its researchers' test runs discarded, its participants' marks and returns, its
    adjudications, and the jobs that write into it (``JobKind.analysis`` says which only
    read). Until roles land, sharing a study means reading and analysing it (its pages,
    reports and exports): the changes are its owner's, and admins'."""
    return _owns(user, study)


def require_study_change(user, study: Study) -> None:
    """``can_change_study``, or ``NotAllowed`` (403; the study itself is the user's to see)."""
    if not can_change_study(user, study):
        raise NotAllowed(NOT_THE_OWNER)


def access_study_to_change(user, slug: str) -> Study:
    """A study the user may change: 404 where they do not reach it (never reveal others'
    studies), 403 where it is only shared with them."""
    study = access_study_for_researcher(user, slug)
    require_study_change(user, study)
    return study


def can_share_study(user, study: Study) -> bool:
    """Only the owner and admins decide who else may reach a study."""
    return _owns(user, study)


def can_see_platform_ids(user, study: Study | None) -> bool:
    """The one rule for raw crowd-platform ids (``platform_worker_id``): the study's owner
    and admins see them, on the participants pages, in the API, in the crowd platform
    lists and in exports (researchers it is shared with see pseudonyms only; a job with no
    study: admins only). The owner pays the crowd workers, so they need the ids."""
    return _owns(user, study)


def can_use_platforms(user, study: Study | None) -> bool:
    """Who may publish, review and pay a study's crowd workers through the platforms' APIs,
    store a platform token for it and read its audit log: the one who pays (the owner) and
    admins, as for the raw ids those calls carry."""
    return _owns(user, study)


def researcher_studies(user):
    """The studies a researcher may see and change: their own and those shared with them
    (all of them for admins)."""
    if not is_researcher(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    shared = Study.shared_with.through.objects.filter(user_id=user.pk).values("study_id")
    return Study.objects.filter(Q(owner=user) | Q(pk__in=shared))


def access_study_for_researcher(user, slug: str) -> Study:
    """A study the researcher may see and change, or 404 (never reveal others' studies)."""
    study = researcher_studies(user).filter(slug=slug).first()
    if study is None:
        raise Http404("No such study.")
    return study


def access_study_for_participant(user, slug: str) -> Study:
    """A live study (a closed one still shows its closing page); drafts only to managers.

    Qualification exams are not studies of their own to a participant: they are taken
    through the studies that require them.
    """
    study = Study.objects.filter(slug=slug, exam__isnull=True).first()
    if study is None or (study.status == Study.Status.DRAFT and not can_manage_study(user, study)):
        raise Http404("No such study.")
    return study


def public_kind_studies(kind: str):
    """The live, public studies of ``kind``: what a kind's own open pages (the game's
    categories) show. Nobody's account changes them, so this takes no user; the kind
    names itself (no module outside ``annotation/kinds/`` names a kind)."""
    return Study.objects.filter(kind=kind, status=Study.Status.LIVE, public=True)


def access_game_study(kind: str, slug: str) -> Study:
    """A category of the public game (``public_kind_studies`` of the game's ``kind``), or 404."""
    study = public_kind_studies(kind).filter(slug=slug).first()
    if study is None:
        raise Http404("No such game category.")
    return study


def access_assignment_for_participant(
    *, participant: Participant | None, study: Study, assignment_id
) -> Assignment:
    """The participant's own assignment in this study, or 404 (never someone else's)."""
    try:
        assignment_pk = int(assignment_id)
    except (TypeError, ValueError):
        raise Http404("No such page.") from None
    assignment = (
        Assignment.objects.select_related("item__study", "study")
        .filter(pk=assignment_pk, study=study, participant=participant)
        .first()
    )
    if participant is None or assignment is None:
        raise Http404("No such page.")
    return assignment


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
    the order below.
    """
    page_id = _row_id(assignment_id) if assignment_id is not None and not exam else None
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
    return sql_rows.Statement(
        "roft_step_gate",
        f"SELECT {sql_rows.joined_columns(STEP_TABLES)} "  # noqa: S608 - the models' own columns
        f"FROM {Enrollment._meta.db_table} e "
        f"JOIN {Study._meta.db_table} s ON s.id = e.study_id "
        f"JOIN {Participant._meta.db_table} p ON p.id = e.participant_id "
        f"LEFT JOIN {Assignment._meta.db_table} a "
        "ON a.id = %s AND a.study_id = e.study_id AND a.participant_id = e.participant_id "
        f"LEFT JOIN {Item._meta.db_table} i ON i.id = a.item_id "
        f"WHERE e.participant_id = %s AND s.slug = %s AND NOT EXISTS "
        f"(SELECT 1 FROM {Exam._meta.db_table} x WHERE x.study_id = s.id)",
    )


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


def access_enrollment_for_researcher(user, study: Study, public_id: str) -> Enrollment:
    """A participant's enrollment in a study the researcher reaches, or 404.

    ``study`` must come from ``access_study_for_researcher``; the participant is found
    only through their enrollment in it, so other studies' participants stay invisible.
    """
    enrollment = (
        Enrollment.objects.select_related("participant", "study")
        .filter(study=study, participant__public_id=public_id)
        .first()
    )
    if enrollment is None or not researcher_studies(user).filter(pk=study.pk).exists():
        raise Http404("No such participant in this study.")
    return enrollment


def researcher_responses(user):
    """Responses in the studies a researcher reaches (none for anyone else), but the test
    runs of researchers trying them (``populations.not_a_test_q``)."""
    return Response.objects.filter(study__in=researcher_studies(user)).filter(not_a_test_q())


def researcher_jobs(user):
    """The one rule for who may see and cancel a job (jobs page, dashboard, API): jobs on a
    reachable study, or study-less jobs the user started (admins: all). A job on a study no
    longer shared with its starter is gone for them, as the study is."""
    if not is_researcher(user):
        return Job.objects.none()
    if user.is_superuser:
        return Job.objects.all()
    return Job.objects.filter(Q(study__in=researcher_studies(user)) | Q(study=None, created_by=user))


def access_job_for_researcher(user, job_id) -> Job:
    """A job the researcher may see and cancel, or 404."""
    job = researcher_jobs(user).select_related("study").filter(pk=whole_number(job_id)).first()
    if job is None:
        raise Http404("No such job.")
    return job


def access_job_to_cancel(user, job_id) -> Job:
    """A job the user may stop: one they see (``access_job_for_researcher``, else 404) that
    they started, or whose study they may change (``can_change_study``; 403 otherwise: a
    researcher a study is shared with stops their own jobs, not its owner's)."""
    job = access_job_for_researcher(user, job_id)
    if job.created_by_id != user.pk and not (job.study is not None and can_change_study(user, job.study)):
        raise NotAllowed("Only the job's starter or the study's owner (or an admin) may stop it.")
    return job


def access_export_for_researcher(user, study: Study, export_id) -> Job:
    """An export job of a reachable study, or 404 (exports are jobs of kind ``export``)."""
    job = researcher_jobs(user).filter(pk=whole_number(export_id), study=study, kind="export").first()
    if job is None:
        raise Http404("No such export.")
    return job


def _row_id(value) -> int | None:
    """``value`` as a row id (a positive 64-bit integer), else None."""
    number = whole_number(value)
    return number if number is not None and 0 < number < 2**63 else None
