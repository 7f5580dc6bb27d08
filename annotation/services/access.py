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
from annotation.models import Assignment, Enrollment, Job, Participant, Response, Study, StudyShare
from annotation.numbers import whole_number

from .populations import not_a_test_q

RESEARCHERS_GROUP = "researchers"


# The membership read once per user object (a request's user, as Django keeps a user's
# permissions in ``_perm_cache``): a research page asked it four to six times, a query each.
_MEMBERSHIP = "_researchers_group_member"


def is_researcher(user) -> bool:
    """Researchers are staff users or members of the 'researchers' group; admins are superusers."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    if user.is_staff or user.is_superuser:
        return True
    if not hasattr(user, _MEMBERSHIP):
        setattr(user, _MEMBERSHIP, user.groups.filter(name=RESEARCHERS_GROUP).exists())
    return getattr(user, _MEMBERSHIP)


def forget_membership(user) -> None:
    """After ``user``'s groups changed: ``is_researcher`` reads them again."""
    if hasattr(user, _MEMBERSHIP):
        delattr(user, _MEMBERSHIP)


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


# What each role may do with a study: the one table every page, API endpoint, job and
# export asks (through the ``can_*`` predicates below). ``reach``: the study is listed and
# its overview opens; ``dashboard``: its reports; ``read``: its items, answers, participants
# (pseudonyms), exports and analysis jobs; ``platform_ids``: raw crowd ids; ``crowd``: the
# platforms' calls (publish, review, bonuses, tokens, audit log), participants' flags,
# exclusions and returns, and opening or closing it; ``change``: its settings, questions,
# items, adjudications, test runs, deletions and the jobs that write into it; ``share``:
# who else reaches it. The owner (``Study.owner``), a co-owner share and admins are ``owner``.
ROLE_ABILITIES: dict[str, frozenset[str]] = {
    StudyShare.Role.OWNER: frozenset(
        {"reach", "dashboard", "read", "platform_ids", "crowd", "change", "share"}
    ),
    StudyShare.Role.OPERATOR: frozenset({"reach", "dashboard", "read", "platform_ids", "crowd"}),
    StudyShare.Role.ANALYST: frozenset({"reach", "dashboard", "read"}),
    StudyShare.Role.VIEWER: frozenset({"reach", "dashboard"}),
}

ROLE_HELP: dict[str, str] = {
    StudyShare.Role.OWNER: "everything the owner does, sharing included",
    StudyShare.Role.ANALYST: "reads everything but platform ids, changes nothing",
    StudyShare.Role.OPERATOR: "runs the crowd side: publish, review, bonuses, flags; no edits to questions",
    StudyShare.Role.VIEWER: "the dashboard only",
}


def study_role(user, study: Study | None) -> str | None:
    """The user's role on the study: ``owner`` for admins and the owner (while a
    researcher), a share's role for those it is shared with, None for anyone else.

    Kept on the study object for the request that fetched it (a page asks several
    ``can_*`` of one study: one lookup, not one per question)."""
    if study is None:
        return None
    known = study.__dict__.setdefault("_roles_seen", {})
    key = getattr(user, "pk", None)
    if key not in known:
        known[key] = _role(user, study)
    return known[key]


def _role(user, study: Study) -> str | None:
    if not is_researcher(user):
        return None
    if user.is_superuser or study.owner_id == user.pk:
        return StudyShare.Role.OWNER
    return StudyShare.objects.filter(study=study, user=user).values_list("role", flat=True).first()


def can(user, study: Study | None, ability: str) -> bool:
    """Whether ``user``'s role on ``study`` includes ``ability`` (``ROLE_ABILITIES``)."""
    role = study_role(user, study)
    return role is not None and ability in ROLE_ABILITIES[role]


def abilities(user, study: Study) -> frozenset[str]:
    """Every ability the user has on the study, for pages that show or hide controls."""
    role = study_role(user, study)
    return ROLE_ABILITIES[role] if role is not None else frozenset()


def can_manage_study(user, study: Study) -> bool:
    """Those who reach the study in the researcher pages and the API (``researcher_studies``:
    its owner, researchers it is shared with in any role, admins) manage it: they preview
    drafts, and their own visits are tests. An owner who left the researchers group manages
    nothing. What else they may do is their role's (``ROLE_ABILITIES``)."""
    return researcher_studies(user).filter(pk=study.pk).exists()


def is_test_visit(user, study: Study) -> bool:
    """Someone who manages the study taking part in it is trying it: their enrollment is a
    test (``Enrollment.is_test``), whose answers count nowhere (``populations``)."""
    return can_manage_study(user, study)


NOT_THE_OWNER = "Your role on this study does not include this; its owner (or an admin) may do it."


