"""The languages participant pages are shown in: a study's ``language``, checked against the
site's ``LANGUAGES`` here and nowhere else, and switched on for the study's pages."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import translation

DEFAULT_LANGUAGE = "en"


def language_codes() -> list[str]:
    """The codes a study may name: those the site ships a catalogue for (``LANGUAGES``)."""
    return [code for code, _ in settings.LANGUAGES]


def check_study_language(value: str) -> None:
    """A study's ``language`` must be one the site translates its pages into; any other
    value would show participants English pages while the researcher expects theirs."""
    if value not in language_codes():
        raise ValidationError(
            "Not a language of this site; choose one of: %(codes)s.",
            code="invalid_choice",
            params={"codes": ", ".join(language_codes())},
        )


def study_language(study) -> translation.override:
    """Show a study's participant pages in its language for the request's duration (a
    context manager: the language in force before comes back afterwards, so nothing leaks
    to the next request handled by the same thread)."""
    return translation.override(study.language or DEFAULT_LANGUAGE)
