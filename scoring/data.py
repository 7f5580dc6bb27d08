"""Reading a study for its reports: a handful of queries, straight into column arrays.

Never an ORM object per response. The database pulls the fields a kind's report needs
out of the JSON columns (``answer ->> 'guess'``). On PostgreSQL every number and every
text field of a table comes back in one ``COPY (SELECT array_agg(…) …) TO STDOUT
(FORMAT binary)``: one float8 array per column, decoded by NumPy without a Python step per
row; a text field travels as its rank among the field's distinct values (``DENSE_RANK``)
and one small query returns the values themselves. JSON fields, and everything on SQLite,
come through a server-side cursor in chunks. All reads share one snapshot (repeatable
read), so the parts line up and match the fingerprint taken with them.

Agreement values: a kind that declares them as plain answer fields (``agreement_fields``)
has them read as columns with everything else; a kind that computes them
(``agreement_values`` overridden) is asked response by response, with the items streamed
alongside in the same order; for anything else the report builder derives them.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from django.db import connection, transaction
from django.db.models import Case, F, FloatField, IntegerField, QuerySet, When
from django.db.models.expressions import Combinable
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotation.kinds import TaskKind, get_kind
from annotation.models import Enrollment, Item, Participant, Response, Study
from annotation.services.pseudonyms import pseudonym
from scoring.reports.base import (
    Columns,
    Field,
    KindReport,
    StudyData,
    observation_columns,
    stacked,
)

CHUNK = 20_000
# Rows per message of the binary COPY (each message is decoded as it arrives).
COPY_CHUNK_ROWS = 131_072

_RESPONSE_FIELDS = {
    "item_id": Field("item_id", "column"),
    "participant_id": Field("participant_id", "column"),
    "points": Field("points", "column"),
    "correct": Field("correct", "truth"),
    "attention": Field("is_attention_check", "truth"),
    "flagged": Field("flagged", "truth"),
    "seconds": Field("duration_seconds", "column"),
}


def load_study_data(study: Study, builder: KindReport, *, by: Sequence[str] = ()) -> StudyData:
    """Everything the reports of ``study`` need, read in bulk (call inside one snapshot);
    ``by``: provenance keys of the items agreement is also grouped by (``provenance:<key>``)."""
    kind = get_kind(study.kind)  # UnknownKind for a kind this site does not have
    asks_each_answer = type(kind).agreement_values is not TaskKind.agreement_values
    declared = () if asks_each_answer else kind.agreement_fields
    item_fields = {"attention": Field("is_attention_check", "truth")} | builder.item_fields
    item_fields |= {f"provenance:{key}": Field(f"provenance__{key}", "text") for key in by}
    items = _read_table(Item.objects.filter(study=study), item_fields, by_id=True)
    fields = _RESPONSE_FIELDS | builder.response_fields | _declared_fields(declared)
    observations: Columns | None
    if kind is not None and asks_each_answer:
        responses, observations = _read_with_agreement(study, fields, kind)
    else:
        responses = _read_table(Response.objects.filter(study=study), fields)
        observations = _declared_observations(responses, declared)
    participant_ids, participants, excluded = _read_participants(study, responses["participant_id"])
    responses.data["item"] = np.searchsorted(items.data.pop("id"), responses.data.pop("item_id"))
    responses.data["participant"] = np.searchsorted(participant_ids, responses.data.pop("participant_id"))
    responses.data["excluded"] = excluded[responses["participant"]]
    # Adjudicated answers (participants of source ``adjudicator``, never enrolled) and the
    # items that have one: the ``adjudicated`` population puts the one in place of the others.
    responses.data["adjudicator"] = participants["adjudicator"][responses["participant"]]
    items.data["adjudicated"] = np.zeros(len(items), dtype=bool)
    items.data["adjudicated"][responses["item"][responses["adjudicator"]]] = True
    for name in ("attention", "flagged"):
        responses.data[name] = responses[name] == 1
    items.data["attention"] = items["attention"] == 1
    return StudyData(
        kind=study.kind,
        config=study.config or {},
        annotations_per_item=study.annotations_per_item,
        items=items,
        responses=responses,
        participants=participants,
        observations=observations,
        rater_labels=_pseudonyms(study, participant_ids),
    )


def _pseudonyms(study: Study, participant_ids: np.ndarray):
    """Participant row numbers → their pseudonyms in the study's exports (a query for the
    ones not asked for before)."""
    known: dict[int, str] = {}

    def labels(rows: np.ndarray) -> list[str]:
        wanted = participant_ids[np.asarray(rows, dtype=np.int64)].tolist()
        missing = [pk for pk in wanted if pk not in known]
        if missing:
            found = Participant.objects.filter(pk__in=missing).values_list(
                "id", "source", "platform_worker_id", "public_id"
            )
            for pk, source, worker, public in found:
                known[pk] = pseudonym(
                    study.pseudonym_salt, source=source, platform_worker_id=worker, public_id=public
                )
        return [known.get(pk, "") for pk in wanted]

    return labels


@contextmanager
def one_snapshot() -> Iterator[None]:
    """A transaction whose reads all see one snapshot of the database.

    PostgreSQL's repeatable read, set when this opens the transaction (inside an outer
    transaction the outer one decides); SQLite's transactions always read one state.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def _declared_fields(declared) -> dict[str, Field]:
    """The answer fields a kind declares as agreement values, read like any other field."""
    return {
        f"agreement:{field.key}": Field(
            f"answer__{field.key}", "text" if field.level == "nominal" else "number"
        )
        for field in declared
    }


