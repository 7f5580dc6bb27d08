"""What researchers change about their studies and start on them (pages and API call these):
the study's settings, its test runs, its jobs and exports. A participant's return (their own or
the platform's list) is ``participation.exits``."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.errors import InputError, NotAllowed, checked
from annotation.models import Assignment, Enrollment, Job, Response, Study, StudyVersion
from annotation.services.access import (
    can,
    can_share_study,
    is_researcher,
    readable_studies,
)
from annotation.services.exports.export import ExportParameters, check_export_request
from annotation.services.jobs import JOB_KINDS, start_job
from annotation.services.participation.adaptive import check_stop_systems
from annotation.services.participation.assignment import release_participant_assignments

from .exam_settings import detach_exam_from_unpermitted_studies
from .human_subset import FIELD as HUMAN_SUBSET
from .human_subset import set_human_subset
from .validation import check_exam_study, check_kind_and_config, kind_named
from .versions import checked_plan, record_study_version


def update_study(
    study: Study, *, user, changes: dict, source: str = StudyVersion.Source.API, reason: str = ""
) -> Study:
    """Apply already-shaped field changes; a new ``kind`` or ``config`` is checked by the
    kind against the study's items (``validation.check_kind_and_config``), a new
    ``analysis_plan`` by ``versions.checked_plan``; a new ``human_subset`` draws the items anew
    (``human_subset.set_human_subset``, which refuses it once people have answered). The change
    is a new version (``versions.record_study_version``): once the plan is frozen, only with
    ``reason``. All or nothing: a refusal changes nothing."""
    changes = dict(changes)
    shared = changes.pop("shared_with", None)
    subset = changes.pop(HUMAN_SUBSET, None)
    if "analysis_plan" in changes:
        changes["analysis_plan"] = checked_plan(changes["analysis_plan"])
    if "kind" in changes or "config" in changes:
        kind = kind_named(changes.get("kind", study.kind))
        changes["config"] = check_kind_and_config(
            study, kind, changes.get("config", study.config), kept_items=study.items.all()
        )
        if study.items.exists():  # a study without items yet may name systems still to come
            check_stop_systems(changes["config"], study.items.values_list("provenance__system", flat=True))
    if changes.get("public"):
        check_exam_study(study, public=True)
    users = _researchers_named(shared) if shared is not None else None
    if users is not None and not can_share_study(user, study):
        raise NotAllowed("Only the study's owner or an admin may change who it is shared with.")
    with transaction.atomic():
        for name, value in changes.items():
            setattr(study, name, value)
        study.save()
        if subset is not None:
            set_human_subset(study=study, raw=subset)
        if users is not None:
            study.shared_with.set(users)
            detach_exam_from_unpermitted_studies(study)
        record_study_version(study, user=user, source=source, reason=reason)
    return study


def _researchers_named(usernames: list[str]):
    users = list(get_user_model().objects.filter(username__in=usernames))
    found = {user.username for user in users if is_researcher(user)}
    missing = [name for name in usernames if name not in found]
    if missing:
        raise InputError({"shared_with": [f"No researcher named {name!r}." for name in missing]})
    return users


def test_enrollments(study: Study):
    """The study's test enrollments (researchers who manage it trying it, ``is_test``)."""
    return Enrollment.objects.filter(study=study, is_test=True).select_related("participant")


def discard_test_answers(study: Study) -> int:
    """Delete the researchers' test runs of the study: their held pages go back (their
    slots freed, ``release_participant_assignments``), then their answers, pages and
    enrollments are deleted. Returns how many answers were deleted. Real participants'
    rows are untouched; test answers never counted, so the quota does not move."""
    deleted = 0
    with transaction.atomic():
        for enrollment in test_enrollments(study).select_for_update(of=("self",)):
            participant = enrollment.participant
            release_participant_assignments(participant=participant, study=study)
            deleted += (
                Response.objects.filter(participant=participant, study=study)
                .delete()[1]
                .get(Response._meta.label, 0)
            )
            Assignment.objects.filter(participant=participant, study=study).delete()
            enrollment.delete()
    return deleted


def start_job_for_researcher(*, user, kind: str, study_slug: str | None, parameters: dict) -> Job:
    """Start any registered job kind on a study the user reaches (or none)."""
    study = None
    if study_slug:
        study = readable_studies(user).filter(slug=study_slug).first()
        if study is None:
            raise InputError({"study": [f"No study {study_slug!r} that you can reach."]})
    # Raw crowd ids: the study's owner and admins only, for every job kind that can include them.
    include_ids = bool((parameters or {}).get("include_platform_ids"))
    check_export_request(user, study, include_platform_ids=include_ids)
    spec = JOB_KINDS.get(kind)
    if study is not None and spec is not None and not can(user, study, spec.ability):
        raise NotAllowed(f"Your role on this study does not include starting a {kind} job on it.")
    # Paths on the workers: inside the configured folders, and the user's own or shared ones
    # (``check_new_job`` calls ``check_worker_paths`` for every job started for a user).
    return start_job(kind=kind, parameters=parameters, study=study, user=user)


def start_export(*, user, study: Study, parameters: dict) -> Job:
    """Validate an export request (raw platform ids: owner and admins only) and start its job."""
    values = checked(ExportParameters.Serializer, parameters)
    check_export_request(user, study, include_platform_ids=values["include_platform_ids"])
    return start_job(kind="export", parameters=values, study=study, user=user)
