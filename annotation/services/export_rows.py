"""One row per response, read with a single streaming query (the export's hot path).

The database does the joins and turns JSON and timestamps into text, so Python only
swaps the participant's identity for a pseudonym and hands each row to a writer. Rows
come from a server-side cursor on PostgreSQL, in fixed-size batches: memory stays flat
whatever the number of responses.

Which payload, provenance and answer fields become columns is found generically: the
scalar fields present in the study's item payloads and provenance, and the fields the
kind's ``Answer`` serializer declares. No kind is named here.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.db import connection, transaction

from annotation.models import Assignment, Enrollment, Item, Participant, Response, Study
from annotation.services.jobs import Progress, no_progress

from .pseudonyms import PseudonymCache

BATCH_ROWS = 5000
SCALARS = (str, int, float, bool, type(None))


def rows_written(progress: Progress, done: int, total: int) -> None:
    """Report an export's progress in rows (the job's callback stops a cancelled export)."""
    progress(done, total, f"{done} of {total} rows")


@dataclass(frozen=True)
class Column:
    """An export column: its name, how it is stored, and what it means (for the docs)."""

    name: str
    encoding: str  # "value" (a plain value), "boolean" (true/false text), "json" (JSON text),
    # or "scalar" (one field: plain text for CSV, JSON text for JSONL)
    description: str


FIXED_HEAD = [
    Column("response_id", "value", "The response's id in this export (unique per row)."),
    Column("study", "value", "The study's slug."),
    Column("kind", "value", "The study's task kind."),
    Column("item", "value", "The item's external_id, as in the study file."),
    Column("attention_check", "boolean", "true when the item is an attention check."),
    Column("participant", "value", "The participant's pseudonym (salted hash; stable within the study)."),
    Column("participant_source", "value", "organic, prolific, mturk, lab, expert or model."),
]
PLATFORM_ID = Column(
    "platform_worker_id", "value", "The crowd-platform id (only in exports an admin asked to include)."
)
FIXED_TAIL = [
    Column("position", "value", "1-based page number of this item in the participant's session."),
    Column("display_order", "json", "What the kind recorded when it handed out the item (e.g. shuffle)."),
    Column("shown_at", "value", "When the page was first shown (UTC, ISO 8601)."),
    Column("answered_at", "value", "When the answer was stored (UTC, ISO 8601)."),
    Column("duration_seconds", "value", "Seconds from shown to answered."),
    Column("points", "value", "Points scored against the truth, when the kind scores points."),
    Column("correct", "boolean", "true/false against gold or truth; empty when unscored."),
    Column("score_details", "json", "The kind's extra scoring figures (JSON)."),
    Column("flagged", "boolean", "true when the participant failed this study's attention checks."),
    Column("participant_flagged", "boolean", "true when a researcher or the checks flagged the participant."),
    Column("flag_reason", "value", "Why the participant was flagged or blocked (a researcher's reason)."),
    Column("excluded", "boolean", "true when a researcher excluded the participant from reports."),
    Column("attention_passed", "value", "Attention checks the participant passed in this study."),
    Column("attention_failed", "value", "Attention checks the participant failed in this study."),
    Column("imported", "boolean", "true when the answer was imported rather than given on the site."),
    Column("answer", "json", "The stored answer (JSON), in the kind's answer shape."),
]


@dataclass(frozen=True)
class ResponseRows:
    """The columns of a study's response export and a generator of its rows."""

    columns: list[Column]
    total: int
    rows: Callable[[], Iterator[list]]


def response_rows(
    study: Study, *, include_platform_ids: bool = False, plain_text: bool = False
) -> ResponseRows:
    """The study's responses as rows of ``columns`` (JSON columns as JSON text).

    ``plain_text`` (CSV) has the database give "scalar" columns as plain text (strings
    unquoted); otherwise they come as JSON text, ready to embed in a JSON line.
    """
    dialect = _dialect()
    answer_keys = _answer_fields(study)
    payload_keys, provenance_keys = _item_scalar_keys(study)
    extra = (
        [Column(f"answer.{k}", "scalar", "A field of the answer.") for k in answer_keys]
        + [Column(f"payload.{k}", "scalar", "A scalar field of the item's payload.") for k in payload_keys]
        + [Column(f"provenance.{k}", "scalar", "A field of the item's provenance.") for k in provenance_keys]
    )
    columns = [*FIXED_HEAD, *([PLATFORM_ID] if include_platform_ids else []), *FIXED_TAIL, *extra]
    sql, params = _select(dialect, study, answer_keys, payload_keys, provenance_keys, plain_text=plain_text)
    total = Response.objects.filter(study=study).count()

    def rows() -> Iterator[list]:
        names = PseudonymCache(study.pseudonym_salt)
        head = [study.slug, study.kind]
        for raw in _stream(sql, params):
            participant = names.get(raw[3], raw[4], raw[5], raw[6])
            ids = [raw[5]] if include_platform_ids else []
            yield [raw[0], *head, raw[1], raw[2], participant, raw[4], *ids, *raw[7:]]

    return ResponseRows(columns=columns, total=total, rows=rows)


