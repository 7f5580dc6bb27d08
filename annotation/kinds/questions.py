"""The typed questions of a questionnaire study: their definitions in the study's config,
the passages an item carries, and the answers, checked one question at a time.

One rule per place: ``check_question`` is the only check of a definition, ``check_value``
of one answer value, ``visible`` of whether a question is asked (``show_if``); the kind's
serializers, its page and its reports all call these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext
from rest_framework import serializers

from annotation.numbers import whole_number
from annotation.text import split_sentences

from . import spans
from .invalid import Invalid

TYPES = ("scale", "choice", "multi", "pick", "sentences", "text", "spans")
PICK_MODES = ("best", "best_worst", "pairwise")
# A question id is a key of the answer and the name of an export column (``answer.<id>``).
ID_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
PASSAGE_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,60}$")
TIE = "tie"  # a pairwise answer that prefers neither passage (when the question allows it)
MAX_QUESTIONS = 40
MAX_OPTIONS = 30
MAX_PASSAGES = 26  # shown under the letters A..Z
MAX_SENTENCES = 200
TEXT_LIMIT = 20000
DEFAULT_TEXT_MAX = 2000
QUESTION_TEXT_LIMIT = 2000
OPTION_LIMIT = 200
# What each type takes beyond the keys every question has.
COMMON_KEYS = {"id", "type", "text", "required", "show_if"}
TYPE_KEYS = {
    "scale": {"points", "labels", "per"},
    "choice": {"options", "per"},
    "multi": {"options"},
    "pick": {"pick", "tie"},
    "sentences": {"passage"},
    "text": {"min_length", "max_length"},
    "spans": {"passage", *spans.KEYS},
}


@dataclass(frozen=True)
class SettingInput:
    """How a form writes one setting: ``number`` a whole number, ``lines`` a list with one
    text per line, ``yes_no`` true or false, ``choice`` one of ``choices``."""

    kind: str
    choices: tuple[str, ...] = ()


# Each setting of ``TYPE_KEYS`` and how it is written. The builder's form and its question
# block read this with ``TYPE_KEYS``, so a setting or a type declared here appears there. A
# setting means the same in every type that takes it (``options``).
SETTING_INPUTS = {
    "points": SettingInput("number"),
    "labels": SettingInput("lines"),
    "options": SettingInput("lines"),
    "pick": SettingInput("choice", PICK_MODES),
    "tie": SettingInput("yes_no"),
    "passage": SettingInput("number"),
    "min_length": SettingInput("number"),
    "max_length": SettingInput("number"),
    "per": SettingInput("choice", ("item", "passage")),
    "categories": SettingInput("lines"),
    "severities": SettingInput("lines"),
    "weights": SettingInput("lines"),
    "overlap": SettingInput("yes_no"),
    "score": SettingInput("yes_no"),
}
# What a setting left out of a definition is (the checks fill these in; the builder shows them).
DEFAULTS: dict[str, Any] = {
    "points": 5,
    "labels": [],
    "tie": False,
    "passage": 1,
    "min_length": 0,
    "max_length": DEFAULT_TEXT_MAX,
    "per": "item",
    "categories": [],
    "severities": spans.DEFAULT_SEVERITIES,
    "weights": [],
    "overlap": False,
    "score": False,
}
# ``per: "passage"``: the question is asked once under each passage of the page and its
# answer is ``{passage id: value}`` (never keyed by the letter shown); without it (``item``,
# the default and every study file written before) it is one answer about the whole page.
PER_ITEM, PER_PASSAGE = "item", "passage"
# Types whose answers another question's ``show_if`` may look at (values a page can compare).
CONDITION_TYPES = ("scale", "choice", "multi")


# --- definitions ---------------------------------------------------------------------------


def check_questions(raw: Any) -> list[dict]:
    """The study's ``questions``: each checked, ids unique, ``show_if`` on an earlier one.
    Errors land on ``questions[<index>]`` (and the field at fault), all of them at once."""
    if not isinstance(raw, list) or not raw:
        raise serializers.ValidationError({"questions": ["Give a list of at least one question."]})
    if len(raw) > MAX_QUESTIONS:
        raise serializers.ValidationError({"questions": [f"At most {MAX_QUESTIONS} questions."]})
    checked: list[dict] = []
    errors: dict[int, dict[str, list[str]]] = {}
    for index, question in enumerate(raw):
        try:
            checked.append(check_question(question, checked))
        except Invalid as exc:
            field, _, message = str(exc).partition(": ")
            errors[index] = {field: [message]}
    if errors:
        raise serializers.ValidationError({"questions": [errors.get(i, {}) for i in range(len(raw))]})
    return checked


def check_question(raw: Any, earlier: list[dict]) -> dict:
    """One definition, normalised (defaults filled); ``Invalid("field: message")`` else."""
    if not isinstance(raw, dict):
        raise Invalid("type: a question is an object with an id, a type and a text.")
    qid = raw.get("id")
    if not isinstance(qid, str) or not ID_PATTERN.match(qid):
        raise Invalid("id: a letter, then letters, digits or _ (at most 40): it names an export column.")
    if any(q["id"] == qid for q in earlier):
        raise Invalid(f"id: the id {qid!r} is used twice.")
    kind = raw.get("type")
    if kind not in TYPES:
        raise Invalid(f"type: one of {', '.join(TYPES)}.")
    unknown = sorted(set(raw) - COMMON_KEYS - TYPE_KEYS[kind])
    if unknown:
        raise Invalid(f"{unknown[0]}: not a setting of a {kind} question.")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > QUESTION_TEXT_LIMIT:
        raise Invalid(f"text: the question's text (Markdown), 1 to {QUESTION_TEXT_LIMIT} characters.")
    required = raw.get("required", True)
    if not isinstance(required, bool):
        raise Invalid("required: true or false.")
    question = {"id": qid, "type": kind, "text": text, "required": required}
    question.update(_TYPE_CHECKS[kind](raw))
    per = raw.get("per", PER_ITEM)
    if per not in (PER_ITEM, PER_PASSAGE):
        raise Invalid(f"per: {PER_ITEM!r} (one answer for the page) or {PER_PASSAGE!r} (one per passage).")
    if per == PER_PASSAGE:
        if raw.get("show_if") is not None:
            raise Invalid("show_if: a question asked per passage is always asked.")
        question["per"] = PER_PASSAGE  # left out for "item": a file written before reads the same
    if raw.get("show_if") is not None:
        question["show_if"] = _check_show_if(raw["show_if"], earlier)
    return question


def per_passage(question: dict) -> bool:
    """Whether ``question`` is asked under each passage (its answer keyed by passage id)."""
    return question.get("per") == PER_PASSAGE


def _check_scale(raw: dict) -> dict:
    points = raw.get("points", DEFAULTS["points"])
    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= 11:
        raise Invalid("points: a whole number from 2 to 11.")
    labels = raw.get("labels", DEFAULTS["labels"])
    if not isinstance(labels, list) or not all(isinstance(x, str) and len(x) <= 60 for x in labels):
        raise Invalid("labels: a list of texts of at most 60 characters.")
    if len(labels) not in (0, 2, points):
        raise Invalid(f"labels: give 2 (the ends) or {points} (every point).")
    return {"points": points, "labels": list(labels)}  # never the shared default


def _check_options(raw: dict) -> dict:
    options = raw.get("options")
    if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
        raise Invalid(f"options: a list of 2 to {MAX_OPTIONS} texts.")
    if not all(isinstance(x, str) and x.strip() and len(x) <= OPTION_LIMIT for x in options):
        raise Invalid(f"options: each option is a text of 1 to {OPTION_LIMIT} characters.")
    if len(set(options)) != len(options):
        raise Invalid("options: an option is listed twice.")
    return {"options": list(options)}


def _check_pick(raw: dict) -> dict:
    mode = raw.get("pick")
    if mode not in PICK_MODES:
        raise Invalid(f"pick: one of {', '.join(PICK_MODES)}.")
    tie = raw.get("tie", DEFAULTS["tie"])
    if not isinstance(tie, bool) or (tie and mode != "pairwise"):
        raise Invalid("tie: true or false, and only for pick: pairwise.")
    return {"pick": mode, "tie": tie}


def _check_sentences(raw: dict) -> dict:
    passage = raw.get("passage", DEFAULTS["passage"])
    if isinstance(passage, bool) or not isinstance(passage, int) or not 1 <= passage <= MAX_PASSAGES:
        raise Invalid("passage: which of the item's passages (1 = the first), a whole number.")
    return {"passage": passage}


def _check_text(raw: dict) -> dict:
    low, high = raw.get("min_length", DEFAULTS["min_length"]), raw.get("max_length", DEFAULTS["max_length"])
    for name, value in (("min_length", low), ("max_length", high)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TEXT_LIMIT:
            raise Invalid(f"{name}: a whole number from 0 to {TEXT_LIMIT}.")
    if high < max(low, 1):
        raise Invalid("max_length: at least 1 and at least min_length.")
    return {"min_length": low, "max_length": high}


_TYPE_CHECKS = {
    "scale": _check_scale,
    "choice": _check_options,
    "multi": _check_options,
    "pick": _check_pick,
    "sentences": _check_sentences,
    "text": _check_text,
    "spans": lambda raw: {**_check_sentences(raw), **spans.check_definition(raw)},
}


def _check_show_if(raw: Any, earlier: list[dict]) -> dict:
    """``{"question": id, "equals": value}`` or ``{"question": id, "in": [values]}`` →
    ``{"question": id, "in": [values]}``, on an earlier scale, choice or multi question."""
    if not isinstance(raw, dict) or "question" not in raw or len(set(raw) & {"equals", "in"}) != 1:
        raise Invalid(
            'show_if: {"question": an earlier question\'s id, "equals": a value} (or "in": values).'
        )
    if set(raw) - {"question", "equals", "in"}:
        raise Invalid("show_if: only question and equals (or in).")
    target = next((q for q in earlier if q["id"] == raw["question"]), None)
    if target is None:
        raise Invalid(f"show_if: {raw['question']!r} is not a question before this one.")
    if target["type"] not in CONDITION_TYPES:
        raise Invalid(f"show_if: a condition looks at a {', '.join(CONDITION_TYPES)} question.")
    if per_passage(target):
        raise Invalid(f"show_if: {target['id']!r} is asked per passage; a condition looks at one answer.")
    values = raw["in"] if "in" in raw else [raw["equals"]]
    if not isinstance(values, list) or not values:
        raise Invalid("show_if: in is a list of at least one value.")
    checked = []
    for value in values:
        try:
            if target["type"] == "multi":
                checked += check_value(target, [value], None)
            else:
                checked.append(check_value(target, value, None))
        except Invalid as exc:
            raise Invalid(f"show_if: {exc}") from None
    return {"question": target["id"], "in": checked}


# --- item payloads ---------------------------------------------------------------------------


def check_passages_for(questions: list[dict], passages: list[dict]) -> None:
    """An item's passages against the study's questions: enough of them for each pick mode,
    the sentences questions' passages present and splittable. Raises ``Invalid``."""
    count = len(passages)
    for question in questions:
        name = f"question {question['id']!r}"
        mode = question.get("pick")
        if mode == "pairwise" and count != 2:
            raise Invalid(f"passages: {name} compares exactly two passages; this item has {count}.")
        if mode == "best" and count < 2:
            raise Invalid(f"passages: {name} picks among passages; give at least two.")
        if mode == "best_worst" and count < 3:
            raise Invalid(f"passages: {name} picks the best and the worst; give at least three.")
        if question["type"] == "spans" and question["passage"] > count:
            raise Invalid(
                f"passages: {name} marks spans of passage {question['passage']}; this item has {count}."
            )
        if question["type"] == "sentences":
            if question["passage"] > count:
                raise Invalid(
                    f"passages: {name} marks sentences of passage {question['passage']}; "
                    f"this item has {count}."
                )
            sentences = split_sentences(passages[question["passage"] - 1]["text"])
            if not 1 <= len(sentences) <= MAX_SENTENCES:
                raise Invalid(f"passages: {name}'s passage must hold 1 to {MAX_SENTENCES} sentences.")


