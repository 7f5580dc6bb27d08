"""Template helpers for the researchers' pages and the top bar."""

from django import template
from django.conf import settings

from annotation.platforms.money import as_currency
from annotation.services.access import can_invite_researchers as _can_invite_researchers
from annotation.services.access import is_researcher as _is_researcher
from annotation.shares import percent as _percent

register = template.Library()


@register.filter
def is_researcher(user) -> bool:
    """``{% if user|is_researcher %}``: staff, the researchers group, or admins."""
    return _is_researcher(user)


@register.filter
def can_invite_researchers(user) -> bool:
    """``{% if user|can_invite_researchers %}``: staff and admins."""
    return _can_invite_researchers(user)


@register.filter
def currency(cents) -> str:
    """``{{ cost_cents|currency }}``: cents as the amount a researcher types (``150`` → ``1.50``,
    ``platforms.money.as_currency``); "?" for an amount not known (not a whole number of cents,
    as a platform's reply may hold)."""
    return as_currency(cents) if isinstance(cents, int) and not isinstance(cents, bool) else "?"


@register.filter
def percent(part, whole) -> int:
    """0-100, for progress bars; 0 when there is nothing to do."""
    return _percent(part, whole)


@register.simple_tag
def poll_every(what: str) -> str:
    """htmx's trigger for a part of a page that asks the server again while something runs:
    ``hx-trigger="{% poll_every "job" %}"`` (``JOB_POLL_SECONDS``) or ``"progress"``
    (``PROGRESS_POLL_SECONDS``), so the intervals are settings, not literals in four templates."""
    seconds = {"job": settings.JOB_POLL_SECONDS, "progress": settings.PROGRESS_POLL_SECONDS}[what]
    return f"every {seconds:g}s"


@register.filter
def answer_parts(answer) -> list[tuple[str, str]]:
    """An answer as (field, plain text) pairs for review tables, whatever the kind:
    ``{"label": "supports", "evidence": [0, 2]}`` → ``[("label", "supports"), ("evidence", "0, 2")]``."""
    if not isinstance(answer, dict):
        return [("answer", _plain(answer))]
    return [(str(key), _plain(value)) for key, value in answer.items()]


def _plain(value) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_plain(inner)}" for key, inner in value.items())
    if isinstance(value, list):
        return ", ".join(_plain(inner) for inner in value) or "(none)"
    return "—" if value is None else str(value)
