"""Authenticity signals: how an answer's free text got into its fields, never the text.

The page's script (``static/js/authenticity.js``) counts, per text field, keystrokes,
characters typed, pastes and pasted characters (those after the page was hidden too), and
for the page the time it was hidden and the time to the first input; it sends them as one
JSON summary in the form's ``authenticity`` field. The browser is not trusted: ``read_signals``
keeps only known keys of fields the form posted, as whole numbers clamped to bounds, and
measures each field's length itself from the posted text; anything malformed is recorded as
``{"missing": true}`` and never fails the answer. ``strong_signs`` is the rule
(docs/authenticity.md), with the thresholds of ``Thresholds.from_settings``.

Only answers given on a page are read: a model rater's or an imported answer has none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.conf import settings
from django.http import QueryDict

from annotation.models import Study

FIELD = "authenticity"  # the form field the page's script fills
VERSION = 1
MAX_SUMMARY = 16_000  # characters of JSON: more is not a summary from our script
MAX_FIELDS = 50
MAX_COUNT = 1_000_000  # a count above this is clamped (no page takes a million keystrokes)
MAX_MS = 7 * 24 * 3600 * 1000  # a week, in milliseconds
FIELD_COUNTS = ("keys", "typed", "pastes", "pasted", "pasted_after_hidden")
MISSING = {"missing": True}

# The signs, in the order they are checked and listed.
PASTED, UNTYPED, HIDDEN_PASTE = "pasted", "untyped", "hidden_paste"


@dataclass(frozen=True)
class Thresholds:
    """The rule's thresholds (settings ``AUTHENTICITY_*``, docs/deploy.md)."""

    min_chars: int = 20
    paste_share: float = 0.5
    keystroke_ratio: float = 0.5
    hidden_seconds: float = 5.0

    @classmethod
    def from_settings(cls) -> Thresholds:
        return cls(
            min_chars=settings.AUTHENTICITY_MIN_CHARS,
            paste_share=settings.AUTHENTICITY_PASTE_SHARE,
            keystroke_ratio=settings.AUTHENTICITY_KEYSTROKE_RATIO,
            hidden_seconds=settings.AUTHENTICITY_HIDDEN_SECONDS,
        )


def records_signals(study: Study) -> bool:
    """Whether the study's pages collect signals: the study setting (on by default) and a
    free-text question to collect them on (the consent page names them then)."""
    return study.authenticity_signals and study.task_kind.asks_free_text(study.config or {})


def signals_from_form(study: Study, post: QueryDict) -> dict | None:
    """The signals of an answer posted from a page of ``study``, classified: None when the
    study records none."""
    if not records_signals(study):
        return None
    signals = read_signals(post.get(FIELD), {name: post.get(name, "") for name in post})
    if signals.get("missing"):
        return signals
    return {**signals, "signs": strong_signs(signals, Thresholds.from_settings())}


def read_signals(summary: str | None, posted: dict[str, str]) -> dict:
    """The browser's ``summary`` (JSON text) bounded and checked: per field named in it and
    posted (``posted``: field name → posted text), the counts clamped to [0, MAX_COUNT] and
    ``chars``, the posted text's length as the server sees it; for the page ``hidden_ms``,
    ``hidden_count`` and ``first_input_ms`` (None: no input) clamped likewise. ``MISSING``
    when there is no summary or it is not one (wrong shape, wrong types, too big)."""
    if not summary or len(summary) > MAX_SUMMARY:
        return dict(MISSING)
    try:
        data = json.loads(summary)
    except ValueError:
        return dict(MISSING)
    if not isinstance(data, dict) or data.get("v") != VERSION or not isinstance(data.get("fields"), dict):
        return dict(MISSING)
    if len(data["fields"]) > MAX_FIELDS:
        return dict(MISSING)
    fields = {}
    for name, counts in data["fields"].items():
        if name not in posted or not isinstance(counts, dict):
            continue  # a field the form did not post is no field of this answer
        read = {key: _count(counts.get(key, 0), MAX_COUNT) for key in FIELD_COUNTS}
        values = {key: value for key, value in read.items() if value is not None}
        if len(values) < len(FIELD_COUNTS):
            return dict(MISSING)
        values["pasted_after_hidden"] = min(values["pasted_after_hidden"], values["pasted"])
        fields[name] = {"chars": len(posted[name]), **values}
    hidden_ms = _count(data.get("hidden_ms", 0), MAX_MS)
    hidden_count = _count(data.get("hidden_count", 0), MAX_COUNT)
    first = data.get("first_input_ms")
    first_input_ms = None if first is None else _count(first, MAX_MS)
    if hidden_ms is None or hidden_count is None or (first is not None and first_input_ms is None):
        return dict(MISSING)
    return {
        "v": VERSION,
        "fields": fields,
        "hidden_ms": hidden_ms,
        "hidden_count": hidden_count,
        "first_input_ms": first_input_ms,
    }


def _count(value: object, ceiling: int) -> int | None:
    """A whole number from the browser, clamped to [0, ceiling]; None when it is not one
    (a boolean, a string, a fraction, NaN)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        return None
    return max(0, min(value, ceiling))


def strong_signs(signals: dict, thresholds: Thresholds) -> list[str]:
    """The strong signs that an answer's text was not typed on its page (docs/authenticity.md).

    Over each text field of at least ``min_chars`` characters: ``pasted``, pasted characters
    are ``paste_share`` of the text or more; ``untyped``, fewer keystrokes than
    ``keystroke_ratio`` per character of text (text that arrived without typing, as a paste
    the page did not see or a script inserts it); ``hidden_paste``, ``min_chars`` characters or
    more pasted after the page had been hidden, which it was for ``hidden_seconds`` in all.
    Missing signals give no sign (nothing is known)."""
    if signals.get("missing"):
        return []
    signs: set[str] = set()
    hidden_long = signals["hidden_ms"] >= thresholds.hidden_seconds * 1000 and signals["hidden_count"] > 0
    for counts in signals["fields"].values():
        chars = counts["chars"]
        if chars < thresholds.min_chars:
            continue
        if counts["pasted"] >= thresholds.paste_share * chars:
            signs.add(PASTED)
        if counts["keys"] < thresholds.keystroke_ratio * chars:
            signs.add(UNTYPED)
        if hidden_long and counts["pasted_after_hidden"] >= thresholds.min_chars:
            signs.add(HIDDEN_PASTE)
    return [sign for sign in (PASTED, UNTYPED, HIDDEN_PASTE) if sign in signs]


def has_strong_sign(signals: dict | None) -> bool:
    """Whether stored ``signals`` carry a strong sign (``Response.strong_sign``)."""
    return bool(signals and signals.get("signs"))
