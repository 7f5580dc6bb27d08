"""A study's record on the platforms (``PlatformStudy``): the one getter, for both platforms'
calls, their jobs and the platforms page."""

from __future__ import annotations

from annotation.models import PlatformStudy, Study


def platform_study(study: Study) -> PlatformStudy:
    """The study's platform record, created on first use (race-safe: ``get_or_create`` on the
    one-to-one key)."""
    return PlatformStudy.objects.get_or_create(study=study)[0]
