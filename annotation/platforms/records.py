"""A study's record on the platforms (``PlatformStudy``): the one getter, for both platforms'
calls, their jobs and the platforms page."""

from __future__ import annotations

from annotation.models import PlatformStudy, Study

NOT_YET_ON = {
    "prolific": "The study is not on Prolific yet (publish it first).",
    "mturk": "The study is not on MTurk yet (publish it first).",
}


def not_yet_on(study: Study, platform: str) -> str | None:
    """Why a review (or anything needing the platform's copy of the study) cannot run yet:
    the study was never published there; None once it was. The calls refuse with it, and
    the confirmation page says it before Confirm (U4)."""
    record = PlatformStudy.objects.filter(study=study).first()
    published = record is not None and bool(
        record.prolific_study_id if platform == "prolific" else record.mturk_hit_id
    )
    return None if published else NOT_YET_ON[platform]


def platform_study(study: Study) -> PlatformStudy:
    """The study's platform record, created on first use (race-safe: ``get_or_create`` on the
    one-to-one key)."""
    return PlatformStudy.objects.get_or_create(study=study)[0]
