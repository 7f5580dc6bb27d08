"""One rounding of a share for every progress figure (pages, admin, jobs)."""

from __future__ import annotations


def percent(part: float, whole: float) -> int:
    """A share as a whole percent, capped at 100 (more answers than wanted is 100 %), 0 when
    there is nothing to do."""
    return min(100, round(100 * part / whole)) if whole else 0
