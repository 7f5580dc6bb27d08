"""The languages participant pages are shown in: a study's ``language``, checked against the
site's ``LANGUAGES`` here and nowhere else, and switched on for the study's pages."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import HttpResponse
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


def in_study_language(study, respond: Callable[[], HttpResponse]) -> HttpResponse:
    """``respond()`` with the study's language switched on: the page it renders, the
    messages it stores and its ``Content-Language``. The language in force before comes back
    afterwards, so nothing leaks to the next request the same thread handles."""
    with translation.override(study.language or DEFAULT_LANGUAGE):
        response = respond()
        response.headers.setdefault("Content-Language", translation.get_language())
    return response
