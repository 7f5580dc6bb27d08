"""Checks shared by several kinds: lists of rows that need different ids, and answers that
rate several things on one page (Likert, plausibility): ``{"ratings": {id: value}}`` with
every id rated, or some ids for gold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext
from rest_framework import serializers

from annotation.numbers import whole_number

from .base import Score


def check_unique(rows: list[dict], key: str, field: str, message: str) -> list[dict]:
    """Rows (as plain dicts) whose ``key`` values must all differ; else an error on ``field``."""
    rows = [dict(row) for row in rows]
    values = [row[key] for row in rows]
    repeated = next((value for value in values if values.count(value) > 1), None)
    if repeated is not None:
        raise serializers.ValidationError({field: [message.format(repeated)]})
    return rows


def check_ratings(
    ratings: Any,
    wanted: dict[str, str],
    check_value: Callable[[Any], Any],
    *,
    partial: bool = False,
) -> dict[str, Any]:
    """Validate ``ratings`` against ``wanted`` (id → how a message names it).

    ``check_value`` turns one raw value into the stored one or raises ``ValueError`` with
    the message. Errors land on ``ratings.<id>``; ids not on the page are errors too.
    With ``partial`` (gold, worked examples) ids may be left out, but not all of them.
    The result keeps the page's order of ids.
    """
    if not isinstance(ratings, dict):
        raise serializers.ValidationError({"ratings": ["Expected an object: id → rating."]})
    errors: dict[str, list[str]] = {}
    for key in ratings:
        if key not in wanted:
            errors[str(key)] = [gettext("Not something this page asks to rate.")]
    checked = {}
    for key, name in wanted.items():
        if key not in ratings:
            if not partial:
                errors[key] = [gettext("Rate %(name)s.") % {"name": name}]
            continue
        try:
            checked[key] = check_value(ratings[key])
        except ValueError as exc:
            errors[key] = [
                gettext("%(name)s: %(problem)s") % {"name": f"{name[0].upper()}{name[1:]}", "problem": exc}
            ]
    if errors:
        raise serializers.ValidationError({"ratings": errors})
    if not checked:
        raise serializers.ValidationError({"ratings": [gettext("Give at least one rating.")]})
    return checked


def integer_in_range(low: int, high: int) -> Callable[[Any], int]:
    """A check for whole numbers ``low``..``high`` (digit strings from a form are accepted)."""

    def check(value: Any) -> int:
        number = whole_number(value)
        if number is None:
            raise ValueError(
                gettext("a rating is a whole number from %(low)d to %(high)d.") % {"low": low, "high": high}
            )
        if not low <= number <= high:
            raise ValueError(
                gettext("%(value)d is outside the scale (%(low)d to %(high)d).")
                % {"value": number, "low": low, "high": high}
            )
        return number

    return check


def one_of(options: list[str]) -> Callable[[Any], str]:
    """A check for one of a fixed set of strings."""

    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(gettext("choose one of %(options)s.") % {"options": ", ".join(options)})
        return value

    return check


def score_ratings(item, answer: dict) -> Score | None:
    """Against gold ratings (some ids): correct when every one given matches exactly."""
    if not item.gold:
        return None
    expected = item.gold["ratings"]
    mismatched = [key for key, value in expected.items() if answer["ratings"].get(key) != value]
    return Score(correct=not mismatched, details={"mismatched": mismatched})
