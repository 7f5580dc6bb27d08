"""Reading a study for its reports: one streamed query per table, into column arrays.

Responses are read as value tuples in chunks (never one ORM object per response) and
turned into NumPy columns as they arrive, so memory grows with the columns, not with
Python objects. The fields a kind's report needs are pulled out of the JSON columns by
the database (``answer ->> 'guess'``). When the study's kind module is installed and
declares agreement values, the kind is asked for them response by response, with the
items streamed alongside in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from django.db.models import Expression, FloatField, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotation.kinds import TaskKind, UnknownKind, get_kind
from annotation.models import Enrollment, Item, Participant, Response, Study
from scoring.reports.base import (
    Columns,
    Field,
    KindReport,
    StudyData,
    empty_observations,
    observation_columns,
)

CHUNK = 20_000
Progress = Callable[[int], None]

_RESPONSE_COLUMNS = (
    "item_id",
    "participant_id",
    "points",
    "correct",
    "is_attention_check",
    "flagged",
    "duration_seconds",
)


def load_study_data(study: Study, builder: KindReport, *, progress: Progress | None = None) -> StudyData:
    """Everything the reports of ``study`` need, read in bulk."""
    kind = _kind_with_agreement(study.kind)
    item_ids, items = _read_items(study, builder.item_fields)
    participant_ids, participants = _read_participants(study)
    responses, observations = _read_responses(study, builder, kind, progress)
    responses.data["item"] = np.searchsorted(item_ids, responses.data.pop("item_id"))
    responses.data["participant"] = np.searchsorted(participant_ids, responses.data.pop("participant_id"))
    excluded = set(
        Enrollment.objects.filter(study=study, excluded=True).values_list("participant_id", flat=True)
    )
    responses.data["excluded"] = np.isin(participant_ids, list(excluded))[responses["participant"]]
    data = StudyData(
        kind=study.kind,
        config=study.config or {},
        annotations_per_item=study.annotations_per_item,
        items=items,
        responses=responses,
        participants=participants,
        observations=observations if observations is not None else empty_observations(),
    )
    if kind is None:
        data.observations = builder.observations(data) or empty_observations()
    return data


def _kind_with_agreement(name: str) -> TaskKind | None:
    """The installed kind, if it declares agreement values (else the builder's own)."""
    try:
        kind = get_kind(name)
    except UnknownKind:
        return None
    return kind if type(kind).agreement_values is not TaskKind.agreement_values else None


def _read_items(study: Study, fields: dict[str, Field]) -> tuple[np.ndarray, Columns]:
    names = ["id", "external_id", "attention", *fields]
    query = (
        Item.objects.filter(study=study)
        .order_by("id")
        .values_list("id", "external_id", "is_attention_check", *[_expression(f) for f in fields.values()])
    )
    types = {
        "id": "number",
        "external_id": "text",
        "attention": "bool",
        **{n: f.type for n, f in fields.items()},
    }
    columns = _collect(query.iterator(chunk_size=CHUNK), names, types)
    item_ids = columns.data.pop("id").astype(np.int64)
    return item_ids, columns


def _read_participants(study: Study) -> tuple[np.ndarray, Columns]:
    answered = Response.objects.filter(study=study).values("participant_id")
    query = (
        Participant.objects.filter(pk__in=Subquery(answered))
        .order_by("id")
        .values_list("id", "source", "platform_worker_id", "public_id")
    )
    ids, sources, names = [], [], []
    for pk, source, worker_id, public_id in query.iterator(chunk_size=CHUNK):
        ids.append(pk)
        sources.append(source)
        names.append(worker_id or public_id)
    return np.asarray(ids, dtype=np.int64), Columns(
        {"source": np.asarray(sources, dtype=object), "name": np.asarray(names, dtype=object)}
    )


def _read_responses(
    study: Study, builder: KindReport, kind: TaskKind | None, progress: Progress | None
) -> tuple[Columns, Columns | None]:
    fields = builder.response_fields
    extra = ["answer"] if kind is not None else []
    names = ["item_id", "participant_id", "points", "correct", "attention", "flagged", "seconds", *fields]
    types = {
        "item_id": "number",
        "participant_id": "number",
        "points": "number",
        "correct": "number",
        "attention": "bool",
        "flagged": "bool",
        "seconds": "number",
        **{n: f.type for n, f in fields.items()},
    }
    query = (
        Response.objects.filter(study=study)
        .order_by("item_id", "id")
        .values_list(*_RESPONSE_COLUMNS, *[_expression(f) for f in fields.values()], *extra)
    )
    rows = query.iterator(chunk_size=CHUNK)
    if kind is None:
        return _collect(rows, names, types, progress), None
    observer = _Observer(kind, study)
    return _collect(observer.watch(rows), names, types, progress), observer.columns()


class _Observer:
    """Asks the kind for each response's agreement values, items streamed in id order."""

    def __init__(self, kind: TaskKind, study: Study):
        self.kind = kind
        self.study = study
        self.items = self._items()
        self.item = None
        self.found: tuple[list, list, list, list, list] = ([], [], [], [], [])

    def _items(self) -> Iterator[Item]:
        query = Item.objects.filter(study=self.study).order_by("id")
        for item in query.iterator(chunk_size=1000):
            item.study = self.study
            yield item

    def watch(self, rows: Iterator[tuple]) -> Iterator[tuple]:
        """The rows without their trailing answer, after recording its observations."""
        response, unit, question, value, level = self.found
        for index, values in enumerate(rows):
            item_id, answer = values[0], values[-1]
            while self.item is None or self.item.pk != item_id:
                self.item = next(self.items)
            for observation in self.kind.agreement_values(self.item, answer):
                response.append(index)
                unit.append(observation.unit)
                question.append(observation.question)
                value.append(observation.value)
                level.append(observation.level)
            yield values[:-1]

    def columns(self) -> Columns:
        response, unit, question, value, level = self.found
        return observation_columns(
            response, _objects(unit), _objects(question), _objects(value), _objects(level)
        )


def _expression(field: Field) -> Expression | str:
    if field.type == "number":
        return Cast(KT(field.path), FloatField())
    if field.type == "text":
        return KT(field.path)
    return field.path


def _collect(
    rows: Iterator[tuple], names: list[str], types: dict[str, str], progress: Progress | None = None
) -> Columns:
    """Value tuples → one array per column, converted a chunk at a time."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    chunk: list[tuple] = []
    done = 0
    for values in rows:
        chunk.append(values)
        if len(chunk) == CHUNK:
            done += _convert(chunk, names, types, parts)
            chunk = []
            if progress:
                progress(done)
    done += _convert(chunk, names, types, parts)
    if progress:
        progress(done)
    return Columns({name: _concatenate(parts[name], types[name]) for name in names})


def _convert(chunk: list[tuple], names: list[str], types: dict[str, str], parts: dict) -> int:
    if not chunk:
        return 0
    for name, column in zip(names, zip(*chunk, strict=True), strict=True):
        parts[name].append(_array(column, types[name]))
    return len(chunk)


def _array(column: tuple, kind: str) -> np.ndarray:
    if kind == "number":
        return np.array(column, dtype=np.float64)
    if kind == "bool":
        return np.array(column, dtype=bool)
    if kind == "text":
        return np.array(["" if v is None else str(v) for v in column], dtype=object)
    return _objects(column)


def _objects(values) -> np.ndarray:
    """A 1-D object array even when the values are lists (np.array would nest them)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _concatenate(parts: list[np.ndarray], kind: str) -> np.ndarray:
    if parts:
        return np.concatenate(parts)
    dtype = {"number": np.float64, "bool": bool}.get(kind, object)
    return np.zeros(0, dtype=dtype)
