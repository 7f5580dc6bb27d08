"""Reading a study for its reports: a handful of queries, straight into column arrays.

Never an ORM object per response. The database pulls the fields a kind's report needs
out of the JSON columns (``answer ->> 'guess'``), each once however many fields name it.
On PostgreSQL every number and every text field of a table comes back in one ``COPY
(SELECT …) TO STDOUT (FORMAT binary)`` of fixed-width rows of float8, which NumPy reads
as one structured array without a Python step per row; a text field travels as its
position among the field's distinct values, which one small query returns first. JSON
fields, and everything on SQLite, come through a server-side cursor in chunks. All reads
share one snapshot (repeatable read), so the parts line up and match the fingerprint
taken with them.

Agreement values: a kind that declares them as plain answer fields (``agreement_fields``)
has them read as columns with everything else; a kind that computes them
(``agreement_per_answer``) is asked response by response, with the items streamed
alongside in the same order; for anything else the report builder derives them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from django.db import connection, transaction
from django.db.models import Case, F, FloatField, IntegerField, QuerySet, When
from django.db.models.expressions import Combinable
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Length

from annotation.kinds import TaskKind, get_kind
from annotation.models import Item, Participant, Study
from annotation.services.db.pgcopy import copy_to, read_batches
from annotation.services.populations import ADJUDICATOR, MACHINE, real_answers, real_enrollments
from annotation.services.pseudonyms import pseudonym
from scoring.item_cache import cached_item_columns
from scoring.reports.base import (
    Columns,
    Field,
    KindReport,
    StudyData,
    observation_columns,
    stacked,
)
from stats.counting import distinct_counts, row_numbers

CHUNK = 20_000
# Provenance keys agreement is grouped by unless a reports job says otherwise.
DEFAULT_BY = ("system",)

_RESPONSE_FIELDS = {
    "item_id": Field("item_id", "column"),
    "participant_id": Field("participant_id", "column"),
    "points": Field("points", "column"),
    "correct": Field("correct", "truth"),
    "attention": Field("is_attention_check", "truth"),
    "flagged": Field("flagged", "truth"),
    "strong_sign": Field("strong_sign", "truth"),
    "seconds": Field("duration_seconds", "column"),
    "version": Field("study_version", "column"),  # NaN: given before versions were recorded
}


def load_study_data(study: Study, builder: KindReport, *, by: Sequence[str] = ()) -> StudyData:
    """Everything the reports of ``study`` need, read in bulk (call inside one snapshot);
    ``by``: provenance keys of the items agreement is also grouped by (``provenance:<key>``)."""
    kind = get_kind(study.kind)  # UnknownKind for a kind this site does not have
    declared = () if kind.agreement_per_answer else kind.agreement_fields
    item_fields = {
        "attention": Field("is_attention_check", "truth"),
        "external_id": Field("external_id", "label"),  # names the aggregated labels' items
        # the human subset's logged probability (NaN: none) and draw: the hybrid figures' weights
        "inclusion": Field("human_inclusion", "column"),
        "for_humans": Field("for_humans", "truth"),
    } | builder.item_fields
    item_fields |= {f"provenance:{key}": Field(f"provenance__{key}", "text") for key in by}
    items = cached_item_columns(
        study, item_fields, lambda: _read_table(Item.objects.filter(study=study), item_fields, by_id=True)
    )
    fields = _RESPONSE_FIELDS | builder.response_fields | _declared_fields(declared)
    observations: Columns | None
    if kind.agreement_per_answer:
        responses, observations = _read_with_agreement(study, fields, kind)
    else:
        responses = _read_table(real_answers(study), fields)
        observations = None  # once the responses' items are row numbers (below)
    participant_ids, participants, excluded = _read_participants(study, responses["participant_id"])
    responses.data["item"] = row_numbers(items.data.pop("id"), responses.data.pop("item_id"))
    responses.data["participant"] = row_numbers(participant_ids, responses.data.pop("participant_id"))
    responses.data["excluded"] = excluded[responses["participant"]]
    # Adjudicated answers (participants of source ``adjudicator``, never enrolled) and the
    # items that have one: the ``adjudicated`` population puts the one in place of the others.
    responses.data["adjudicator"] = participants["adjudicator"][responses["participant"]]
    items.data["adjudicated"] = np.zeros(len(items), dtype=bool)
    items.data["adjudicated"][responses["item"][responses["adjudicator"]]] = True
    for name in ("attention", "flagged", "strong_sign"):
        responses.data[name] = responses[name] == 1
    items.data["attention"] = items["attention"] == 1
    if observations is None:
        observations = _declared_observations(responses, declared)
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
    """One observation per response and declared field (units: the responses' items, by
    row number: whole numbers, which group faster than the ids as floats, in the same order)."""
    parts = []
    for field in declared:
        values = responses.data.pop(f"agreement:{field.key}")
        given = values != "" if field.level == "nominal" else ~np.isnan(values.astype(float, copy=False))
        rows = np.flatnonzero(given)
        parts.append(
            observation_columns(rows, responses["item"][rows], field.question, values[rows], field.level)
        )
    return stacked(parts)


def _read_participants(study: Study, answered: np.ndarray) -> tuple[np.ndarray, Columns, np.ndarray]:
    """The study's participants (ids sorted): whether each is a model (an LLM simulator or
    automatic rater, then with its name and recorded definition), and whether a researcher
    excluded them. Anyone who answered without an enrollment row is looked up directly."""
    is_model = Case(When(participant__source=MACHINE, then=1), default=0)
    judges = Case(When(participant__source=ADJUDICATOR, then=1), default=0)
    fields = {"participant_id": Field("participant_id", "column"), "excluded": Field("excluded", "truth")}
    extra: dict[str, Combinable] = {"model": is_model, "adjudicator": judges}
    table = _read_table(real_enrollments(study), fields, extra=extra)
    ids, excluded, model = table["participant_id"], table["excluded"] == 1, table["model"] == 1
    adjudicator = table["adjudicator"] == 1
    missing = np.setdiff1d(distinct_counts(answered)[0], ids)  # counted, not sorted, when ids are near
    if missing.size:
        lost = Participant.objects.filter(pk__in=missing.astype(np.int64).tolist())
        sources = dict(lost.values_list("id", "source"))
        ids = np.concatenate([ids, missing])
        excluded = np.concatenate([excluded, np.zeros(missing.size, dtype=bool)])
        model = np.concatenate([model, [sources.get(int(pk)) == MACHINE for pk in missing]])
        found = [sources.get(int(pk)) == ADJUDICATOR for pk in missing]
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
    query = real_answers(study).order_by("item_id", "id")
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
    of ``query``; with ``by_id``, plus ``id`` and in id order (else in any order, which saves
    a copy of every column, and without ids on PostgreSQL unless JSON fields are read apart
    and must be matched to the rest by id: a column fewer to read and to copy)."""
    extra = extra or {}
    types = {
        "id": "number",
        **{n: _column_type(f) for n, f in fields.items()},
        **dict.fromkeys(extra, "number"),
    }
    postgresql = connection.vendor == "postgresql"
    ids = by_id or not postgresql or any(types[n] == "json" for n in fields)
    names = [*(["id"] if ids else []), *fields, *extra]
    expressions = {"id": F("id"), **{n: _expression(f) for n, f in fields.items()}, **extra}
    if not postgresql:
        stream = _stream(query.order_by("id"), [expressions[n] for n in names], _json_positions(types, names))
        return _without_ids(_collect(stream, names, types), by_id)
    # A value two fields name (the boundary's guess: a figure and the agreement value) is read once.
    first: dict[Field, str] = {}
    again = {n: first.setdefault(f, n) for n, f in fields.items() if types[n] != "json"}
    again = {n: original for n, original in again.items() if original != n}
    flat = [n for n in names if types[n] != "json" and n not in again]
    columns = _copy_columns(query, {n: expressions[n] for n in flat}, {n for n in flat if types[n] == "text"})
    columns.data.update({n: columns[original] for n, original in again.items()})
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
    return _without_ids(columns, by_id)


