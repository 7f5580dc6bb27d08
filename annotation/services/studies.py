"""Loading a study file: all or nothing, every error named by item index and field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError, flatten_errors
from annotation.kinds import UnknownKind, get_kind
from annotation.models import Item, Study

from .study_extras import EXTRA_FIELDS, check_study_extras, write_study_extras

MAX_REPORTED_ERRORS = 50


class StudyFields(serializers.ModelSerializer):
    """The study-level fields of a study file (items and config are checked apart)."""

    slug = serializers.SlugField(max_length=80)

    class Meta:
        model = Study
        fields = [
            "slug", "title", "kind", "description", "instructions", "consent", "status", "public",
            "annotations_per_item", "items_per_session", "attention_check_rate", "max_attention_failures",
            "assignment_timeout_minutes", "completion_code", "screenout_code", "completion_url",
            "expected_seconds_per_page", "min_seconds_per_page",
        ]  # fmt: skip


class ItemFields(serializers.Serializer):
    external_id = serializers.CharField(max_length=200)
    payload = serializers.DictField()
    attention_check = serializers.BooleanField(default=False)
    gold = serializers.DictField(required=False, allow_null=True, default=None)
    provenance = serializers.DictField(required=False, default=dict)


@dataclass(frozen=True)
class LoadResult:
    study: Study
    created: bool
    items_created: int
    items_updated: int


def load_study_file(data: dict, *, owner=None) -> LoadResult:
    """Create or update a study and its items from a study file's JSON object.

    Everything is validated before anything is written; an invalid file raises
    ``InputError`` naming each problem (``items[3].payload.sentences``) and writes nothing.
    Items are matched by ``external_id``: known ones are updated, new ones added.
    """
    if not isinstance(data, dict):
        raise InputError({"study": ["A study file is a JSON object."]})
    fields, kind = _check_study_fields(data)
    config = _check_config(kind, data.get("config") or {})
    items = _check_items(kind, config, data.get("items"), fields)
    extras = check_study_extras(kind, config, data, fields, items)
    with transaction.atomic():
        study, created = Study.objects.update_or_create(
            slug=fields["slug"],
            defaults={
                **fields,
                **extras.study_fields,
                "config": config,
                **({"owner": owner} if owner else {}),
            },
        )
        made, updated = write_items(study, items)
        write_study_extras(study, extras)
    return LoadResult(study=study, created=created, items_created=made, items_updated=updated)


def _check_study_fields(data: dict):
    unknown = sorted(set(data) - set(StudyFields.Meta.fields) - {"config", "items"} - EXTRA_FIELDS)
    if unknown:
        raise InputError({name: ["Unknown field in a study file."] for name in unknown})
    serializer = StudyFields(data={k: v for k, v in data.items() if k not in ("config", "items")})
    if not serializer.is_valid():
        raise InputError(flatten_errors(serializer.errors))
    fields = dict(serializer.validated_data)
    try:
        kind = get_kind(fields["kind"])
    except UnknownKind as exc:
        raise InputError({"kind": [str(exc)]}) from None
    return fields, kind


def _check_config(kind, config) -> dict:
    try:
        return kind.validate_config(config)
    except ValidationError as exc:
        raise InputError.from_validation(exc, "config") from None


def _check_items(kind, config: dict, raw_items, fields: dict) -> list[dict]:
    if not isinstance(raw_items, list) or not raw_items:
        raise InputError({"items": ["A study file needs a non-empty list of items."]})
    probe_study = Study(config=config, **{k: v for k, v in fields.items()})
    errors: dict[str, list[str]] = {}
    checked: list[dict] = []
    seen: dict[str, int] = {}  # external id → first index
    for index, raw in enumerate(raw_items):
        try:
            checked.append(check_item(kind, config, raw, probe_study))
        except InputError as exc:
            errors.update({f"items[{index}].{path}": msgs for path, msgs in exc.errors.items()})
            continue
        external_id = checked[-1]["external_id"]
        if external_id in seen:
            errors[f"items[{index}].external_id"] = [
                f"Repeats the external_id of items[{seen[external_id]}]."
            ]
        seen.setdefault(external_id, index)
        if len(errors) >= MAX_REPORTED_ERRORS:
            break
    if errors:
        raise InputError(errors)
    return checked


def check_item(kind, config: dict, raw, study: Study) -> dict:
    """One item of a study file (or an API upload), validated by the kind."""
    if not isinstance(raw, dict):
        raise InputError({"item": ["An item is a JSON object."]})
    shape = ItemFields(data=raw)
    unknown = sorted(set(raw) - set(ItemFields().fields))
    if unknown:
        raise InputError({name: ["Unknown field in an item."] for name in unknown})
    if not shape.is_valid():
        raise InputError(flatten_errors(shape.errors))
    item = dict(shape.validated_data)
    try:
        item["payload"] = kind.validate_payload(item["payload"], config)
    except ValidationError as exc:
        raise InputError.from_validation(exc, "payload") from None
    if item["gold"] is not None:
        probe = Item(study=study, external_id=item["external_id"], payload=item["payload"])
        try:
            item["gold"] = kind.validate_gold(probe, item["gold"])
        except ValidationError as exc:
            raise InputError.from_validation(exc, "gold") from None
    elif item["attention_check"]:
        raise InputError({"gold": ["An attention check needs its expected answer in 'gold'."]})
    return item


def write_items(study: Study, items: list[dict]) -> tuple[int, int]:
    """Add new items, update changed ones (matched by external_id); returns (added, updated)."""
    ids = [data["external_id"] for data in items]
    existing = {item.external_id: item for item in Item.objects.filter(study=study, external_id__in=ids)}
    new, changed = [], []
    for data in items:
        values = {
            "payload": data["payload"],
            "is_attention_check": data["attention_check"],
            "gold": data["gold"],
            "provenance": data["provenance"],
        }
        item = existing.get(data["external_id"])
        if item is None:
            new.append(Item(study=study, external_id=data["external_id"], **values))
        elif any(getattr(item, k) != v for k, v in values.items()):
            for key, value in values.items():
                setattr(item, key, value)
            changed.append(item)
    Item.objects.bulk_create(new, batch_size=1000)
    Item.objects.bulk_update(
        changed, ["payload", "is_attention_check", "gold", "provenance"], batch_size=1000
    )
    return len(new), len(changed)


@dataclass(frozen=True)
class AddResult:
    added: int
    skipped: int  # external ids the study already had


def add_items(study: Study, items: list[dict]) -> AddResult:
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
        ids = [raw.get("external_id") for raw in items if isinstance(raw, dict)]
        known = set(
            Item.objects.filter(study=study, external_id__in=ids).values_list("external_id", flat=True)
        )
        fresh = [
            (index, raw)
            for index, raw in enumerate(items)
            if not isinstance(raw, dict) or raw.get("external_id") not in known
        ]
        checked = _check_new_items(kind, study, fresh)
        Item.objects.bulk_create(
            [
                Item(
                    study=study,
                    external_id=data["external_id"],
                    payload=data["payload"],
                    is_attention_check=data["attention_check"],
                    gold=data["gold"],
                    provenance=data["provenance"],
                )
                for data in checked
            ],
            batch_size=1000,
        )
    return AddResult(added=len(checked), skipped=len(items) - len(checked))


def _check_new_items(kind, study: Study, indexed: Sequence[tuple[int, object]]) -> list[dict]:
    errors: dict[str, list[str]] = {}
    checked: list[dict] = []
    seen: dict[str, int] = {}  # external id → first index
    for index, raw in indexed:
        try:
            item = check_item(kind, study.config, raw, study)
        except InputError as exc:
            errors.update({f"items[{index}].{path}": msgs for path, msgs in exc.errors.items()})
            if len(errors) >= MAX_REPORTED_ERRORS:
                break
            continue
        if item["external_id"] in seen:
            errors[f"items[{index}].external_id"] = [
                f"Repeats the external_id of items[{seen[item['external_id']]}]."
            ]
        seen.setdefault(item["external_id"], index)
        checked.append(item)
    if errors:
        raise InputError(errors)
    return checked


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
    try:
        config = get_kind(kind).validate_config({})
    except UnknownKind as exc:
        raise InputError({"kind": [str(exc)]}) from None
    except ValidationError as exc:
        raise InputError.from_validation(exc, "config") from None
    return Study.objects.create(**fields, kind=kind, config=config, owner=owner)


def _check_new_study(slug: str, kind: str, title: str) -> dict:
    serializer = StudyFields(data={"slug": slug, "title": title or slug, "kind": kind})
    if not serializer.is_valid():
        raise InputError(flatten_errors(serializer.errors))
    return {"slug": serializer.validated_data["slug"], "title": serializer.validated_data["title"]}