def sentences_of(question: dict, passages: list[dict]) -> list[str]:
    """The sentences a ``sentences`` question offers: its passage, split (the same rule on
    the page, in validation and in the reports)."""
    return split_sentences(passages[question["passage"] - 1]["text"])


# --- answers ---------------------------------------------------------------------------------


def visible(question: dict, values: Mapping[str, Any], by_id: Mapping[str, dict]) -> bool:
    """Whether ``question`` is asked, given the answers so far: no ``show_if``, or the
    question it looks at is asked and its answer is (or, for multi, holds) a listed value."""
    condition = question.get("show_if")
    if not condition:
        return True
    target = by_id[condition["question"]]
    if not visible(target, values, by_id):
        return False
    value = values.get(target["id"])
    chosen = value if isinstance(value, list) else [value]
    return any(v in condition["in"] for v in chosen)


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def check_answer(questions: list[dict], passages: list[dict], answer: dict, *, partial: bool) -> dict:
    """``{question id: value}``: every asked required question answered, hidden ones absent,
    each value right for its type. ``partial`` (gold): questions may be left out, not all.
    Errors are keyed by question id and name the question in words."""
    by_id = {q["id"]: q for q in questions}
    errors: dict[str, list[str]] = {
        str(key): [gettext("Not a question of this study.")] for key in answer if key not in by_id
    }
    checked: dict[str, Any] = {}
    for question in questions:
        qid, raw, name = question["id"], answer.get(question["id"]), title_of(question)
        if per_passage(question) and isinstance(raw, dict):  # a passage left blank is not answered
            raw = {key: value for key, value in raw.items() if not is_empty(value)}
        if not visible(question, checked, by_id):
            if qid in answer:
                errors[qid] = [
                    gettext("%(question)s: not asked with the answers given above it; leave it out.")
                    % {"question": name}
                ]
            continue
        if is_empty(raw):
            if question["required"] and not partial:
                errors[qid] = [gettext("%(question)s: please answer this question.") % {"question": name}]
            elif qid in answer and question["type"] in ("multi", "sentences") and raw == []:
                checked[qid] = []  # asked, and nothing chosen: an answer of its own
            continue
        try:
            if per_passage(question):
                checked[qid] = _check_per_passage(question, raw, passages, partial=partial)
            else:
                checked[qid] = check_value(question, raw, passages)
        except Invalid as exc:
            errors[qid] = [gettext("%(question)s: %(problem)s") % {"question": name, "problem": exc}]
    if not errors and partial and not checked:
        errors["non_field_errors"] = [gettext("Answer at least one question.")]
    if errors:
        raise serializers.ValidationError(errors)
    return checked


