"""The ``spans`` question type: error-span annotation (ESA / MQM, Kocmi et al., WMT 2024).

A participant marks character ranges of one of the item's passages, each with a category
from the study's list and a severity, and (when the question asks for it) gives the passage
an overall score from 0 to 100. The answer is stored as

    {"spans": [{"start": 4, "end": 9, "category": "accuracy", "severity": "major"}, ...],
     "score": 70}

with ``start`` / ``end`` character offsets (Python ``str`` indices, ``end`` exclusive) into
the passage's text as stored. ``questions`` dispatches the definition and the value here;
this module owns every rule of the type (the page, the model answers and the reports read
the definition it normalises).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

from django.utils.translation import gettext

from annotation.numbers import whole_number

from .invalid import Invalid

KEYS = {"categories", "severities", "weights", "overlap", "score"}
MAX_SPANS = 200
MAX_CATEGORIES = 30
MAX_SEVERITIES = 6
LABEL_LIMIT = 60
MAX_WEIGHT = 1000
SCORE_LOW, SCORE_HIGH = 0, 100  # the ESA overall score
# MQM's usual severity weights (Freitag et al. 2021; the ESA paper's MQM-style score): a
# severity named so takes its weight when the definition gives none.
STANDARD_WEIGHTS = {"neutral": 0, "minor": 1, "major": 5, "critical": 25}
DEFAULT_SEVERITIES = ["minor", "major"]
SPAN_KEYS = {"start", "end", "category", "severity"}
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


# --- the definition ---------------------------------------------------------------------------


def check_definition(raw: dict) -> dict:
    """``categories`` (required), ``severities`` (default minor, major), ``weights`` (one per
    severity; by default the standard weights of the severities' names), ``overlap`` and
    ``score`` (true or false, default false). ``Invalid("field: message")`` otherwise."""
    categories = _labels(raw.get("categories"), "categories", 1, MAX_CATEGORIES)
    severities = _labels(raw.get("severities", DEFAULT_SEVERITIES), "severities", 1, MAX_SEVERITIES)
    weights = _weights(raw.get("weights"), severities)
    flags = {}
    for name in ("overlap", "score"):
        value = raw.get(name, False)
        if not isinstance(value, bool):
            raise Invalid(f"{name}: true or false.")
        flags[name] = value
    return {"categories": categories, "severities": severities, "weights": weights, **flags}


def _labels(raw: Any, name: str, low: int, high: int) -> list[str]:
    if not isinstance(raw, list) or not low <= len(raw) <= high:
        raise Invalid(f"{name}: a list of {low} to {high} texts.")
    if not all(isinstance(x, str) and x.strip() and len(x) <= LABEL_LIMIT for x in raw):
        raise Invalid(f"{name}: each is a text of 1 to {LABEL_LIMIT} characters.")
    labels = [x.strip() for x in raw]
    if len(set(labels)) != len(labels):
        raise Invalid(f"{name}: a name is listed twice.")
    return labels


def _weights(raw: Any, severities: list[str]) -> list[int | float]:
    """One non-negative weight per severity, in the severities' order (numbers, or their text
    as a form writes them)."""
    if raw is None or raw == []:
        unknown = [s for s in severities if s.lower() not in STANDARD_WEIGHTS]
        if unknown:
            raise Invalid(
                f"weights: give one weight per severity ({unknown[0]!r} has no standard weight; "
                f"the standard ones are {', '.join(f'{k} {v}' for k, v in STANDARD_WEIGHTS.items())})."
            )
        return [STANDARD_WEIGHTS[s.lower()] for s in severities]
    if not isinstance(raw, list) or len(raw) != len(severities):
        raise Invalid(f"weights: one number per severity ({len(severities)}), in the same order.")
    weights: list[int | float] = []
    for value in raw:
        number = _number(value)
        if number is None or not 0 <= number <= MAX_WEIGHT:
            raise Invalid(f"weights: each a number from 0 to {MAX_WEIGHT}.")
        weights.append(int(number) if float(number).is_integer() else number)
    return weights


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


# --- an answer --------------------------------------------------------------------------------


def check_value(question: dict, raw: Any, text: str) -> dict:
    """One answer, as stored: spans sorted by (start, end, category, severity), each inside
    ``text``, not empty and not only spaces, of a listed category and severity, none twice,
    none overlapping another unless the question allows it; the score a whole number from
    0 to 100 when the question asks for one (and absent when it does not)."""
    if not isinstance(raw, dict) or set(raw) - {"spans", "score"} or "spans" not in raw:
        raise Invalid(gettext('expected {"spans": [...]} with a list of marked spans.'))
    spans = raw["spans"]
    if not isinstance(spans, list) or len(spans) > MAX_SPANS:
        raise Invalid(gettext("spans: a list of at most %(count)d marked spans.") % {"count": MAX_SPANS})
    checked = sorted(
        (_check_span(question, span, text, n) for n, span in enumerate(spans, start=1)),
        key=lambda s: (s["start"], s["end"], s["category"], s["severity"]),
    )
    _check_together(question, checked)
    value: dict[str, Any] = {"spans": checked}
    if question["score"]:
        score = whole_number(raw.get("score"))
        if score is None or not SCORE_LOW <= score <= SCORE_HIGH:
            raise Invalid(
                gettext("score: give the passage an overall score, a whole number from %(low)d to %(high)d.")
                % {"low": SCORE_LOW, "high": SCORE_HIGH}
            )
        value["score"] = score
    elif raw.get("score") is not None:
        raise Invalid(gettext("score: this question asks for no overall score."))
    return value


def _check_span(question: dict, span: Any, text: str, n: int) -> dict:
    where = gettext("span %(n)d") % {"n": n}
    if isinstance(span, dict) and "text" in span and "start" not in span:  # a model's quote, not found
        raise Invalid(
            gettext("%(where)s: the text %(quote)r is not in the passage.")
            % {"where": where, "quote": str(span["text"])[:80]}
        )
    if not isinstance(span, dict) or set(span) != SPAN_KEYS:
        raise Invalid(
            gettext("%(where)s: an object with start, end, category and severity.") % {"where": where}
        )
    start, end = whole_number(span["start"]), whole_number(span["end"])
    if start is None or end is None or not 0 <= start < end <= len(text):
        raise Invalid(
            gettext(
                "%(where)s: start and end are character offsets with 0 ≤ start < end ≤ %(length)d "
                "(the passage's length)."
            )
            % {"where": where, "length": len(text)}
        )
    if not text[start:end].strip():
        raise Invalid(gettext("%(where)s: it holds only spaces.") % {"where": where})
    if span["category"] not in question["categories"]:
        raise Invalid(
            gettext("%(where)s: the category is one of: %(options)s.")
            % {"where": where, "options": ", ".join(question["categories"])}
        )
    if span["severity"] not in question["severities"]:
        raise Invalid(
            gettext("%(where)s: the severity is one of: %(options)s.")
            % {"where": where, "options": ", ".join(question["severities"])}
        )
    return {"start": start, "end": end, "category": span["category"], "severity": span["severity"]}


def _check_together(question: dict, spans: list[dict]) -> None:
    """No span twice (the same range marked the same way); no overlaps unless allowed."""
    for before, after in itertools.pairwise(spans):
        if before == after:
            raise Invalid(gettext("the same span is marked twice."))
    if question["overlap"]:
        return
    for before, after in itertools.pairwise(spans):
        if after["start"] < before["end"]:
            raise Invalid(
                gettext("spans may not overlap in this study (characters %(start)d to %(end)d).")
                % {"start": after["start"], "end": min(before["end"], after["end"])}
            )


def from_form(spans_field: str | None, score_field: str | None) -> dict | str | None:
    """The page's two fields (the marked spans as JSON, the score as typed) as an answer
    value for ``check_value``; None when the page sent neither; the text itself where the
    JSON does not read (``check_value`` then names what it expected)."""
    if spans_field is None and not score_field:
        return None
    try:
        spans = json.loads(spans_field) if spans_field else []
    except ValueError:
        return spans_field
    value: dict[str, Any] = {"spans": spans}
    if score_field and score_field.strip():
        number = whole_number(score_field)
        value["score"] = number if number is not None else score_field
    return value


# --- the page ---------------------------------------------------------------------------------


def tokens(text: str, value: dict | None) -> list[dict]:
    """The passage cut into words, punctuation marks and runs of spaces, each with its
    character offsets (the page selects whole tokens, and sends the offsets as they are
    here: no browser's string indices are trusted); ``marked`` when a span of ``value``
    covers it (a worked example, a review)."""
    spans = (value or {}).get("spans", [])
    out = []
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        out.append(
            {
                "start": start,
                "end": end,
                "text": match.group(),
                "space": match.group().isspace(),
                "marked": any(s["start"] < end and start < s["end"] for s in spans),
            }
        )
    return out


def spans_shown(question: dict, text: str, value: dict | None) -> list[dict]:
    """The marked spans of a worked example or a review, with the text each covers."""
    return [{**s, "text": text[s["start"] : s["end"]]} for s in (value or {}).get("spans", [])]


# --- model answers ----------------------------------------------------------------------------

MODEL_FORM = (
    'Answer with JSON only, on one line: {"spans": [{"text": the words of the error, copied '
    'exactly from the passage, "category": one of %(categories)s, "severity": one of '
    "%(severities)s}, ...]%(score)s}. Give an empty list when there is no error. A text that "
    'occurs more than once is its first occurrence unless you add "occurrence": 2 (3, ...); '
    '"start" and "end" (character offsets, end exclusive) may be given instead of "text".'
)


def model_instructions(question: dict) -> str:
    """What a model is asked for a spans question (docs/formats.md, "Spans from models")."""
    score = ', "score": your overall score of the passage from 0 to 100' if question["score"] else ""
    return MODEL_FORM % {
        "categories": json.dumps(question["categories"], ensure_ascii=False),
        "severities": json.dumps(question["severities"], ensure_ascii=False),
        "score": score,
    }


def from_model_output(output: str, text: str) -> Any:
    """A model's reply as an answer value for ``check_value``: the first JSON object in it,
    each span quoted by ``text`` (the ``occurrence``-th match in the passage, the first by
    default) turned into offsets. Anything it cannot read is handed on as it is (the reply
    itself, or a span without offsets), so that the kind's check refuses it with its reason
    and the refusal is recorded; nothing is guessed."""
    found = _first_object(output)
    if not isinstance(found, dict) or not isinstance(found.get("spans"), list):
        return output.strip()[:200]
    spans = [_offsets(span, text) for span in found["spans"]]
    return {**{k: v for k, v in found.items() if k == "score"}, "spans": spans}


def _first_object(output: str) -> Any:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", output):
        try:
            return decoder.raw_decode(output[match.start() :])[0]
        except ValueError:
            continue
    return None


def _offsets(span: Any, text: str) -> Any:
    """A quoted span as ``{start, end, category, severity}``; a span already in offsets, or
    one whose quote is not in the passage, as it is (the check names what is wrong)."""
    if not isinstance(span, dict) or "text" not in span or "start" in span:
        return span
    quote, occurrence = span.get("text"), whole_number(span.get("occurrence", 1))
    rest = {k: v for k, v in span.items() if k not in ("text", "occurrence")}
    if not isinstance(quote, str) or not quote or occurrence is None or occurrence < 1:
        return span  # refused: the check names the quote it cannot place
    start = -1
    for _ in range(occurrence):
        start = text.find(quote, start + 1)
        if start < 0:
            return span  # not in the passage: refused, naming the quote
    return {**rest, "start": start, "end": start + len(quote)}


def model_choice(value: dict, text: str) -> str:
    """A stored answer written as a model would write it (a few-shot example)."""
    spans = [
        {"text": text[s["start"] : s["end"]], "category": s["category"], "severity": s["severity"]}
        for s in value.get("spans", [])
    ]
    return json.dumps(
        {"spans": spans, **({"score": value["score"]} if "score" in value else {})}, ensure_ascii=False
    )
