"""Loading a study file: all or nothing, every error named by item index and field."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.core.validators import slug_re
from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from annotation.errors import InputError, checked
from annotation.models import Item, Study, StudyVersion
from annotation.serializer_reuse import reused_serializers
from annotation.services.access import can_manage_study, require_study_change
from annotation.services.participation.adaptive import check_stop_systems
from annotation.services.study_status import change_study_status, status_change_errors, stored_answers

from .human_subset import FIELD as HUMAN_SUBSET
from .human_subset import set_human_subset
from .input_rows import list_rows
from .item_load import known_ids, write_items
from .study_extras import EXTRA_FIELDS, StudyExtras, check_study_extras, write_study_extras
from .study_fields import StudyFields
from .validation import check_kind_and_config, checked_items, is_exam, kind_named
from .versions import record_study_version


@dataclass(frozen=True)
class LoadResult:
    study: Study
    created: bool
    items_created: int
    items_updated: int


def load_study_file(
    data: dict, *, owner=None, user=None, source: str = StudyVersion.Source.COMMAND, reason: str = ""
) -> LoadResult:
    """Create or update a study and its items from a study file's JSON object.

    Everything is validated before anything is written; an invalid file raises
    ``InputError`` naming each problem (``items[3].payload.sentences (external_id 'c3')``)
    and writes nothing.
    Items are matched by ``external_id``: known ones are updated, new ones added.
    The file's ``status`` is a change like any other (``study_status.change_study_status``,
    the one writer): a new study starts as a draft and moves to it; an existing one moves
    to it only along the transitions (a live study never goes back to draft), and a file
    that asks for a refused one is an error on ``status``. No ``status``: unchanged.
    The load is a new version of the study (``versions.record_study_version``, by ``user``
    through ``source``); a frozen study takes it only with ``reason``, as a deviation.
    """
    with reused_serializers():  # one serializer per kind of value, not one per item
        checked = _check_study_file(data, owner=owner)
    fields = {name: value for name, value in checked.fields.items() if name not in ("status", HUMAN_SUBSET)}
    with transaction.atomic():
        study, created = Study.objects.update_or_create(
            slug=fields["slug"],
            defaults={
                **fields,
                **checked.extras.study_fields,
                "config": checked.config,
                **({"owner": owner} if owner else {}),
            },
        )
        made, updated = write_items(study, checked.items)
        write_study_extras(study, checked.extras)
        if HUMAN_SUBSET in checked.fields:  # every item drawn anew; refused once people answered
            set_human_subset(study=study, raw=checked.fields[HUMAN_SUBSET])
        record_study_version(study, user=user or owner, source=source, reason=reason)
        if "status" in checked.fields:
            change_study_status(study, status=checked.fields["status"])
    return LoadResult(study=study, created=created, items_created=made, items_updated=updated)


# Slugs are one namespace for the whole site (they are the participants' links), so a slug
# someone else holds cannot be given out again. The refusal says only that: the same words
# whoever holds it, whatever its state (live, draft, closed, an exam), never whose it is.
SLUG_TAKEN = "This slug is not available; choose another."
OWN_SLUG = "You have a study with this slug: change it with PATCH or the items upload, or choose another."


def load_study_file_for(
    user, data: dict, *, update_own: bool, source: str = StudyVersion.Source.API, reason: str = ""
) -> LoadResult:
    """A researcher's study file (the API, the upload page): create a study they will own,
    or (``update_own``) update one they may change (``access.can_change_study``: its owner or
    an admin; one only shared with them is a ``NotAllowed``).

    The slug is checked last: a file whose slug is another researcher's is checked exactly
    as if the slug were free, so its errors (or the one ``SLUG_TAKEN`` for a valid file)
    never tell whether that study exists beyond what its public link already does, nor
    anything about it.
    """
    slug = data.get("slug") if isinstance(data, dict) else None
    # Only a well-formed slug is looked up (a NUL byte cannot even reach the database); the
    # checks below refuse any other, naming the field.
    well_formed = isinstance(slug, str) and slug_re.fullmatch(slug)
    existing = Study.objects.filter(slug=slug).first() if well_formed else None
    if existing is None:
        return load_study_file(data, owner=user, source=source)
    if can_manage_study(user, existing):
        if not update_own:  # said beside every other error of the file, checked as if new
            _raise_with({"slug": [OWN_SLUG]}, lambda: _check_study_file(_unused_slug(data), owner=user))
        require_study_change(user, existing)  # a study shared with them is not theirs to change
        return load_study_file(data, owner=None, user=user, source=source, reason=reason)
    _check_study_file(_unused_slug(data), owner=user)
    raise InputError({"slug": [SLUG_TAKEN]})


def _unused_slug(data: dict) -> dict:
    return {**data, "slug": f"unused-{uuid.uuid4().hex}"}


def _raise_with(errors: dict[str, list[str]], check) -> None:
    """Run ``check`` and raise ``errors`` together with any it raises (every error in one
    pass), or ``errors`` alone when it passes; nothing is raised when both are empty."""
    try:
        check()
    except InputError as exc:
        raise InputError({**errors, **exc.errors}) from None
    if errors:
        raise InputError(errors)


@dataclass(frozen=True)
class _CheckedFile:
    fields: dict
    config: dict
    items: list[dict]
    extras: StudyExtras


def _check_study_file(data: dict, *, owner) -> _CheckedFile:
    """Every check of a study file, before anything is written."""
    if not isinstance(data, dict):
        raise InputError({"study": ["A study file is a JSON object."]})
    unknown = sorted(set(data) - set(StudyFields.Meta.fields) - {"config", "items"} - EXTRA_FIELDS)
    checked: list[_CheckedFile] = []
    # A misspelled key is reported with every other error, not in a pass of its own.
    _raise_with(
        {name: ["Unknown field in a study file."] for name in unknown},
        lambda: checked.append(_check_known_fields(data, owner=owner)),
    )
    return checked[0]


def _check_known_fields(data: dict, *, owner) -> _CheckedFile:
    fields, kind = _check_study_fields(data)
    existing = Study.objects.filter(slug=fields["slug"]).first()
    status = _status_errors(existing, fields.get("status"))
    checked: list[_CheckedFile] = []
    # A refused status is reported with every other error, not in a pass of its own.
    _raise_with(status, lambda: checked.append(_check_contents(data, fields, kind, existing, owner=owner)))
    return checked[0]


def _status_errors(existing: Study | None, wanted: str | None) -> dict[str, list[str]]:
    """The file's status as a change of the study's (a new study starts as a draft)."""
    if wanted is None:
        return {}
    answers = stored_answers(existing) if wanted == Study.Status.DRAFT else 0
    errors = status_change_errors(
        existing.status if existing else Study.Status.DRAFT, wanted, answers=answers
    )
    return {"status": errors} if errors else {}


def _check_contents(data: dict, fields: dict, kind, existing: Study | None, *, owner) -> _CheckedFile:
    raw_items = data.get("items")
    if not isinstance(raw_items, list) or not raw_items:
        raise InputError({"items": ["A study file needs a non-empty list of items."]})
    config = check_kind_and_config(
        existing, kind, data.get("config") or {}, kept_items=_items_not_in(existing, raw_items)
    )
    exam = data.get("exam") is not None
    items = list(checked_items(kind, config, list_rows(enumerate(raw_items), "items"), exam=exam))
    kept = _items_not_in(existing, raw_items).values_list("provenance__system", flat=True)
    check_stop_systems(config, [(item["provenance"] or {}).get("system") for item in items] + list(kept))
    owner_after = owner or (existing.owner if existing is not None else None)
    extras = check_study_extras(kind, config, data, fields, items, owner=owner_after)
    return _CheckedFile(fields=fields, config=config, items=items, extras=extras)


def _check_study_fields(data: dict):
    known = set(StudyFields.Meta.fields)
    fields = checked(StudyFields, {k: v for k, v in data.items() if k in known})
    return fields, kind_named(fields["kind"])


def _items_not_in(study: Study | None, raw_items: list) -> QuerySet[Item]:
    """The items a study keeps after loading a file (those the file does not mention)."""
    if study is None:
        return Item.objects.none()
    sent = {raw.get("external_id") for raw in raw_items if isinstance(raw, dict)}
    in_file = [i for i in sent if isinstance(i, str)]
    if connection.vendor == "postgresql":  # one array parameter: IN (%s, …) stops at 65,535 ids
        return study.items.exclude(external_id__in=RawSQL("SELECT unnest(%s::text[])", [in_file]))
    return study.items.exclude(external_id__in=in_file)


@dataclass(frozen=True)
class AddResult:
    added: int
    skipped: int  # external ids the study already had


def add_items(study: Study, items: list[dict], *, reason: str = "") -> AddResult:
    """Add generated items to an existing study: all validated first, then all written or none.

    Items whose ``external_id`` the study already has are skipped (not compared, not
    updated), so a generator that runs again, or a redelivered job, adds nothing twice.
    Errors name the item index and field, as for study files. The study row is locked
    while writing, so two workers adding to one study cannot both add the same id.
    """
    if not isinstance(items, list):
        raise InputError({"items": ["Expected a list of items."]})
    kind = study.task_kind
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        known = known_ids(study, [raw.get("external_id") for raw in items if isinstance(raw, dict)])
        fresh = [
            (index, raw)
            for index, raw in enumerate(items)
            if not isinstance(raw, dict) or raw.get("external_id") not in known
        ]
        with reused_serializers():
            checked = list(checked_items(kind, study.config, list_rows(fresh, "items"), exam=is_exam(study)))
        write_items(study, checked)
        record_study_version(study, source=StudyVersion.Source.JOB, reason=reason)
    return AddResult(added=len(checked), skipped=len(items) - len(checked))


def ensure_study(*, slug: str, kind: str, title: str = "", owner=None) -> Study:
    """The study to add generated items to; a new draft of ``kind`` when there is none yet.

    An existing study of another kind is refused (``InputError`` on ``study``): its items
    would not fit.
    """
    study = Study.objects.filter(slug=slug).first()
    if study is not None:
        if study.kind != kind:
            raise InputError({"study": [f"Study {slug!r} is a {study.kind!r} study, not {kind!r}."]})
        return study
    fields = _check_new_study(slug, kind, title)
    config = check_kind_and_config(None, kind_named(kind), {})
    with transaction.atomic():
        study = Study.objects.create(**fields, kind=kind, config=config, owner=owner)
        record_study_version(study, user=owner, source=StudyVersion.Source.JOB)
    return study


def _check_new_study(slug: str, kind: str, title: str) -> dict:
    fields = checked(StudyFields, {"slug": slug, "title": title or slug, "kind": kind})
    return {"slug": fields["slug"], "title": fields["title"]}