def _check_per_passage(question: dict, raw: Any, passages: list[dict], *, partial: bool) -> dict:
    """A per-passage answer: ``{passage id: value}`` over the item's passages, each value
    checked as the question's type checks one; a required question (outside gold) answers
    every passage. Stored in the file's passage order."""
    if not isinstance(raw, dict):
        raise Invalid(gettext("expected one answer per passage, by passage id."))
    ids = [p["id"] for p in passages]
    unknown = sorted(str(key) for key in raw if key not in ids)
    if unknown:
        raise Invalid(gettext("“%(passage)s” is not a passage of this page.") % {"passage": unknown[0]})
    given = {pid: raw[pid] for pid in ids if pid in raw and not is_empty(raw[pid])}
    missing = [pid for pid in ids if pid not in given]
    if missing and question["required"] and not partial:
        raise Invalid(gettext("please answer it for every passage."))
    return {pid: check_value(question, value, passages) for pid, value in given.items()}


def check_value(question: dict, raw: Any, passages: list[dict] | None) -> Any:
    """One answer value, as stored; ``Invalid`` with the reason otherwise. ``passages``
    None: a value checked without an item (a ``show_if`` in the config)."""
    kind = question["type"]
    if kind == "scale":
        return _whole_number(raw, 1, question["points"], "choose a point of the scale")
    if kind == "choice":
        if raw not in question["options"]:
            raise Invalid(
                gettext("choose one of: %(options)s.") % {"options": ", ".join(question["options"])}
            )
        return raw
    if kind == "multi":
        chosen = _distinct_list(raw, "options")
        if not set(chosen) <= set(question["options"]):
            raise Invalid(gettext("choose among: %(options)s.") % {"options": ", ".join(question["options"])})
        return [option for option in question["options"] if option in chosen]
    if kind == "pick":
        return _check_pick_value(question, raw, [p["id"] for p in passages or []])
    if kind == "sentences":
        count = len(sentences_of(question, passages or []))
        indices = [
            _whole_number(x, 0, count - 1, "a sentence number") for x in _distinct_list(raw, "sentences")
        ]
        if len(set(indices)) != len(indices):
            raise Invalid(gettext("a sentence is listed twice."))
        return sorted(indices)
    if kind == "spans":
        return spans.check_value(question, raw, (passages or [])[question["passage"] - 1]["text"])
    return _check_text_value(question, raw)


