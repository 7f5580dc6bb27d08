"""The only ways a view fetches objects on someone's behalf; permissions live here."""

from __future__ import annotations

from django.http import Http404

from annotation.models import Assignment, Participant, Study

RESEARCHERS_GROUP = "researchers"


def is_researcher(user) -> bool:
    """Researchers are staff users or members of the 'researchers' group; admins are superusers."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    return user.is_staff or user.is_superuser or user.groups.filter(name=RESEARCHERS_GROUP).exists()


def can_manage_study(user, study: Study) -> bool:
    """Owners and admins manage a study (preview drafts, see its data)."""
    return bool(user and user.is_authenticated and (user.is_superuser or study.owner_id == user.pk))


def researcher_studies(user):
    """The studies a researcher may see and change: their own (all of them for admins)."""
    if not is_researcher(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(owner=user)


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