def _declared_observations(responses: Columns, declared) -> Columns:
    """One observation per response and declared field (units: the responses' items)."""
    parts = []
    for field in declared:
        values = responses.data.pop(f"agreement:{field.key}")
        given = values != "" if field.level == "nominal" else ~np.isnan(values.astype(float))
        rows = np.flatnonzero(given)
        parts.append(
            observation_columns(rows, responses["item_id"][rows], field.question, values[rows], field.level)
        )
    return stacked(parts)


def _read_participants(study: Study, answered: np.ndarray) -> tuple[np.ndarray, Columns, np.ndarray]:
    """The study's participants (ids sorted): whether each is a model (an LLM simulator or
    automatic rater, then with its name and recorded definition), and whether a researcher
    excluded them. Anyone who answered without an enrollment row is looked up directly."""
    is_model = Case(When(participant__source=Participant.Source.MODEL, then=1), default=0)
    judges = Case(When(participant__source=Participant.Source.ADJUDICATOR, then=1), default=0)
    fields = {"participant_id": Field("participant_id", "column"), "excluded": Field("excluded", "truth")}
    extra: dict[str, Combinable] = {"model": is_model, "adjudicator": judges}
    table = _read_table(Enrollment.objects.filter(study=study), fields, extra=extra)
    ids, excluded, model = table["participant_id"], table["excluded"] == 1, table["model"] == 1
    adjudicator = table["adjudicator"] == 1
    missing = np.setdiff1d(np.unique(answered), ids)
    if missing.size:
        lost = Participant.objects.filter(pk__in=missing.astype(np.int64).tolist())
        sources = dict(lost.values_list("id", "source"))
        ids = np.concatenate([ids, missing])
        excluded = np.concatenate([excluded, np.zeros(missing.size, dtype=bool)])
        model = np.concatenate([model, [sources.get(int(pk)) == Participant.Source.MODEL for pk in missing]])
        found = [sources.get(int(pk)) == Participant.Source.ADJUDICATOR for pk in missing]
        adjudicator = np.concatenate([adjudicator, np.array(found, dtype=bool)])
    order = np.argsort(ids, kind="stable")
    ids, excluded, model = ids[order].astype(np.int64), excluded[order], model[order]
    adjudicator = adjudicator[order]
    names = np.full(len(ids), "", dtype=object)
    definitions = np.full(len(ids), None, dtype=object)
    models = Participant.objects.filter(pk__in=ids[model].tolist()).values_list(
        "id", "platform_worker_id", "public_id", "definition"
    )
    for pk, worker, public, definition in models:
        names[np.searchsorted(ids, pk)] = worker or public
        definitions[np.searchsorted(ids, pk)] = definition
    columns = Columns({"model": model, "name": names, "definition": definitions, "adjudicator": adjudicator})
    return ids, columns, excluded