def copy_csv_rows(
    study: Study, out, *, include_platform_ids: bool = False, progress: Progress = no_progress
) -> int:
    """PostgreSQL only: the CSV rows of ``response_rows`` (without the header), written by
    the database itself with ``COPY (SELECT …) TO STDOUT`` — several times faster than
    formatting rows in Python. Pseudonyms are computed here once per participant and
    joined from a temporary table. Returns the number of rows written."""
    answer_keys = _answer_fields(study)
    payload_keys, provenance_keys = _item_scalar_keys(study)
    participant = ["ps.pseudonym", "p.source", *(["p.platform_worker_id"] if include_platform_ids else [])]
    join = "JOIN pg_temp.export_pseudonyms ps ON ps.participant_id = r.participant_id "
    sql, params = _select(
        _Postgres, study, answer_keys, payload_keys, provenance_keys,
        plain_text=True, participant=participant, extra_join=join,
    )  # fmt: skip
    total = Response.objects.filter(study=study).count()
    with transaction.atomic(), connection.cursor() as cursor:
        _fill_pseudonyms(cursor, study)
        query = cursor.mogrify(sql, params).decode()
        cursor.copy_expert(
            f"COPY ({query}) TO STDOUT WITH (FORMAT csv)", _CountingWriter(out, progress, total)
        )
    rows_written(progress, total, total)
    return total


def _fill_pseudonyms(cursor, study: Study) -> None:
    """A temporary table of (participant id, pseudonym) for everyone who answered."""
    cursor.execute("DROP TABLE IF EXISTS pg_temp.export_pseudonyms")  # inside an outer transaction
    cursor.execute(
        "CREATE TEMPORARY TABLE export_pseudonyms (participant_id bigint PRIMARY KEY, pseudonym text) "
        "ON COMMIT DROP"
    )
    names = PseudonymCache(study.pseudonym_salt)
    answered = Response.objects.filter(study=study).values("participant_id")
    people = Participant.objects.filter(pk__in=answered).values_list(
        "id", "source", "platform_worker_id", "public_id"
    )
    buffer = io.StringIO()
    for participant_id, source, worker_id, public_id in people.iterator(chunk_size=BATCH_ROWS):
        buffer.write(f"{participant_id}\t{names.get(participant_id, source, worker_id, public_id)}\n")
        if buffer.tell() > 4_000_000:
            _flush_pseudonyms(cursor, buffer)
            buffer = io.StringIO()
    _flush_pseudonyms(cursor, buffer)


def _flush_pseudonyms(cursor, buffer: io.StringIO) -> None:
    buffer.seek(0)
    cursor.copy_expert("COPY pg_temp.export_pseudonyms (participant_id, pseudonym) FROM STDIN", buffer)


class _CountingWriter:
    """Hands COPY's output (bytes) to a binary file, reporting progress (and stopping when cancelled)
    about every megabyte; rows are estimated from line ends until the exact count."""

    def __init__(self, out, progress: Progress, total: int):
        self.out, self.progress, self.total = out, progress, total
        self.lines = self.pending = 0

    def write(self, data) -> int:
        self.out.write(data)
        self.lines += data.count(b"\n")
        self.pending += len(data)
        if self.pending > 1_000_000:
            self.pending = 0
            rows_written(self.progress, min(self.lines, self.total), self.total)
        return len(data)


def _stream(sql: str, params: list) -> Iterator[tuple]:
    """Rows in batches from a server-side cursor (PostgreSQL) or a plain one (SQLite)."""
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(BATCH_ROWS):
            yield from batch


def _answer_fields(study: Study) -> list[str]:
    """The fields the kind's answer serializer declares (values absent from an answer are empty)."""
    return list(study.task_kind.Answer().fields)


