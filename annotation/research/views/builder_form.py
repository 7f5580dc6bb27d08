"""The builder page's form, both ways: posted fields → a study file's values (nothing checked
here beyond reading numbers and JSON: the kind and the study's serializers judge them), and a
study file → the values the page shows.

A question is a block of fields with the same names (``q_id``, ``q_type``, …), one block per
question in the page's order, so adding, removing and moving a question is the browser's work
(``static/js/builder.js``) and the posted lists say the order. Which settings each question
type has, and how each is written, is ``kinds.questions``' declaration (``TYPE_KEYS``,
``SETTING_INPUTS``), read here and by the block's template; nothing here names a type.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from django.db.models import Field
from django.http import QueryDict

from annotation.errors import InputError
from annotation.kinds.questions import DEFAULTS, SETTING_INPUTS, TYPE_KEYS, TYPES
from annotation.languages import check_study_language, language_codes
from annotation.models import Study
from annotation.numbers import whole_number
from annotation.services.authoring.builder import QUESTION_FORM_KIND
from annotation.services.authoring.item_files import (
    ALIASES,
    JSON_COLUMNS,
    PASSAGE_COLUMN,
    TEXT_COLUMNS,
    ColumnMap,
)
from annotation.services.authoring.study_fields import STUDY_SETTINGS
from annotation.services.web.json_input import BadJSON, read_json

TEXT_FIELDS = ("title", "description", "instructions", "consent")  # written, not set
SETTINGS = [name for name in STUDY_SETTINGS if name not in TEXT_FIELDS]
EXTRAS = ("examples", "faq")  # the parts of a study file the page holds as JSON
# A question block's fields: those every question has, then each type's settings.
QUESTION_FIELDS = ("id", "type", "text", "required", *SETTING_INPUTS, "show_if", "show_if_values")
# What a CSV column may hold (the builder's names for item_files' columns).
ROLES = {
    "": "not read",
    "id": "item id",
    "context": "context (shown above the passages)",
    "passage_text": "a passage's text",
    "passage_system": "a passage's system (hidden)",
    "attention_check": "attention check (true/false)",
    "gold": "gold answer (JSON)",
    "provenance": "provenance (JSON)",
    "explanation": "explanation",
    "payload": "the whole payload (JSON)",
}
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def setting_fields() -> list[dict]:
    """Each study setting the page offers, with the model's own help text and its input."""
    fields = []
    for name in SETTINGS:
        field = Study._meta.get_field(name)
        assert isinstance(field, Field)
        kind = field.get_internal_type()
        # A setting checked against the site's languages offers them (a study's ``language``).
        choices = language_codes() if check_study_language in field.validators else []
        widget = (
            "choice"
            if choices
            else "json"  # a design such as human_subset's, written as JSON
            if kind == "JSONField"
            else "bool"
            if "Boolean" in kind
            else "number"
            if kind in ("PositiveIntegerField", "FloatField")
            else "text"
        )
        fields.append(
            {
                "name": name,
                "label": name.replace("_", " ").capitalize(),
                "help": str(field.help_text),
                "widget": widget,
                "choices": choices,
                "nullable": field.null,
                "step": "any" if kind == "FloatField" else "1",
            }
        )
    return fields


# --- posted → study file ---------------------------------------------------------------------


@dataclass(frozen=True)
class Posted:
    """A posted form read: the study file's values, and what could not even be read."""

    data: dict
    errors: dict[str, list[str]]
    has_questions: bool


def study_file_from_post(post: QueryDict, *, kind: str, new: bool) -> Posted:
    """The study file the form spells (without items). ``new``: the slug is the form's."""
    errors: dict[str, list[str]] = {}
    data: dict[str, Any] = {"kind": kind}
    if new:
        data["slug"] = post.get("slug", "").strip()
        data["status"] = Study.Status.DRAFT
    for name in TEXT_FIELDS:
        if name in post:
            data[name] = str(post.get(name, "")).replace("\r\n", "\n")
    for field in setting_fields():
        if field["name"] in post:
            value = _setting(str(post.get(field["name"], "")).strip(), field)
            if value is not _LEFT_OUT:
                data[field["name"]] = value
    has_questions = "q_id" in post
    if has_questions:
        data["config"] = {"questions": questions_from_post(post)}
    elif "config_json" in post:
        data["config"] = _json_field(str(post.get("config_json", "")), "config", errors, empty={})
    if "extras_json" in post:
        extras = _json_field(str(post.get("extras_json", "")), "examples and FAQ", errors, empty={})
        if isinstance(extras, dict):
            data.update({key: value for key, value in extras.items() if key in EXTRAS})
            unknown = sorted(set(extras) - set(EXTRAS))
            if unknown:
                errors["examples and FAQ"] = [
                    f"Only {' and '.join(EXTRAS)} go here, not {', '.join(unknown)}."
                ]
    return Posted(data, errors, has_questions)