def can_change_study(user, study: Study) -> bool:
    """The one rule for every change of a study's contents and every deletion: its settings,
    config and items (the builder, PATCH, a study file loaded over it, an items upload), its
    researchers' test runs discarded, its adjudications, and the jobs that write into it
    (``JobKind.analysis`` says which only read): owners and admins (``change``)."""
    return can(user, study, "change")


def require_study_change(user, study: Study) -> None:
    """``can_change_study``, or ``NotAllowed`` (403; the study itself is the user's to see)."""
    if not can_change_study(user, study):
        raise NotAllowed(NOT_THE_OWNER)


def require_ability(user, study: Study, ability: str) -> None:
    """``can(user, study, ability)``, or ``NotAllowed`` (403; the study is the user's to see)."""
    if not can(user, study, ability):
        raise NotAllowed(NOT_THE_OWNER)


def access_study_with(user, slug: str, ability: str) -> Study:
    """A study the user reaches and whose ``ability`` their role includes: 404 where they do
    not reach it (never reveal others' studies), 403 where their role does not include it."""
    study = access_study_for_researcher(user, slug)
    require_ability(user, study, ability)
    return study


def access_study_to_change(user, slug: str) -> Study:
    """A study the user may change (``change``): 404 unreached, 403 for the other roles."""
    return access_study_with(user, slug, "change")


def access_study_to_read(user, slug: str) -> Study:
    """A study whose items, answers, participants and exports the user may read (``read``):
    404 unreached, 403 where their role shows the dashboard only (viewer)."""
    return access_study_with(user, slug, "read")


def can_read_study(user, study: Study) -> bool:
    """Items, answers, participants (pseudonyms), exports and analysis jobs (``read``)."""
    return can(user, study, "read")


def can_share_study(user, study: Study) -> bool:
    """Owners and admins decide who else may reach a study, and in which role."""
    return can(user, study, "share")


def can_see_platform_ids(user, study: Study | None) -> bool:
    """The one rule for raw crowd-platform ids (``platform_worker_id``): owners, operators
    and admins see them, on the participants pages, in the API, in the crowd platform lists
    and in exports (analysts see pseudonyms only; a job with no study: admins only). Those
    who pay and review the crowd workers need the ids."""
    if study is None:
        return bool(is_researcher(user) and user.is_superuser)
    return can(user, study, "platform_ids")


def can_use_platforms(user, study: Study | None) -> bool:
    """Who may publish, review and pay a study's crowd workers through the platforms' APIs,
    store a platform token for it, read its audit log, mark its participants and open or
    close it: owners, operators and admins (``crowd``)."""
    if study is None:
        return bool(is_researcher(user) and user.is_superuser)
    return can(user, study, "crowd")


def can_mark_participants(user, study: Study) -> bool:
    """Flags, exclusions, blocks and returns of the study's participants: the crowd side."""
    return can(user, study, "crowd")


def can_change_status(user, study: Study) -> bool:
    """Opening and closing a study: owners, operators and admins (``status_ability``)."""
    return can(user, study, "crowd")


def status_ability(wanted: str) -> str:
    """What a move to ``wanted`` takes: back to draft is the way to edit the questions, so
    the owners'; opening and closing run the crowd side (operators too)."""
    return "change" if wanted == Study.Status.DRAFT else "crowd"


def researcher_studies(user):
    """The studies a researcher may see and change: their own and those shared with them
    (all of them for admins)."""
    if not is_researcher(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    shared = StudyShare.objects.filter(user_id=user.pk).values("study_id")
    return Study.objects.filter(Q(owner=user) | Q(pk__in=shared))


def readable_studies(user):
    """The studies whose answers, items, participants and jobs the user may read
    (``read``): every study they reach but those shared with them as viewers."""
    roles_that_read = [role for role, can_do in ROLE_ABILITIES.items() if "read" in can_do]
    studies = researcher_studies(user)
    if not is_researcher(user) or user.is_superuser:
        return studies
    read_shares = StudyShare.objects.filter(user_id=user.pk, role__in=roles_that_read).values("study_id")
    return studies.filter(Q(owner=user) | Q(pk__in=read_shares))


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
    if enrollment is None or not readable_studies(user).filter(pk=study.pk).exists():
        raise Http404("No such participant in this study.")
    return enrollment


def researcher_responses(user):
    """Responses in the studies a researcher reaches (none for anyone else), but the test
    runs of researchers trying them (``populations.not_a_test_q``)."""
    return Response.objects.filter(study__in=readable_studies(user)).filter(not_a_test_q())


def researcher_jobs(user):
    """The one rule for who may see and cancel a job (jobs page, dashboard, API): jobs on a
    reachable study, or study-less jobs the user started (admins: all). A job on a study no
    longer shared with its starter is gone for them, as the study is."""
    if not is_researcher(user):
        return Job.objects.none()
    if user.is_superuser:
        return Job.objects.all()
    return Job.objects.filter(Q(study__in=readable_studies(user)) | Q(study=None, created_by=user))


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
