"""What a study's kind accepts, checked in one place for every entry point.

The study-file loader, the API (create, PATCH, items upload), the Django admin forms and
the jobs that add generated items all validate here, so a study, a config or an item that
one of them refuses is refused by all of them with the same message:

- ``check_kind_and_config``: the kind exists, a study with items keeps its kind, a study that
  has gone live keeps its config, the config is the kind's (but for the assignment options
  every kind shares: ``adaptive``), and every item the study keeps still fits the config;
- ``validate_item``: an item's payload and gold by the kind, gold on every attention check,
  the exam rules on an exam's items;
- ``check_item``: one item as sent (study file, upload, job), shape first, then the above;
  ``checked_items`` for a list or a stream of them (``input_rows.collect_rows``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError, checked
from annotation.kinds import UnknownKind, get_kind
from annotation.kinds.base import TaskKind
from annotation.models import Exam, Item, Study
from annotation.services.participation.adaptive import KEYS as ASSIGNMENT_KEYS
from annotation.services.participation.adaptive import (
    check_adaptive_pays,
    check_assignment_config,
    check_stop_question,
)

from .exam_settings import check_exam
from .input_rows import Row, Unique, collect_rows


class ItemFields(serializers.Serializer):
    """An item as a study file, an upload line or a job sends it (docs/formats.md)."""

    external_id = serializers.CharField(max_length=200)
    payload = serializers.DictField()
    attention_check = serializers.BooleanField(default=False)
    gold = serializers.DictField(required=False, allow_null=True, default=None)
    provenance = serializers.DictField(required=False, default=dict)
    explanation = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)


@cache
def item_field_names() -> frozenset[str]:
    """The fields an item may have, found once: building a serializer's fields to read their
    names cost a millisecond an item (a study file of a thousand items, a second)."""
    return frozenset(ItemFields().fields)


def kind_named(name: str) -> TaskKind:
    """The kind ``name``; ``InputError`` on ``kind`` when there is none."""
    try:
        return get_kind(name)
    except UnknownKind as exc:
        raise InputError({"kind": [str(exc)]}) from None


def check_kind_and_config(
    study: Study | None, kind: TaskKind, config, *, kept_items: Iterable[Item] = ()
) -> dict:
    """The validated config of ``study`` (None: a new one) as ``kind`` with ``config``.

    A study that has items keeps its kind: they were validated by it. ``kept_items`` are
    the items the study keeps after the change; each must still fit the new config (a
    ranking study whose items hold 3 passages cannot show 5), or the config is refused,
    naming each item that does not fit.
    """
    stored = Study.objects.filter(pk=study.pk).first() if study is not None and study.pk else None
    if stored is not None and kind.name != stored.kind:
        count = Item.objects.filter(study=stored).count()
        if count:
            raise InputError(
                {"kind": [f"The study has {count} items of kind {stored.kind!r}; its kind cannot change."]}
            )
    config = config if config is not None else {}
    assignment: dict = {}
    if isinstance(config, dict):  # the assignment options are every kind's; the rest is the kind's
        assignment = check_assignment_config(config)
        config = {key: value for key, value in config.items() if key not in ASSIGNMENT_KEYS}
    try:
        config = {**kind.validate_config(config), **assignment}
    except ValidationError as exc:
        raise InputError.from_validation(exc, "config") from None
    check_stop_question(kind, config)
    check_adaptive_pays(
        kind, config, stored.config if stored is not None and stored.kind == kind.name else None
    )
    if stored is None or stored.kind != kind.name or stored.config != config:
        misfits = _misfits(kind, config, kept_items)
        if misfits:
            raise InputError({"config": misfits})
    if stored is not None and is_config_kept(stored):
        check_config_kept(stored, kind, config)
    return config


CONFIG_KEPT = (
    "The study is no longer a draft: its config (a questionnaire's questions) is kept as it is, "
    "since participants answer under it. Its title, instructions and other settings can still "
    "change. To change the questions: while no answer is stored, put it back to draft on its "
    "overview; otherwise duplicate it there and edit the copy."
)


def check_config_kept(stored: Study, kind: TaskKind, config: dict) -> None:
    """A study that is live or closed keeps its kind and its config (validated, so a file
    loaded again or a form sent back unchanged passes): an answer means what the questions
    (scales, options, picks) said when it was given. Its other settings may change."""
    if kind.name != stored.kind or config != stored.config:
        raise InputError({"config": [CONFIG_KEPT]})


def is_config_kept(study: Study) -> bool:
    """Whether ``check_config_kept`` applies to the study (pages show its config read-only)."""
    return study.status != Study.Status.DRAFT


def _misfits(kind: TaskKind, config: dict, items: Iterable[Item], *, exam: bool = False) -> list[str]:
    """Each stored item the kind refuses under ``config``: ``item 'c0': payload.x: message``."""
    rows = (Row(f"item {item.external_id!r}", item) for item in items)

    def fits(item: Item) -> None:
        validate_item(
            kind,
            config,
            external_id=item.external_id,
            payload=item.payload,
            gold=item.gold,
            is_attention_check=item.is_attention_check,
            exam=exam,
        )

    try:
        for _ in collect_rows(rows, fits):
            pass
    except InputError as exc:
        return [f"{path}: {' '.join(messages)}" for path, messages in exc.errors.items()]
    return []


def check_exam_study(study: Study, *, public: bool, pass_mark: int | None = None) -> None:
    """A study that is (or becomes, with ``pass_mark``) an exam: every item it has follows
    the exam rules and the exam as a whole ``exam_settings.check_exam``'s (the admin, PATCH).
    Without ``pass_mark``, a study that is not an exam passes as it is."""
    if pass_mark is None:
        exam = Exam.objects.filter(study_id=study.pk).first() if study.pk else None
        if exam is None:
            return
        pass_mark = exam.pass_mark
    items = Item.objects.filter(study=study)
    errors = check_exam(pass_mark=pass_mark, item_count=items.count(), public=public)
    misfits = _misfits(kind_named(study.kind), study.config, items, exam=True)
    if misfits:
        errors["items"] = misfits
    if errors:
        raise InputError(errors)


def is_exam(study: Study) -> bool:
    """Whether the study is a qualification exam (its items follow the exam rules)."""
    return bool(study.pk) and Exam.objects.filter(study_id=study.pk).exists()


def validate_item(
    kind: TaskKind,
    config: dict,
    *,
    external_id: str,
    payload,
    gold,
    is_attention_check: bool,
    exam: bool = False,
) -> tuple[dict, dict | None]:
    """``(payload, gold)`` as the kind accepts them in a study with ``config`` (validated).

    Gold is checked against the validated payload; an attention check needs gold; an exam
    item needs gold and is never an attention check. Errors name ``payload.…``,
    ``gold.…`` or ``attention_check``.
    """
    try:
        payload = kind.validate_payload(payload, config)
    except ValidationError as exc:
        raise InputError.from_validation(exc, "payload") from None
    if exam and is_attention_check:
        raise InputError({"attention_check": ["An exam has no attention checks."]})
    if gold is not None:
        probe = Item(study=Study(kind=kind.name, config=config), external_id=external_id, payload=payload)
        try:
            gold = kind.validate_gold(probe, gold)
        except ValidationError as exc:
            raise InputError.from_validation(exc, "gold") from None
    elif exam:
        raise InputError({"gold": ["Every exam item needs its gold answer."]})
    elif is_attention_check:
        raise InputError({"gold": ["An attention check needs its expected answer in 'gold'."]})
    return payload, gold


def check_item(kind: TaskKind, config: dict, raw, *, exam: bool = False) -> dict:
    """One item as sent (a study file's, an upload line, a job's), validated by the kind."""
    if not isinstance(raw, dict):
        raise InputError({"": ["An item is a JSON object."]})
    unknown = sorted(set(raw) - item_field_names())
    if unknown:
        raise InputError({name: ["Unknown field in an item."] for name in unknown})
    item = checked(ItemFields, raw)
    item["payload"], item["gold"] = validate_item(
        kind,
        config,
        external_id=item["external_id"],
        payload=item["payload"],
        gold=item["gold"],
        is_attention_check=item["attention_check"],
        exam=exam,
    )
    return item


def checked_items(kind: TaskKind, config: dict, rows: Iterable[Row], *, exam: bool = False):
    """Every sent item checked (``check_item``), ids not repeated; see ``collect_rows``."""
    return collect_rows(
        rows,
        lambda raw: check_item(kind, config, raw, exam=exam),
        id_field="external_id",
        unique=Unique("external_id", key=lambda item: item["external_id"]),
    )