def _without_ids(columns: Columns, by_id: bool) -> Columns:
    if not by_id:
        columns.data.pop("id", None)
    return columns


def _copy_columns(query: QuerySet, expressions: dict[str, Combinable], text: set[str]) -> Columns:
    """Numbers and texts through one binary COPY of fixed-width rows, decoded by NumPy at once.

    Every value travels as a float8 that is never NULL (NaN instead), so each row of the
    binary COPY has the same length and the whole output is one structured NumPy array:
    no Python step per row or per value, and no aggregate, window or sort over the rows in
    the database (the scan stays as plain as the anchor's; PostgreSQL may run it in
    parallel). The innermost SELECT (built by the ORM) extracts the narrow columns. A text
    column travels as its position among the column's distinct values: one query first
    collects those (one hashed pass, ``GROUPING SETS``), and the COPY joins each text to its
    position by a hash join on that short list; NULL becomes "".
    """
    names = list(expressions)
    selected = [expressions[n] if n in text else Cast(expressions[n], FloatField()) for n in names]
    sql, params = query.order_by().values_list(*selected).query.sql_with_params()
    aliases = [f"c{i}" for i in range(len(names))]
    texts = [alias for alias, name in zip(aliases, names, strict=True) if name in text]
    source = f"({sql}) AS t({', '.join(aliases)})"
    output = io.BytesIO()  # written from C by the driver, one row at a time
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")  # compiling these one-off scans costs more than it saves
        labels = _distinct_texts(cursor, source, params, texts)
        numbers, joins = [], []
        for alias in aliases:
            if alias in labels:
                joins.append(
                    f"LEFT JOIN unnest(%s::text[]) WITH ORDINALITY AS d{alias}(v, n) ON d{alias}.v = {alias}"
                )
                numbers.append(f"COALESCE(d{alias}.n, 0)::float8")
            else:
                numbers.append(f"COALESCE({alias}, 'NaN'::float8)")
        select = f"SELECT {', '.join(numbers)} FROM {source} {' '.join(joins)}"  # noqa: S608 - ORM-built SQL
        arrays = [list(labels[alias][1:]) for alias in texts]
        copy_to(cursor, select, [*params, *arrays], "FORMAT binary", output)
    columns = Columns(dict(zip(names, _decode_rows(output.getbuffer(), len(names)), strict=True)))
    for alias, name in zip(aliases, names, strict=True):
        if alias in labels:
            columns.data[name] = labels[alias][columns[name].astype(np.int64)]
    return columns


