"""Who else reaches a study, and in which role (``StudyShare``); what each role may do is
``access.ROLE_ABILITIES``. Only those whose role includes ``share`` (owners, admins) change it."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.errors import InputError, NotAllowed
from annotation.models import Study, StudyShare
from annotation.services.access import can_share_study, is_researcher

from .exam_settings import detach_exam_from_unpermitted_studies

NOT_A_SHARER = "Only the study's owner or an admin may change who it is shared with."


def study_shares(study: Study):
    """The study's shares, by username."""
    return StudyShare.objects.filter(study=study).select_related("user").order_by("user__username")


def share_study(user, study: Study, *, username: str, role: str) -> StudyShare:
    """Share ``study`` with the researcher ``username`` in ``role`` (a share they already
    have changes role). Refused, naming the field and changing nothing: an unknown role, a
    name that is no researcher's, the study's own owner; 403 to anyone but its owners."""
    if not can_share_study(user, study):
        raise NotAllowed(NOT_A_SHARER)
    errors: dict[str, list[str]] = {}
    if role not in StudyShare.Role.values:
        errors["role"] = [f"Choose one of {', '.join(StudyShare.Role.values)}."]
    name = (username or "").strip()
    target = get_user_model().objects.filter(username=name).first()
    if not name:
        errors["username"] = ["Give the researcher's username."]
    elif target is None or not is_researcher(target):
        errors["username"] = [f"No researcher named {name!r}."]
    elif target.pk == study.owner_id:
        errors["username"] = [f"{name} owns this study already."]
    if errors:
        raise InputError(errors)
    with transaction.atomic():
        share, _ = StudyShare.objects.update_or_create(study=study, user=target, defaults={"role": role})
        detach_exam_from_unpermitted_studies(study)
    return share


def unshare_study(user, study: Study, *, username: str) -> bool:
    """Stop sharing ``study`` with ``username``; False where it was not shared with them."""
    if not can_share_study(user, study):
        raise NotAllowed(NOT_A_SHARER)
    with transaction.atomic():
        deleted = StudyShare.objects.filter(study=study, user__username=username).delete()[0]
        detach_exam_from_unpermitted_studies(study)
    return bool(deleted)