_LEFT_OUT = object()


def _setting(raw: str, field: dict) -> Any:
    """A setting as typed: blank is the default (null where the setting may be empty, an
    empty text for a text setting: a code or link cleared on an edit is cleared)."""
    if raw == "":
        if field["widget"] in ("text", "json"):
            return "" if field["widget"] == "text" else {}
        return None if field["nullable"] else _LEFT_OUT
    if field["widget"] == "json":
        try:
            return read_json(raw)
        except BadJSON:
            return raw  # not an object: the serializer names the field
    if field["widget"] == "bool":
        return {"yes": True, "no": False}.get(raw, raw)
    if field["widget"] == "number" and NUMBER.match(raw):
        return _number(raw, whole=not ("." in raw or field["step"] == "any"))
    return raw  # the serializer names what is wrong with it


def _json_field(raw: str, name: str, errors: dict[str, list[str]], *, empty: Any) -> Any:
    if not raw.strip():
        return empty
    try:
        return read_json(raw)  # the one reader: NaN, huge integers, deep nesting refused too
    except BadJSON as exc:
        errors[name] = [f"{exc.path}: {exc.message}" if exc.path else exc.message]
        return empty


def questions_from_post(post: QueryDict) -> list[dict]:
    """Each question block as a question definition: only the settings of its type, blank
    ones left out (their defaults apply), numbers as numbers."""
    columns = {name: post.getlist(f"q_{name}") for name in QUESTION_FIELDS}
    count = len(columns["id"])
    blocks = [
        {name: (values[i] if i < len(values) else "") for name, values in columns.items()}
        for i in range(count)
    ]
    return [_question(block) for block in blocks]


def _question(block: dict[str, str]) -> dict:
    kind = block["type"]
    question: dict[str, Any] = {
        "id": block["id"].strip(),
        "type": kind,
        "text": block["text"].replace("\r\n", "\n"),
    }
    if block["required"] == "no":
        question["required"] = False
    for name in sorted(TYPE_KEYS.get(kind, ())):  # an unknown type: the study's check names it
        value = _setting_value(name, block[name])
        if value is not _LEFT_OUT:
            question[name] = value
    if block["show_if"].strip():
        values: list[Any] = [_whole_or_text(v) for v in _lines(block["show_if_values"])]
        question["show_if"] = {"question": block["show_if"].strip(), "in": values}
    return question


def _setting_value(name: str, raw: str) -> Any:
    """One setting of a question as its field holds it; a blank field (or "no", an empty
    list) is left out, so the setting's default applies."""
    written = SETTING_INPUTS[name].kind
    if written == "number":
        raw = raw.strip()
        return _whole_or_text(raw) if raw else _LEFT_OUT
    if written == "lines":
        return _lines(raw) or _LEFT_OUT
    if written == "yes_no":
        return True if raw == "yes" else _LEFT_OUT
    chosen = raw.strip()
    if not chosen or chosen == DEFAULTS.get(name):  # the default choice: the file leaves it out
        return _LEFT_OUT
    return chosen  # a choice: the study's check names a word not offered


def _whole_or_text(raw: str) -> int | str:
    """A whole number where ``raw`` is one; else the text, which the study's check names."""
    number = whole_number(raw)
    return raw if number is None else number


def _number(raw: str, *, whole: bool) -> int | float | str:
    """A number setting as typed; the text where it is no finite number the settings take,
    so the serializer refuses it with the field's own message."""
    if whole:
        return _whole_or_text(raw)
    number = float(raw)
    return number if math.isfinite(number) else raw


def _lines(raw: str) -> list[str]:
    return [line.strip() for line in raw.splitlines() if line.strip()]


# --- study file → shown ---------------------------------------------------------------------


