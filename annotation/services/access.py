"""The only ways a view fetches objects on someone's behalf; permissions live here."""

from __future__ import annotations

from django.db.models import Q
from django.http import Http404

from annotation.models import Assignment, Enrollment, Job, Participant, Response, Study

RESEARCHERS_GROUP = "researchers"


def is_researcher(user) -> bool:
    """Researchers are staff users or members of the 'researchers' group; admins are superusers."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    return user.is_staff or user.is_superuser or user.groups.filter(name=RESEARCHERS_GROUP).exists()


def can_manage_study(user, study: Study) -> bool:
    """Owners, researchers it is shared with, and admins manage a study (preview drafts, data)."""
    if not (user and user.is_authenticated):
        return False
    if user.is_superuser or study.owner_id == user.pk:
        return True
    return is_researcher(user) and study.shared_with.filter(pk=user.pk).exists()


def can_share_study(user, study: Study) -> bool:
    """Only the owner and admins decide who else may reach a study."""
    return bool(user and user.is_authenticated and (user.is_superuser or study.owner_id == user.pk))


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


def access_study_for_participant(slug: str, user=None) -> Study:
    """A live study (a closed one still shows its closing page); drafts only to managers.

    Qualification exams are not studies of their own to a participant: they are taken
    through the studies that require them.
    """
    study = Study.objects.filter(slug=slug, exam__isnull=True).first()
    if study is None or (study.status == Study.Status.DRAFT and not can_manage_study(user, study)):
        raise Http404("No such study.")
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
    """Responses in the studies a researcher reaches (none for anyone else)."""
    return Response.objects.filter(study__in=researcher_studies(user))


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
    job = researcher_jobs(user).select_related("study").filter(pk=_int_or_none(job_id)).first()
    if job is None:
        raise Http404("No such job.")
    return job


def access_export_for_researcher(user, study: Study, export_id) -> Job:
    """An export job of a reachable study, or 404 (exports are jobs of kind ``export``)."""
    job = researcher_jobs(user).filter(pk=_int_or_none(export_id), study=study, kind="export").first()
    if job is None:
        raise Http404("No such export.")
    return job


def _int_or_none(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
