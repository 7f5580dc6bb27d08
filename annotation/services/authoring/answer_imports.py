"""Importing answers collected elsewhere (a form, a spreadsheet, another tool)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError, checked
from annotation.models import Assignment, Enrollment, Item, Participant, Response, Study
from annotation.services.participation.assignment import next_positions, take_slots
from annotation.services.participation.participants import count_answers, enroll, participant_by_platform_id
from annotation.services.participation.submission import store_answer_given_elsewhere
from annotation.services.populations import NOT_HUMAN, keeps_slot

from .input_rows import Unique, collect_rows, json_lines


class ImportLine(serializers.Serializer):
    """One line of a responses import. Unknown fields are errors: a typo in ``answered_at``
    must not quietly become "now"; an answer cannot come before its page was shown, nor
    lie in the future."""

    participant = serializers.CharField(max_length=200)
    item = serializers.CharField(max_length=200)
    answer = serializers.DictField()
    display_order = serializers.JSONField(required=False)
    shown_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    answered_at = serializers.DateTimeField(required=False, allow_null=True, default=None)

    def validate(self, attrs: dict) -> dict:
        unknown = sorted(set(self.initial_data) - set(self.fields))
        if unknown:
            raise ValidationError({name: ["Unknown field in an import line."] for name in unknown})
        now = timezone.now()
        answered_at = attrs["answered_at"] or now
        if answered_at > now:
            raise ValidationError({"answered_at": ["Lies in the future."]})
        if attrs["shown_at"] is not None and attrs["shown_at"] > answered_at:
            raise ValidationError({"answered_at": ["Comes before shown_at; an answer follows its page."]})
        attrs["answered_at"] = answered_at
        return attrs


@dataclass(frozen=True)
class ImportResult:
    created: int
    skipped: int  # (participant, item) pairs already in the study: the import is idempotent
    incomplete: dict[str, int] = field(default_factory=dict)  # missing part → new responses without it


def import_responses(
    study: Study,
    lines: Iterable[str],
    *,
    source: str = Participant.Source.LAB,
    allow_incomplete: bool = False,
) -> ImportResult:
    """Validate every line, then write them all in one transaction (or nothing).

    Participants are known by their id in the source; a (participant, item) pair that the
    study already holds is skipped, so importing the same file twice adds nothing.
    ``allow_incomplete``: an answer that fails only for a part it lacks (a claim label
    without its evidence sentences, ratings for some of the questions, a ranking without
    some criteria) is imported, marked incomplete. What may be missing is the kind's rule
    (``TaskKind.import_incomplete``), so that every reader handles what is stored; anything
    else still fails, naming the line and the field.
    """
    if source not in Participant.Source.values:
        raise InputError({"source": [f"Unknown source {source!r}."]})
    rows = _check_lines(study, lines, allow_incomplete=allow_incomplete)
    with transaction.atomic():
        return _write(study, rows, source)


@dataclass
class _Row:
    participant: str
    item: Item
    answer: dict
    state: dict
    shown_at: datetime | None
    answered_at: datetime
    missing: tuple[str, ...] = ()


def _check_lines(study: Study, lines: Iterable[str], *, allow_incomplete: bool = False) -> list[_Row]:
    items = {item.external_id: item for item in Item.objects.filter(study=study).select_related("study")}
    kind = study.task_kind
    once: Unique[_Row] = Unique(
        "item", key=lambda row: (row.participant, row.item.external_id), what="participant and item"
    )
    rows = list(
        collect_rows(
            json_lines(lines),
            lambda data: _check_line(kind, items, data, allow_incomplete),
            id_field="item",
            unique=once,
        )
    )
    if not rows:
        raise InputError({"file": ["No responses in the file."]})
    return rows


def _check_line(kind, items: dict[str, Item], data, allow_incomplete: bool = False) -> _Row:
    if not isinstance(data, dict):
        raise InputError({"": ["Each line is a JSON object."]})
    line = checked(ImportLine, data)
    item = items.get(line["item"])
    if item is None:
        raise InputError({"item": [f"No item with external_id {line['item']!r} in this study."]})
    missing: tuple[str, ...] = ()
    try:
        answer, state = kind.import_answer(item, line["answer"])
    except ValidationError as exc:
        if not allow_incomplete:
            raise InputError.from_validation(exc, "answer") from None
        try:
            answer, state, missing = kind.import_incomplete(item, line["answer"], exc)
        except ValidationError as refused:
            raise InputError.from_validation(refused, "answer") from None
    if "display_order" in line:
        state = {**state, "display_order": line["display_order"]}
    return _Row(line["participant"], item, answer, state, line["shown_at"], line["answered_at"], missing)


def _write(study: Study, rows: list[_Row], source: str) -> ImportResult:
    participants = _participants(source, {row.participant for row in rows})
    done = set(
        Assignment.objects.filter(study=study, participant__in=participants.values()).values_list(
            "participant_id", "item_id"
        )
    )
    positions = next_positions(study, [participant.pk for participant in participants.values()])
    new_rows = [row for row in rows if (participants[row.participant].pk, row.item.pk) not in done]
    incomplete = Counter(part for row in new_rows for part in row.missing)
    # Imported answers that count take their items' slots, like answers given on the site
    # (``populations.keeps_slot``: a model rater's or an adjudicator's take none); all at
    # once, in item order, before the assignments are written.
    keeping = _keeping_slots(study, participants.values(), source)
    take_slots(Counter(row.item.pk for row in new_rows if participants[row.participant].pk in keeping))
    totals: dict[int, tuple[int, float]] = {}
    for row in new_rows:
        participant = participants[row.participant]
        response = _store(study, participant, row, next(positions[participant.pk]))
        count, points = totals.get(participant.pk, (0, 0.0))
        totals[participant.pk] = (count + 1, points + (response.points or 0))
    _update_enrollments(study, participants, totals)
    return ImportResult(created=len(new_rows), skipped=len(rows) - len(new_rows), incomplete=dict(incomplete))


def _keeping_slots(study: Study, participants: Iterable[Participant], source: str) -> set[int]:
    """The ids of the participants whose answers keep their slots (``keeps_slot``): by the
    import's source, and the enrollment they already have in the study (a new one is
    neither flagged, excluded nor a test)."""
    ids = [participant.pk for participant in participants]
    marks = {
        pk: (flagged, excluded, is_test)
        for pk, flagged, excluded, is_test in Enrollment.objects.filter(
            study=study, participant_id__in=ids
        ).values_list("participant_id", "flagged", "excluded", "is_test")
    }
    human = source not in NOT_HUMAN
    keeping = set()
    for pk in ids:
        flagged, excluded, is_test = marks.get(pk, (False, False, False))
        if keeps_slot(human=human, flagged=flagged, excluded=excluded, is_test=is_test):
            keeping.add(pk)
    return keeping


def _participants(source: str, names: set[str]) -> dict[str, Participant]:
    known = {
        p.platform_worker_id: p
        for p in Participant.objects.filter(source=source, platform_worker_id__in=names)
    }
    for name in sorted(names - set(known)):  # new workers; another import may add them meanwhile
        known[name] = participant_by_platform_id(source, name)
    return known


def _store(study: Study, participant: Participant, row: _Row, position: int) -> Response:
    """An answered assignment and its response, through the same writers as the site's."""
    return store_answer_given_elsewhere(
        study=study,
        participant=participant,
        item=row.item,
        answer=row.answer,
        state=row.state,
        answered_at=row.answered_at,
        shown_at=row.shown_at,
        position=position,
        imported=True,
        missing=row.missing,
    )


def _update_enrollments(study: Study, participants: dict[str, Participant], totals: dict) -> None:
    for participant in participants.values():
        if participant.pk not in totals:
            continue
        count, points = totals[participant.pk]
        enrollment = enroll(participant=participant, study=study, status=Enrollment.Status.COMPLETED)
        count_answers(
            participant_id=enrollment.participant_id, study_id=study.pk, answers=count, points=points
        )