def form_values(data: dict) -> dict:
    """What the page shows for a study file: its texts, settings as typed, questions as
    blocks, another kind's config and the examples and FAQ as JSON."""
    values = {name: data.get(name, "") for name in ("slug", *TEXT_FIELDS)}
    settings = {}
    for field in setting_fields():
        value = data.get(field["name"])
        settings[field["name"]] = (
            ""
            if value is None or (field["widget"] == "json" and not value)
            else json.dumps(value, ensure_ascii=False)
            if field["widget"] == "json"
            else ("yes" if value else "no")
            if field["widget"] == "bool"
            else str(value)
        )
    config = data.get("config") or {}
    extras = {key: data[key] for key in EXTRAS if data.get(key)}
    return {
        **values,
        "settings": settings,
        "questions": [question_values(q) for q in config.get("questions", [])]
        if data.get("kind") == QUESTION_FORM_KIND
        else [],
        "config_json": json.dumps(config, indent=2, ensure_ascii=False),
        "extras_json": json.dumps(extras, indent=2, ensure_ascii=False) if extras else "",
    }


def question_values(question: dict) -> dict:
    """One question as its block's field values (lists one per line): its type's settings
    as set or by default, the other types' blank (the page hides them)."""
    show_if = question.get("show_if") or {}
    shown_values = show_if.get("in", [show_if["equals"]] if "equals" in show_if else [])
    kind = question.get("type", TYPES[0])
    own = TYPE_KEYS.get(kind, set())
    settings = {
        name: _shown(name, question.get(name, DEFAULTS.get(name)) if name in own else None)
        for name in SETTING_INPUTS
    }
    return {
        "id": question.get("id", ""),
        "type": kind,
        "text": question.get("text", ""),
        "required": "no" if question.get("required") is False else "yes",
        **settings,
        "show_if": show_if.get("question", ""),
        "show_if_values": "\n".join(str(v) for v in shown_values),
    }


def _shown(name: str, value: Any) -> str:
    """A setting's value as its field shows it (``None``: not set)."""
    setting = SETTING_INPUTS[name]
    if setting.kind == "lines":
        return "\n".join(str(x) for x in value or [])
    if setting.kind == "yes_no":
        return "yes" if value else "no"
    if setting.kind == "choice":
        return str(value) if value is not None else setting.choices[0]
    return "" if value is None else str(value)


def question_choices() -> dict:
    """What the question blocks offer: the types, each setting's choices, and for each
    setting the types that have it (the block shows a field for its question's type only)."""
    return {
        "types": TYPES,
        "setting_choices": {name: s.choices for name, s in SETTING_INPUTS.items() if s.choices},
        "types_taking": {
            name: " ".join(kind for kind in TYPES if name in TYPE_KEYS[kind]) for name in SETTING_INPUTS
        },
    }


# --- a CSV's columns ------------------------------------------------------------------------------


def guessed_role(name: str) -> tuple[str, str]:
    """(role, passage id) a column's name suggests: our own names read as they are."""
    column = ALIASES.get(name.strip().lower(), name)
    match = PASSAGE_COLUMN.fullmatch(column)
    if match:
        return f"passage_{match['part']}", match["id"]
    if column == "external_id":
        return "id", ""
    if column in (*JSON_COLUMNS, *TEXT_COLUMNS, "context"):
        return column, ""
    return "", ""


def column_rows(header: list[str], post: QueryDict | None) -> list[dict]:
    """The mapping table's rows: the posted roles when the posted header is this file's,
    the guessed ones otherwise."""
    posted = post is not None and post.getlist("col_name") == header
    rows = []
    for index, name in enumerate(header):
        if posted:
            role, pid = post.getlist("col_role")[index], post.getlist("col_passage")[index].strip()  # type: ignore[union-attr]
        else:
            role, pid = guessed_role(name)
        rows.append({"name": name, "role": role, "passage": pid})
    return rows


def column_map(rows: list[dict]) -> ColumnMap:
    """The rows as item_files' column map (a column left unmapped is not read); a passage
    column without a passage id is an error naming it."""
    mapping: ColumnMap = {}
    errors: dict[str, list[str]] = {}
    for row in rows:
        role, name = row["role"], row["name"]
        if role in ("passage_text", "passage_system"):
            if not row["passage"]:
                errors[f"column {name}"] = [
                    "Give the passage an id (e.g. a, b): it names the passage in answers."
                ]
                continue
            mapping[name] = f"passage.{row['passage']}.{role.removeprefix('passage_')}"
        elif role == "id":
            mapping[name] = "external_id"
        elif role in ROLES and role:
            mapping[name] = role
    if errors:
        raise InputError(errors)
    return mapping