def _distinct_texts(cursor, source: str, params: Sequence, texts: list[str]) -> dict[str, np.ndarray]:
    """Per text column: "" (for NULL and position 0), then its distinct values in code-point
    order (Python's order of str), in one pass over the rows."""
    if not texts:
        return {}
    grouped = ", ".join(f"GROUPING({alias})" for alias in texts)
    sets = ", ".join(f"({alias})" for alias in texts)
    cursor.execute(
        f"SELECT {', '.join(texts)}, {grouped} FROM {source} GROUP BY GROUPING SETS ({sets})",  # noqa: S608
        params,
    )
    found: dict[str, set] = {alias: set() for alias in texts}
    for row in cursor.fetchall():
        for index, alias in enumerate(texts):
            if row[len(texts) + index] == 0 and row[index] is not None:
                found[alias].add(row[index])
    return {alias: np.array(["", *sorted(values)], dtype=object) for alias, values in found.items()}


def _decode_rows(buffer: memoryview, count: int) -> list[np.ndarray]:
    """The columns of a binary COPY whose rows are ``count`` non-NULL float8 fields: a
    19-byte signature and flags, a header extension, then rows of a 2-byte field count and
    per field a 4-byte length (8) and the big-endian value, then a 2-byte trailer."""
    extension = int.from_bytes(buffer[15:19], "big")
    body = buffer[19 + extension : len(buffer) - 2]
    layout = [("fields", ">i2")]
    for index in range(count):
        layout += [(f"length{index}", ">i4"), (f"value{index}", ">f8")]
    rows = np.frombuffer(body, dtype=np.dtype(layout))
    if not (rows["fields"] == count).all():  # a NULL (no value bytes) would shift every later row
        raise RuntimeError("the binary COPY does not have the fixed-width rows asked for")
    return [rows[f"value{index}"].astype(np.float64) for index in range(count)]


def _stream(query: QuerySet, expressions: list, json_positions: Sequence[int] = ()) -> Iterator[tuple]:
    """Value tuples from a server-side cursor, fetched a chunk at a time.

    The ORM builds the SQL; rows come straight from the driver, without Django's
    per-row conversions; the columns at ``json_positions`` are decoded here.
    """
    sql, params = query.values_list(*expressions).query.sql_with_params()
    for rows in read_batches(sql, params, CHUNK):
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
    return {"column": "number", "truth": "number", "label": "text", "length": "number"}.get(
        field.type, field.type
    )


def _expression(field: Field) -> Combinable:
    """The SQL for a field (see ``Field``): booleans as 0/1, JSON values extracted."""
    if field.type == "truth":
        return Cast(F(field.path), IntegerField())
    if field.type == "number":
        return Cast(KT(field.path), FloatField())
    if field.type == "text":
        return KT(field.path)
    if field.type == "length":  # a text's length in characters, counted by the database
        return Cast(Length(KT(field.path)), FloatField())
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