def _check_pick_value(question: dict, raw: Any, ids: list[str]) -> Any:
    mode = question["pick"]
    if mode == "best_worst":
        if not isinstance(raw, dict) or set(raw) != {"most", "least"}:
            raise Invalid(gettext("pick the best and the worst passage."))
        if raw["most"] not in ids or raw["least"] not in ids:
            raise Invalid(gettext("the best and the worst must be passages of this page."))
        if raw["most"] == raw["least"]:
            raise Invalid(gettext("the best and the worst must be different passages."))
        return {"most": raw["most"], "least": raw["least"]}
    if mode == "pairwise" and question["tie"] and raw == TIE:
        return TIE
    if raw not in ids:
        raise Invalid(
            gettext("pick one of the passages of this page (or a tie).")
            if question.get("tie")
            else gettext("pick one of the passages of this page.")
        )
    return raw


def _check_text_value(question: dict, raw: Any) -> str:
    if not isinstance(raw, str):
        raise Invalid("expected a text.")
    text = raw.strip()
    low, high = question["min_length"], question["max_length"]
    if len(text) < low:
        raise Invalid(
            gettext("write at least %(low)d characters (%(length)d so far).")
            % {"low": low, "length": len(text)}
        )
    if len(text) > high:
        raise Invalid(
            gettext("write at most %(high)d characters (%(length)d given).")
            % {"high": high, "length": len(text)}
        )
    return text


def _whole_number(raw: Any, low: int, high: int, what: str) -> int:
    number = whole_number(raw)
    if number is None or not low <= number <= high:
        shown = (low + 1, high + 1) if what == "a sentence number" else (low, high)
        raise Invalid(f"{what}: a whole number from {shown[0]} to {shown[1]}.")
    return number


def _distinct_list(raw: Any, what: str) -> list:
    if not isinstance(raw, list):
        raise Invalid(f"expected a list of {what}.")
    if any(isinstance(x, list | dict) for x in raw) or len({str(x) for x in raw}) != len(raw):
        raise Invalid(f"list each of the {what} once.")
    return raw


def title_of(question: dict) -> str:
    """How an error message names a question: its text's first line, without Markdown
    marks, shortened, in quotes."""
    first = question["text"].strip().splitlines()[0]
    plain = re.sub(r"[*_`#>\[\]]", "", first).strip()
    return f"“{plain[:70]}…”" if len(plain) > 70 else f"“{plain}”"
