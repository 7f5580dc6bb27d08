"""A qualification exam's settings, as a study file writes them: the ``exam`` block of an exam
study, the ``qualification`` a study requires, and who may require whose exam. Taking the
exam is ``participation.exams``."""

from __future__ import annotations

from django.db.models import Q
from rest_framework import serializers

from annotation.errors import InputError, checked
from annotation.kinds.base import StrictSerializer
from annotation.models import Exam, Item, Study, StudyVersion
from annotation.services.access import can_manage_study

from .versions import record_study_version

# Why a study stopped requiring its exam without its owner's doing (recorded with the version).
EXAM_WITHDRAWN = "The qualification exam it required is no longer shared with its owner."


class ExamFields(StrictSerializer):
    pass_mark = serializers.IntegerField(min_value=1)
    attempts = serializers.IntegerField(min_value=1, max_value=10, default=2)
    training = serializers.BooleanField(default=False)


# --- loading ---------------------------------------------------------------------------


def check_exam_block(raw, *, slug: str, items: list[dict], fields: dict) -> dict | None:
    """The ``exam`` block of a study file: a pass mark the exam can reach, never listed
    publicly (it is taken through other studies). The rules on each exam item (gold, no
    attention checks) are ``validation.validate_item``'s, checked with the file's items."""
    existing = Exam.objects.filter(study__slug=slug).first()
    if raw is None:
        if existing is not None and existing.required_by.exists():
            raise InputError({"exam": ["Studies require this exam; its file must keep the 'exam' block."]})
        return None
    block = checked(ExamFields, raw, place="exam")
    count = _exam_item_count(slug, items)
    errors = check_exam(pass_mark=block["pass_mark"], item_count=count, public=bool(fields.get("public")))
    if "pass_mark" in errors:
        errors["exam.pass_mark"] = errors.pop("pass_mark")
    if errors:
        raise InputError(errors)
    return block


def check_exam(*, pass_mark: int, item_count: int, public: bool) -> dict[str, list[str]]:
    """The rules on an exam as a whole, as errors (none: it may be saved). The study file,
    the API and the admin all ask this; the rules on each exam item are
    ``validation.validate_item``'s."""
    errors = {}
    if pass_mark > item_count:
        errors["pass_mark"] = [f"Higher than the number of exam items ({item_count})."]
    if public:
        errors["public"] = ["An exam is taken through the studies that require it; it cannot be public."]
    return errors


def _exam_item_count(slug: str, items: list[dict]) -> int:
    """Items after loading: the file's, plus those of the study the file does not mention."""
    in_file = {item["external_id"] for item in items}
    kept = Item.objects.filter(study__slug=slug).exclude(external_id__in=in_file)
    if kept.filter(Q(gold__isnull=True) | Q(is_attention_check=True)).exists():
        raise InputError(
            {"items": ["The study keeps attention checks or items without gold; an exam cannot have them."]}
        )
    return len(in_file) + kept.count()


def check_qualification(raw, *, slug: str, owner=None) -> Exam | None:
    """``qualification``: the slug of an exam study loaded before this file, that the study's
    owner may use (their own, one shared with them; any for an admin, or for a study without
    an owner, loaded by an operator). The loader, the API and the admin all check here.

    Another researcher's exam gets the same answer as no exam at all: the check neither lends
    their questions nor tells whether the slug exists.
    """
    if raw in (None, ""):
        return None
    if not isinstance(raw, str):
        raise InputError({"qualification": ["The slug of an exam study."]})
    if raw == slug:
        raise InputError({"qualification": ["A study cannot require itself."]})
    exam = Exam.objects.select_related("study").filter(study__slug=raw).first()
    if exam is None or (owner is not None and not can_manage_study(owner, exam.study)):
        raise InputError(
            {
                "qualification": [
                    f"No exam study {raw!r} that this study's owner can use; load its file"
                    " (with an 'exam' block) first, or ask its owner to share it."
                ]
            }
        )
    return exam


def detach_exam_from_unpermitted_studies(exam_study: Study) -> int:
    """After an exam study's sharing changed: the other researchers' studies that require it
    and whose owner may no longer use it (``check_qualification``'s rule) stop requiring it,
    so their participants are no longer asked its questions. Studies without an owner (loaded
    by an operator) keep it. Returns how many were detached."""
    exam = Exam.objects.filter(study=exam_study).first()
    if exam is None:
        return 0
    requiring = Study.objects.filter(qualification=exam).exclude(owner=None).select_related("owner")
    unpermitted = [study for study in requiring if not can_manage_study(study.owner, exam_study)]
    detached = Study.objects.filter(pk__in=[study.pk for study in unpermitted]).update(qualification=None)
    for study in unpermitted:  # each a new version (a deviation, if its plan is frozen: said why)
        study.qualification = None
        record_study_version(study, source=StudyVersion.Source.RULE, reason=EXAM_WITHDRAWN)
    return detached


def write_exam_settings(study: Study, block: dict | None) -> None:
    if block is None:
        Exam.objects.filter(study=study).delete()
        return
    Exam.objects.update_or_create(
        study=study,
        defaults={
            "pass_mark": block["pass_mark"],
            "attempts_allowed": block["attempts"],
            "training": block.get("training", False),
        },
    )


# --- taking an exam --------------------------------------------------------------------
