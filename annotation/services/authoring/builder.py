"""The study builder's operations: a study made or changed from a page's form, its file
exported, a draft previewed before it is saved.

The study file stays the interchange format. The builder assembles one from the form (the
study's fields, the kind's config, items read from a CSV or JSONL file by ``item_files``)
and loads it through ``studies.load_study_file_for``, as the JSON upload does; a saved
study's changes go through ``study_changes.update_study``, as the API's PATCH does. So every rule
(the kind's config and items, a live study keeping its config, slugs) is checked where it
already lives, and ``study_file_of`` gives back a file that loads as the same study.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.errors import InputError, checked
from annotation.kinds import all_kinds
from annotation.models import Assignment, Item, Study

from .input_rows import list_rows
from .item_files import ColumnMap, add_items_from_file, read_items
from .studies import load_study_file_for
from .study_changes import update_study
from .study_fields import STUDY_SETTINGS, StudyFields
from .study_files import study_file_of
from .validation import check_kind_and_config, checked_items, kind_named, validate_item

EXAMPLES_DIR = Path(settings.BASE_DIR) / "docs" / "examples"
ITEMS_FILE = "items file"  # where the errors of an uploaded items file are listed
# The kind whose questions the builder's form edits block by block (others: their config as JSON).
QUESTION_FORM_KIND = "questionnaire"
BLANK = f"{QUESTION_FORM_KIND}-blank"
# A new questionnaire's first question: a field to edit rather than an empty form.
FIRST_QUESTION = {
    "id": "quality",
    "type": "scale",
    "points": 5,
    "labels": ["Very poor", "Very good"],
    "text": "How good is the passage?",
}


@dataclass(frozen=True)
class Template:
    """A study file to start from: a kind's documented example, or a blank questionnaire."""

    name: str
    label: str  # the example's title
    kind_label: str
    data: dict

    @property
    def kind(self) -> str:
        return self.data["kind"]