def _read_with_agreement(study: Study, fields: dict[str, Field], kind: TaskKind) -> tuple[Columns, Columns]:
    """One pass in item order, asking the kind for each answer's agreement values."""
    names = ["id", *fields]
    expressions = ["id", *[_expression(f) for f in fields.values()], "answer"]
    types = {"id": "number", **{n: _column_type(f) for n, f in fields.items()}}
    observer = _Observer(kind, study)
    query = Response.objects.filter(study=study).order_by("item_id", "id")
    json_positions = [*_json_positions(types, names), len(expressions) - 1]
    try:
        columns = _collect(observer.watch(_stream(query, expressions, json_positions)), names, types)
    finally:
        observer.items.close()  # its server-side cursor must close inside the snapshot
    return columns, observer.columns()


class _Observer:
    """Asks the kind for each response's agreement values, items streamed in id order."""

    def __init__(self, kind: TaskKind, study: Study):
        self.kind = kind
        self.study = study
        self.items = self._items()
        self.item: Item | None = None
        self.found: tuple[list, list, list, list, list] = ([], [], [], [], [])

    def _items(self) -> Generator[Item]:
        query = Item.objects.filter(study=self.study).order_by("id")
        for item in query.iterator(chunk_size=1000):
            item.study = self.study
            yield item

    def watch(self, rows: Iterator[tuple]) -> Iterator[tuple]:
        """The rows without their trailing answer, after recording its observations."""
        response, unit, question, value, level = self.found
        for index, values in enumerate(rows):
            item_id, answer = values[1], values[-1]
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


# --- reading a table --------------------------------------------------------------------------


def _read_table(
    query: QuerySet,
    fields: dict[str, Field],
    *,
    by_id: bool = False,
    extra: dict[str, Combinable] | None = None,
) -> Columns:
    """Column arrays for ``fields`` (and the numeric expressions in ``extra``) of every row
    of ``query``, plus ``id``; in id order when ``by_id`` or when JSON fields are read
    apart (else in any order, which saves a copy of every column)."""
    extra = extra or {}
    names = ["id", *fields, *extra]
    types = {
        "id": "number",
        **{n: _column_type(f) for n, f in fields.items()},
        **dict.fromkeys(extra, "number"),
    }
    expressions = {"id": F("id"), **{n: _expression(f) for n, f in fields.items()}, **extra}
    if connection.vendor != "postgresql":
        stream = _stream(query.order_by("id"), list(expressions.values()), _json_positions(types, names))
        return _collect(stream, names, types)
    flat = [n for n in names if types[n] != "json"]
    columns = _copy_columns(query, {n: expressions[n] for n in flat}, {n for n in flat if types[n] == "text"})
    streamed = [n for n in names if types[n] == "json"]
    if streamed or by_id:
        columns = columns.take(np.argsort(columns["id"], kind="stable"))
    if streamed:
        stream = _stream(
            query.order_by(),
            [F("id"), *[expressions[n] for n in streamed]],
            list(range(1, len(streamed) + 1)),
        )
        json_columns = _collect(stream, ["id", *streamed], {"id": "number", **{n: "json" for n in streamed}})
        json_columns = json_columns.take(np.argsort(json_columns["id"], kind="stable"))
        if not np.array_equal(json_columns["id"], columns["id"]):
            raise RuntimeError("the two reads of one table differ; read them in one snapshot")
        columns.data.update({n: json_columns[n] for n in streamed})
    return columns


