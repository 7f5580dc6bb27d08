"""Whole numbers from text a person typed or a form posted, parsed in one place.

``int(text)`` is not a safe parser for such text: ``str.isdigit`` accepts superscripts
(``"²"``) that ``int`` then refuses, ``int`` raises ``ValueError`` above 4,300 digits, and a
number that parses can still be past what a database column holds (an ORM write of one wraps
or fails). Every form field, query parameter and answer that takes a whole number goes
through ``whole_number``, so odd text is "not a whole number" to every caller, never an
exception.
"""

from __future__ import annotations

import re
from typing import Any

from annotation.errors import InputError

# ASCII digits only, at most 18 of them: every such number fits a 64-bit column, and
# nothing a form takes (a scale point, a page, a count) is longer.
_WHOLE = re.compile(r"[+-]?[0-9]{1,18}")


def whole_number(raw: Any) -> int | None:
    """``raw`` as a whole number: an ``int`` (not a bool) as it is, or text of at most 18
    ASCII digits with an optional sign and surrounding spaces; None for anything else."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    text = raw.strip(" \t\r\n") if isinstance(raw, str) else ""
    return int(text) if _WHOLE.fullmatch(text) else None


def whole_number_within(raw: str, *, field: str, low: int, high: int) -> int:
    """``raw`` as a whole number in ``[low, high]``, for a field that must hold one (a
    publish's places and minutes); ``InputError`` under ``field`` for anything else."""
    number = whole_number(raw)
    if number is None:
        raise InputError({field: [f"A whole number from {low} to {high}, in digits 0-9."]})
    if not low <= number <= high:
        raise InputError({field: [f"{number} is out of range: from {low} to {high}."]})
    return number
