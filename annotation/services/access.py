"""Who may do what, and the only ways a view fetches objects on someone's behalf.

Permission predicates (``is_researcher``, ``can_*``) and the ``access_*`` fetches that
apply them (404 where an object is not the user's to see, 403 where it is seen but not
theirs to change). A participant's step passes the gate, ``gate.require_live_step``, which
reads its rows with one statement and applies the rules here.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Q
from django.http import Http404

from annotation.errors import NotAllowed
from annotation.models import Assignment, Enrollment, Job, Participant, Response, Study
from annotation.numbers import whole_number

from .populations import not_a_test_q

RESEARCHERS_GROUP = "researchers"


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