def _item_scalar_keys(study: Study) -> tuple[list[str], list[str]]:
    """Payload and provenance keys whose values are scalars in at least one item."""
    payload: dict[str, None] = {}  # dicts as ordered sets of keys
    provenance: dict[str, None] = {}
    for item_payload, item_provenance in (
        Item.objects.filter(study=study).values_list("payload", "provenance").iterator(chunk_size=2000)
    ):
        for target, values in ((payload, item_payload), (provenance, item_provenance)):
            for key, value in (values or {}).items():
                if isinstance(value, SCALARS):
                    target.setdefault(key, None)
    return list(payload), list(provenance)


_PARTICIPANT_RAW = ["r.participant_id", "p.source", "p.platform_worker_id", "p.public_id"]


def _select(
    dialect,
    study: Study,
    answer_keys,
    payload_keys,
    provenance_keys,
    *,
    plain_text: bool = False,
    participant: list[str] | None = None,
    extra_join: str = "",
) -> tuple[str, list]:
    """The export's SELECT. ``participant`` replaces the four raw participant columns (the
    COPY path puts the finished columns there); ``extra_join`` joins what they need."""
    tables = {
        "r": Response._meta.db_table,
        "a": Assignment._meta.db_table,
        "i": Item._meta.db_table,
        "p": Participant._meta.db_table,
        "e": Enrollment._meta.db_table,
    }
    d = dialect
    fields = [
        "r.id", *(["%s", "%s"] if participant else []), "i.external_id", d.boolean("i.is_attention_check"),
        *(participant or _PARTICIPANT_RAW),
        "a.position", d.json("r.display_order"), d.timestamp("r.shown_at"), d.timestamp("r.answered_at"),
        "r.duration_seconds", "r.points", d.boolean("r.correct"), d.json("r.score_details"),
        d.boolean("r.flagged"), d.boolean("p.flagged"), "p.flag_reason", d.boolean("e.excluded"),
        "e.attention_passed", "e.attention_failed", d.boolean("r.imported"), d.json("r.answer"),
    ]  # fmt: skip
    params: list = [study.slug, study.kind] if participant else []
    for column, keys in (
        ("r.answer", answer_keys),
        ("i.payload", payload_keys),
        ("i.provenance", provenance_keys),
    ):
        for key in keys:
            expression, key_params = (d.json_key_text if plain_text else d.json_key)(column, key)
            fields.append(expression)
            params.extend(key_params)
    # Only our own table names and expressions are interpolated; values are parameters.
    sql = (
        f"SELECT {', '.join(fields)} FROM {tables['r']} r "  # noqa: S608
        f"JOIN {tables['a']} a ON a.id = r.assignment_id "
        f"JOIN {tables['i']} i ON i.id = r.item_id "
        f"JOIN {tables['p']} p ON p.id = r.participant_id "
        f"LEFT JOIN {tables['e']} e ON e.participant_id = r.participant_id AND e.study_id = r.study_id "
        f"{extra_join}WHERE r.study_id = %s ORDER BY r.id"
    )
    return sql, [*params, study.pk]


class _Postgres:
    @staticmethod
    def json(column: str) -> str:
        return f"{column}::text"

    @staticmethod
    def json_key(column: str, key: str) -> tuple[str, list]:
        """One field's value as JSON text; NULL when absent or JSON null."""
        return f"NULLIF(({column} -> %s)::text, 'null')", [key]

    @staticmethod
    def json_key_text(column: str, key: str) -> tuple[str, list]:
        """One field as plain text: a string unquoted, anything else as JSON text."""
        return f"({column} ->> %s)", [key]

    @staticmethod
    def timestamp(column: str) -> str:
        return f"""to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""

    @staticmethod
    def boolean(column: str) -> str:
        return f"(CASE WHEN {column} THEN 'true' WHEN NOT {column} THEN 'false' END)"


class _SQLite(_Postgres):
    @staticmethod
    def json(column: str) -> str:
        return column

    @staticmethod
    def json_key(column: str, key: str) -> tuple[str, list]:
        path = '$."' + key.replace('"', '""') + '"'
        return f"NULLIF(({column} -> %s), 'null')", [path]

    @staticmethod
    def json_key_text(column: str, key: str) -> tuple[str, list]:
        path = '$."' + key.replace('"', '""') + '"'
        return (
            f"(CASE json_type({column}, %s) WHEN 'text' THEN ({column} ->> %s) ELSE ({column} -> %s) END)",
            [
                path,
                path,
                path,
            ],
        )

    @staticmethod
    def timestamp(column: str) -> str:
        return f"(replace({column}, ' ', 'T') || 'Z')"


def _dialect():
    return _Postgres if connection.vendor == "postgresql" else _SQLite
