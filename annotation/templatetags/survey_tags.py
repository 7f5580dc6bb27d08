"""Template helpers for the survey kinds: form values on a re-shown page, durations in
words, and worked examples rendered read-only with the kind's own template."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.utils.translation import ngettext

from annotation.services.authoring.guides import example_context
from annotation.services.participation.authenticity import records_signals

register = template.Library()


@register.filter
def current_choice(row: dict, submitted: dict | None) -> str:
    """The value a radio group shows as chosen: the worked example's answer, or what the
    participant had picked when the page comes back with an error."""
    if row.get("selected"):
        return str(row["selected"])
    values = (submitted or {}).get(row.get("field", ""), [])
    return values[0] if values else ""


@register.filter
def chosen_values(question: dict, submitted: dict | None) -> list[str]:
    """The values a question with several inputs shows as chosen: the worked example's
    answer, or what the participant had posted when the page comes back with an error."""
    if question.get("selected"):
        return [str(value) for value in question["selected"]]
    return list((submitted or {}).get(question.get("field", ""), []))


@register.filter
def duration_words(seconds) -> str:
    """90 → 'about 2 minutes', 40 → 'about 40 seconds' (in the page's language)."""
    try:
        seconds = int(seconds)
    except (TypeError, ValueError):
        return ""
    if seconds < 90:
        return ngettext("about %(count)d second", "about %(count)d seconds", seconds) % {"count": seconds}
    minutes = round(seconds / 60)
    return ngettext("about %(count)d minute", "about %(count)d minutes", minutes) % {"count": minutes}


@register.filter
def session_length(study) -> str:
    """How long a session of ``study`` is, as its kind words it: '10 pages', '5 passages'."""
    return study.task_kind.session_length(study.items_per_session)


@register.filter
def records_authenticity(study) -> bool:
    """Whether the study's pages collect the authenticity signals (and its consent names them)."""
    return records_signals(study)


@register.filter
def any_records_authenticity(game_studies) -> bool:
    """Whether any of the game's studies (``GameStudy`` rows) collects the signals."""
    return any(records_signals(row.study) for row in game_studies)


@register.simple_tag
def render_example(study, example: dict, number: int) -> SafeString:
    """One worked example of ``study``: its item, read-only, with the answer we give."""
    context = example_context(study, example, prefix=f"ex{number}")
    return render_to_string(study.task_kind.template, context)