def _copy_columns(query: QuerySet, expressions: dict[str, Combinable], text: set[str]) -> Columns:
    """Numbers and texts through one binary COPY of rows of arrays, one row per chunk.

    The innermost SELECT (built by the ORM) extracts the narrow columns (``OFFSET 0`` keeps
    the planner from carrying whole JSON documents through the sorts); the middle one
    ranks each text column among its distinct values (in byte order) and numbers the rows
    into chunks; the outer one aggregates, per chunk, every column into a float8 array and
    each text column's distinct values into a text array (the ranks index them once
    sorted the same way). Each chunk is decoded as it arrives.
    """
    names = list(expressions)
    selected = [expressions[n] if n in text else Cast(expressions[n], FloatField()) for n in names]
    sql, params = query.order_by().values_list(*selected).query.sql_with_params()
    aliases = [f"c{i}" for i in range(len(names))]
    middle, numbers, texts = [f"(ROW_NUMBER() OVER () - 1) / {COPY_CHUNK_ROWS} AS chunk"], [], []
    for index, (alias, name) in enumerate(zip(aliases, names, strict=True)):
        if name in text:
            rank = f'DENSE_RANK() OVER (ORDER BY {alias} COLLATE "C" NULLS FIRST)'
            middle.append(f"({rank})::float8 AS r{index}")
            numbers.append(f"r{index}")
            texts.append(alias)
        else:
            numbers.append(alias)
        middle.append(alias)
    aggregates = [f"array_agg(COALESCE({n}, 'NaN'::float8))" for n in numbers]
    aggregates += [f"array_agg(DISTINCT {a})" for a in texts]
    sink = _Chunks(len(numbers), len(texts))
    with transaction.atomic(), connection.cursor() as cursor:
        # Compiling these one-off scans costs more than it saves; the rank sorts fit in memory.
        cursor.execute("SET LOCAL jit = off")
        cursor.execute("SET LOCAL work_mem = '64MB'")
        inner = cursor.cursor.mogrify(sql, params).decode()
        outer = (
            f"SELECT {', '.join(aggregates)} FROM (SELECT {', '.join(middle)} "  # noqa: S608 - ORM-built SQL
            f"FROM ({inner} OFFSET 0) AS t({', '.join(aliases)})) AS u GROUP BY chunk"
        )
        cursor.cursor.copy_expert(f"COPY ({outer}) TO STDOUT WITH (FORMAT binary)", sink)
    floats, distinct_texts = sink.fields()
    columns = Columns(dict(zip(names, floats, strict=True)))
    for name, distinct in zip([n for n in names if n in text], distinct_texts, strict=True):
        columns.data[name] = _ranked_texts(distinct)[columns[name].astype(np.int64)]
    return columns


class _Chunks:
    """Decodes a binary COPY of rows of arrays as its messages arrive (one row each; the
    first also carries the 19-byte header, the last is the two-byte trailer): the first
    ``numbers`` fields are float8 arrays, concatenated; the others text arrays of distinct
    values, merged."""

    def __init__(self, numbers: int, texts: int):
        self.numbers = numbers
        self.floats: list[list[np.ndarray]] = [[] for _ in range(numbers)]
        self.texts: list[set] = [set() for _ in range(texts)]
        self.started = False

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        if not self.started:
            view, self.started = view[19:], True
        if len(view) > 2:
            fields = _decode_arrays(view, self.numbers + len(self.texts))
            for parts, values in zip(self.floats, fields, strict=False):
                parts.append(np.asarray(values, dtype=np.float64))
            for distinct, values in zip(self.texts, fields[self.numbers :], strict=True):
                distinct.update(values)
        return len(data)

    def fields(self) -> tuple[list[np.ndarray], list[list]]:
        floats = [np.concatenate(parts) if parts else np.zeros(0) for parts in self.floats]
        return floats, [list(distinct) for distinct in self.texts]


def _ranked_texts(distinct: list) -> np.ndarray:
    """Index = the dense rank the query gave (1-based; 0 unused), value = the text ("" for
    NULL). Python's order of str (code points) is the "C" collation's order of UTF-8."""
    ordered = ([None] if None in distinct else []) + sorted(v for v in distinct if v is not None)
    return np.array(["", *("" if v is None else v for v in ordered)], dtype=object)