@cache
def _templates() -> tuple[Template, ...]:
    blank = {
        "slug": "",
        "title": "",
        "kind": QUESTION_FORM_KIND,
        "instructions": "",
        "config": {"questions": [FIRST_QUESTION]},
        "items": [],
    }
    labels = {name: kind.label for name, kind in all_kinds().items()}
    found = [Template(BLANK, "Your own questions, from a blank page", labels[QUESTION_FORM_KIND], blank)]
    for path in sorted(EXAMPLES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        kind = data.get("kind")
        if kind in labels:
            found.append(Template(path.stem, data.get("title") or path.stem, labels[kind], data))
    return tuple(found)


def builder_templates() -> list[Template]:
    return list(_templates())


def template_named(name: str) -> Template:
    """A copy of the template ``name`` (its items included); ``InputError`` on ``template``."""
    for template in _templates():
        if template.name == name:
            return Template(template.name, template.label, template.kind_label, copy.deepcopy(template.data))
    raise InputError({"template": [f"No template named {name!r}."]})


# What a new study does not take from a template's file: its items (offered apart), what ties
# it to other studies (an exam, one it requires) and its codes (a code two studies share lets
# someone who took part in one claim payment in the other).
NOT_FROM_TEMPLATE = ("items", "exam", "qualification", "completion_code", "screenout_code")


# A study of the researcher's own as the builder's starting point: ``study:<slug>``.
STUDY_TEMPLATE_PREFIX = "study:"


def template_of_study(study: Study) -> Template:
    """One of the researcher's studies as a template (issue 39, "duplicate"): its settings,
    questions and, offered apart as a template's are, its items; never its answers (a study
    file has none) nor its codes or exam ties (``as_new_study`` drops them)."""
    kind_label = all_kinds()[study.kind].label if study.kind in all_kinds() else study.kind
    return Template(f"{STUDY_TEMPLATE_PREFIX}{study.slug}", study.title, kind_label, study_file_of(study))


def as_new_study(template: Template) -> dict:
    """The template's file as a new study's starting point: a draft, its slug to choose."""
    data = {key: value for key, value in template.data.items() if key not in NOT_FROM_TEMPLATE}
    return {**data, "slug": "", "status": Study.Status.DRAFT}


# --- export -----------------------------------------------------------------------------------


# --- create and change --------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemsUpload:
    """An items file as uploaded: its bytes, ``csv`` or ``jsonl``, a CSV's columns mapped."""

    content: bytes
    file_format: str
    columns: ColumnMap | None = None


def create_study(
    *, user, data: dict, upload: ItemsUpload | None, fallback_config: dict | None = None
) -> Study:
    """A new study owned by ``user`` from the builder's study file ``data`` (its items: the
    template's, or ``upload``'s, which replace them): ``draft_study_file``'s checks, then
    the file loaded as the JSON upload loads it (which also checks the slug is free)."""
    checked_file = draft_study_file(data=data, upload=upload, fallback_config=fallback_config)
    return load_study_file_for(user, checked_file, update_own=False, source="builder").study


def draft_study_file(*, data: dict, upload: ItemsUpload | None, fallback_config: dict | None = None) -> dict:
    """The study file the builder's draft makes, its items read from ``upload`` (when
    given): what the page saves or downloads. Every error of the fields, the config and
    the items file is raised at once: while the form's config has errors, the items file
    is read under ``fallback_config`` (the template's), so its own problems (an empty text,
    a repeated id) are listed in the same pass (U7)."""
    data = {**data, "items": data.get("items") or []}
    errors: dict[str, list[str]] = {}
    try:
        checked(StudyFields, {key: data[key] for key in StudyFields.Meta.fields if key in data})
    except InputError as exc:
        errors.update(exc.errors)
    config = _checked_config(data, errors)
    items_config = config if config is not None else _fallback(data, fallback_config)
    if upload is not None and items_config is not None:
        try:
            data["items"] = read_items(
                kind_named(data["kind"]),
                items_config,
                upload.content,
                file_format=upload.file_format,
                columns=upload.columns,
            )
        except InputError as exc:
            errors.update(items_file_errors(exc))
    elif upload is None and not data["items"]:
        errors[ITEMS_FILE] = ["Upload the study's items: a CSV or JSON Lines file."]
    elif config is not None:  # a template's items, which the edited config may no longer fit
        try:
            list(
                checked_items(kind_named(data["kind"]), config, list_rows(enumerate(data["items"]), "items"))
            )
        except InputError as exc:
            errors.update(exc.errors)
    if errors:
        raise InputError(errors)
    return data


def _checked_config(data: dict, errors: dict[str, list[str]]) -> dict | None:
    try:
        return check_kind_and_config(None, kind_named(data.get("kind", "")), data.get("config") or {})
    except InputError as exc:
        errors.update(exc.errors)
        return None


def _fallback(data: dict, fallback_config: dict | None) -> dict | None:
    """The template's config, where it is valid for the form's kind (else None)."""
    if fallback_config is None:
        return None
    return _checked_config({"kind": data.get("kind", ""), "config": fallback_config}, {})


def items_file_errors(exc: InputError) -> dict[str, list[str]]:
    """An items file's errors (``line 4: passage.a.text``) named as the file's, so they read
    apart from the form's fields."""
    return {
        ITEMS_FILE if path == "file" else f"{ITEMS_FILE}, {path}": messages
        for path, messages in exc.errors.items()
    }


def change_study(*, user, study: Study, changes: dict, upload: ItemsUpload | None, reason: str = "") -> Study:
    """A saved study's settings (and its config, which a study that has gone live keeps) changed
    as PATCH changes them (``study_changes.update_study``), and the items of ``upload`` added as
    ``loaditems`` adds them; both or neither, every error of the settings, the config and the
    file at once."""
    errors: dict[str, list[str]] = {}
    shaped: dict = {}
    try:
        shaped = checked(StudyFields, {k: v for k, v in changes.items() if k in STUDY_SETTINGS}, partial=True)
    except InputError as exc:
        errors.update(exc.errors)
    if "config" in changes:
        try:
            kind = kind_named(study.kind)
            shaped["config"] = check_kind_and_config(
                study, kind, changes["config"], kept_items=study.items.all()
            )
        except InputError as exc:
            errors.update(exc.errors)
    with transaction.atomic():
        if not errors:
            try:  # a human subset refused once people have answered, say
                update_study(study, user=user, changes=shaped, source="builder", reason=reason)
            except InputError as exc:
                errors.update(exc.errors)
        if upload is not None:
            try:
                add_items_from_file(
                    study,
                    upload.content,
                    file_format=upload.file_format,
                    columns=upload.columns,
                    via="builder",
                    user=user,
                    reason=reason,
                )
            except InputError as exc:
                errors.update(items_file_errors(exc))
        if errors:
            transaction.set_rollback(True)
    if errors:
        study.refresh_from_db()
        raise InputError(errors)
    return study


# --- preview -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DraftPage:
    """A draft's first page, unsaved: what the participant page renders from."""

    study: Study
    item: Item
    assignment: Assignment
    total: int


def draft_page(*, data: dict, upload: ItemsUpload | None, study: Study | None = None) -> DraftPage:
    """The first item of the draft ``data`` as a participant would see it, nothing saved:
    the config checked by the kind, the item from ``upload``, else the template's items,
    else the saved ``study``'s first item. ``InputError`` names what is wrong."""
    errors: dict[str, list[str]] = {}
    config = _checked_config(data, errors)
    if config is None:
        raise InputError(errors)
    kind = kind_named(data["kind"])
    if upload is not None:
        try:
            items = read_items(
                kind, config, upload.content, file_format=upload.file_format, columns=upload.columns
            )
        except InputError as exc:
            raise InputError(items_file_errors(exc)) from None
        payloads, total = [items[0]["payload"]], len(items)
    elif data.get("items"):
        payloads, total = [data["items"][0].get("payload")], len(data["items"])
    elif study is not None and study.items.exists():
        payloads, total = [study.items.order_by("id").first().payload], study.items.count()  # type: ignore[union-attr]
    else:
        raise InputError({ITEMS_FILE: ["Upload the items to preview a page with the first of them."]})
    fields = {key: data[key] for key in ("title", "instructions", "items_per_session") if data.get(key)}
    probe = Study(slug=data.get("slug") or "preview", kind=kind.name, config=config, **fields)
    payload, _ = validate_item(  # a template's item the edited config no longer fits is named
        kind, config, external_id="preview", payload=payloads[0], gold=None, is_attention_check=False
    )
    item = Item(study=probe, external_id="preview", payload=payload)
    state = kind.prepare_assignment(item, random.Random(0))
    return DraftPage(probe, item, Assignment(study=probe, item=item, position=1, state=state), total)
