"""Template helpers for the researchers' pages and the top bar."""

from django import template

from annotation.services.access import is_researcher as _is_researcher

register = template.Library()


@register.filter
def is_researcher(user) -> bool:
    """``{% if user|is_researcher %}``: staff, the researchers group, or admins."""
    return _is_researcher(user)


@register.filter
def percent(part, whole) -> int:
    """0-100, for progress bars; 0 when there is nothing to do."""
    return min(100, round(100 * part / whole)) if whole else 0