def _decode_arrays(buffer: memoryview, count: int) -> list:
    """One tuple of a binary COPY whose fields are arrays: float8[] → NumPy array, text[]
    → list of str (None for NULL); a NULL field → empty."""
    if len(buffer) < 2 or _int(buffer, 0, 2) != count:
        return [[] for _ in range(count)]
    offset = 2
    fields: list[np.ndarray | list] = []
    for _ in range(count):
        length = _int(buffer, offset, 4)
        offset += 4
        if length < 0:
            fields.append([])
            continue
        dimensions, element_type = _int(buffer, offset, 4), _int(buffer, offset + 8, 4)
        size = _int(buffer, offset + 12, 4) if dimensions else 0
        start = offset + 12 + 8 * dimensions
        if element_type == _FLOAT8_OID:
            elements = np.frombuffer(
                buffer, dtype=[("length", ">i4"), ("value", ">f8")], count=size, offset=start
            )
            fields.append(elements["value"].astype(np.float64))
        else:
            fields.append(_texts(buffer, start, size))
        offset += length
    return fields


_FLOAT8_OID = 701


def _texts(buffer: memoryview, offset: int, size: int) -> list:
    values: list[str | None] = []
    for _ in range(size):
        length = _int(buffer, offset, 4)
        offset += 4
        if length < 0:
            values.append(None)
            continue
        values.append(bytes(buffer[offset : offset + length]).decode())
        offset += length
    return values


def _int(buffer: memoryview, offset: int, size: int) -> int:
    return int.from_bytes(buffer[offset : offset + size], "big", signed=True)


def _stream(query: QuerySet, expressions: list, json_positions: Sequence[int] = ()) -> Iterator[tuple]:
    """Value tuples from a server-side cursor, fetched a chunk at a time.

    The ORM builds the SQL; rows come straight from the driver, without Django's
    per-row conversions; the columns at ``json_positions`` are decoded here.
    """
    sql, params = query.values_list(*expressions).query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(CHUNK):
            if json_positions:
                rows = [_decode_json(row, json_positions) for row in rows]
            yield from rows


def _json_positions(types: dict[str, str], names: list[str]) -> list[int]:
    return [index for index, name in enumerate(names) if types.get(name) == "json"]


def _decode_json(row: tuple, positions: Sequence[int]) -> tuple:
    values = list(row)
    for index in positions:
        if isinstance(values[index], str):
            values[index] = json.loads(values[index])
    return tuple(values)


def _column_type(field: Field) -> str:
    """How a field's values are held: ``number`` (float, NaN when absent), ``text``, ``json``."""
    return {"column": "number", "truth": "number", "label": "text"}.get(field.type, field.type)


def _expression(field: Field) -> Combinable:
    """The SQL for a field (see ``Field``): booleans as 0/1, JSON values extracted."""
    if field.type == "truth":
        return Cast(F(field.path), IntegerField())
    if field.type == "number":
        return Cast(KT(field.path), FloatField())
    if field.type == "text":
        return KT(field.path)
    return F(field.path)


def _collect(rows: Iterator[tuple], names: list[str], types: dict[str, str]) -> Columns:
    """Value tuples → one array per column, converted a chunk at a time."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    chunk: list[tuple] = []
    for values in rows:
        chunk.append(values)
        if len(chunk) == CHUNK:
            _convert(chunk, names, types, parts)
            chunk = []
    _convert(chunk, names, types, parts)
    return Columns({name: _concatenate(parts[name], types[name]) for name in names})


def _convert(chunk: list[tuple], names: list[str], types: dict[str, str], parts: dict) -> None:
    if chunk:
        for name, column in zip(names, zip(*chunk, strict=True), strict=True):
            parts[name].append(_array(column, types[name]))


def _array(column: tuple, kind: str) -> np.ndarray:
    if kind == "number":
        return np.array(column, dtype=np.float64)
    if kind == "text":
        return np.array(["" if v is None else str(v) for v in column], dtype=object)
    return _objects(column)


def _objects(values) -> np.ndarray:
    """A 1-D object array even when the values are lists (np.array would nest them)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _concatenate(parts: list[np.ndarray], kind: str) -> np.ndarray:
    if parts:
        return np.concatenate(parts)
    return np.zeros(0, dtype=np.float64 if kind == "number" else object)
