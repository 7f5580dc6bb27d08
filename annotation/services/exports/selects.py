"""The export's SELECTs over the columns (``columns``), and how their rows leave the database.

The database does the joins, extracts JSON fields and formats times (``Dialect``, one per
backend); pseudonyms are computed once per participant into a temporary table that the
SELECTs join. On PostgreSQL the CSV and JSONL files are written by ``COPY`` itself, a chunk
of ids at a time (progress between two COPYs); Python only streams bytes. Elsewhere the rows
are streamed (``stream_rows``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import connection, transaction

from annotation.models import Assignment, Enrollment, Item, Participant, Response, Study
from annotation.services.db.pgcopy import buffered, copy_from, copy_to, read_rows
from annotation.services.jobs import Progress, no_progress
from annotation.services.populations import not_a_test_sql, real_answers
from annotation.services.pseudonyms import PseudonymCache

from .columns import FORMULA_STARTS, Column

# Rows per COPY statement: progress is reported between two COPYs, never during one (the
# connection that runs a COPY takes no other statement until it ends, and the job's
# progress is an UPDATE on this same connection).
COPY_CHUNK_ROWS = 10000


def rows_written(progress: Progress, done: int, total: int, *, what: str = "responses") -> None:
    """Report an export's progress (the job's callback stops a cancelled export). ``what`` the
    rows are: responses (one a row, in CSV and JSONL), or every table's rows (SQLite), so the
    count never reads as the responses the exports table lists beside it."""
    progress(done, total, f"{done} of {total} {what}")


def table_names() -> dict[str, str]:
    """Our table aliases → the tables' names (only our own names are ever put into SQL)."""
    return {
        "r": Response._meta.db_table,
        "a": Assignment._meta.db_table,
        "i": Item._meta.db_table,
        "p": Participant._meta.db_table,
        "e": Enrollment._meta.db_table,
    }


def response_select(
    study: Study, columns: list[Column], target: str, id_range: tuple[int | None, int | None] = (None, None)
) -> tuple[str, list]:
    """The export's SELECT of ``columns`` for ``target`` (see ``Dialect.render``), in response
    order; ``id_range`` (after, up to; None: unbounded) keeps one chunk of the responses."""
    t = table_names()
    after, upto = id_range
    bounds = "".join(
        [" AND r.id > %s" if after is not None else "", " AND r.id <= %s" if upto is not None else ""]
    )
    bound_params = [bound for bound in (after, upto) if bound is not None]
    source = (
        f"FROM {t['r']} r "
        f"JOIN {t['a']} a ON a.id = r.assignment_id "
        f"JOIN {t['i']} i ON i.id = r.item_id "
        f"JOIN {t['p']} p ON p.id = r.participant_id "
        f"JOIN {dialect().pseudonyms} ps ON ps.participant_id = r.participant_id "
        f"LEFT JOIN {t['e']} e ON e.participant_id = r.participant_id AND e.study_id = r.study_id "
        f"WHERE r.study_id = %s AND {not_a_test_sql('r')}{bounds} ORDER BY r.id"
    )
    return fenced_select(columns, target, source, [study.pk, *bound_params])


def fenced_select(columns: list[Column], target: str, source: str, source_params: list) -> tuple[str, list]:
    """``SELECT <formatted> FROM (SELECT <raw values> <source>) s``: the inner query reads
    each value once, as the target needs it (a JSON field extracted once, with ``->>``
    for text); the fence keeps the planner from folding it back into the outer query,
    which formats the values. For CSV the JSON documents themselves are carried too, so
    that the rare field cell that starts like a formula can be asked whether it is text."""
    d = dialect()
    raw, formatted, params, outer_params = [], [], [], []
    documents: dict[str, str] = {}  # JSON column → its alias in the inner query
    for index, column in enumerate(columns):
        expression, column_params = d.raw(column, target)
        raw.append(f"{expression} AS v{index}")
        params.extend(column_params)
        value = f"s.v{index}"
        if column.type == "field" and target == "csv":
            if column.sql not in documents:
                documents[column.sql] = f"j{len(documents)}"
                raw.append(f"{column.sql} AS {documents[column.sql]}")
            shown, shown_params = d.neutral_field(value, f"s.{documents[column.sql]}", column)
            outer_params.extend(shown_params)
        else:
            shown = d.render(value, column.type, target)
        formatted.append(f"{shown} AS {quoted(column.name)}")
    sql = (
        f"SELECT {', '.join(formatted)} FROM "  # noqa: S608 - our own table names and expressions
        f"(SELECT {', '.join(raw)} {source} {d.fence}) s"
    )
    return sql, [*outer_params, *params, *source_params]


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@contextmanager
def pseudonyms_joined(study: Study) -> Iterator[None]:
    """Inside one transaction: the temporary table of pseudonyms the export's SELECTs join,
    for everyone enrolled in, assigned or answering the study (computed once each)."""
    d = dialect()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # JIT compiles for longer than these plans run. The rows must come in id order: a
            # parallel plan sorts them after gathering (and spills the sort to disk on a
            # large study), while one scan of the (study, id) index streams them with no sort;
            # the formatting runs in the leader either way.
            cursor.execute("SET LOCAL jit = off")
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        cursor.execute(f"DROP TABLE IF EXISTS {d.pseudonyms}")
        cursor.execute(d.create_pseudonyms)
        try:
            _fill_pseudonyms(cursor, study)
            yield
        finally:
            if connection.vendor != "postgresql":
                cursor.execute(f"DROP TABLE IF EXISTS {d.pseudonyms}")


def chunk_ranges(study: Study) -> list[tuple[int | None, int | None]]:
    """The study's responses cut into id ranges of ``COPY_CHUNK_ROWS`` rows (the last one open)."""
    t = table_names()
    sql = (
        f"SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM {t['r']} "  # noqa: S608
        f"WHERE study_id = %s AND {not_a_test_sql(t['r'])}) ids WHERE n %% %s = 0 ORDER BY id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [study.pk, COPY_CHUNK_ROWS])
        bounds: list[int | None] = [row[0] for row in cursor.fetchall()]
    starts = [None, *bounds]
    return list(zip(starts, [*bounds, None], strict=True))


def copy_out(
    study: Study, select: Callable[[tuple], tuple[str, list]], out, options: str, progress: Progress
) -> int:
    """PostgreSQL writes the rows of ``select(id_range)`` to ``out`` (binary) with COPY, one
    COPY per chunk of ids; returns the rows written.

    Progress is reported (and a cancelled export stops) between two COPYs: while a COPY
    runs its connection takes no other statement, and the job's progress is written on it.
    The driver hands over one row per call: a C buffer takes them (``pgcopy.buffered``)."""
    total = real_answers(study).count()
    written = 0
    sink = buffered(out)
    with connection.cursor() as cursor:
        for id_range in chunk_ranges(study):
            sql, params = select(id_range)
            written += copy_to(cursor, sql, params, options, sink)
            sink.flush()
            rows_written(progress, written, max(total, written))
    return written


def copy_csv_rows(study: Study, columns: list[Column], out, *, progress: Progress = no_progress) -> int:
    """PostgreSQL only: the CSV rows (no header) written by ``COPY (SELECT …) TO STDOUT``."""
    with pseudonyms_joined(study):
        return copy_out(
            study, lambda ids: response_select(study, columns, "csv", ids), out, "FORMAT csv", progress
        )


def copy_jsonl_rows(study: Study, columns: list[Column], out, *, progress: Progress = no_progress) -> int:
    """PostgreSQL only: one JSON object per line, built by PostgreSQL (``row_to_json``).

    CSV format with a quote and a delimiter that JSON text never holds (control characters
    are escaped inside JSON strings) passes each line through untouched."""

    def select(ids: tuple) -> tuple[str, list]:
        sql, params = response_select(study, columns, "json", ids)
        return f"SELECT row_to_json(t) FROM ({sql}) t", params  # noqa: S608 - built above

    with pseudonyms_joined(study):
        return copy_out(study, select, out, "FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02'", progress)


def stream_rows(study: Study, columns: list[Column], target: str) -> Iterator[tuple]:
    """The rows as Python reads them (SQLite, or PostgreSQL without COPY), for ``target``."""
    sql, params = response_select(study, columns, target)
    with pseudonyms_joined(study):
        yield from read_rows(sql, params)


def _fill_pseudonyms(cursor, study: Study) -> None:
    names = PseudonymCache(study.pseudonym_salt)
    t = table_names()
    known = (
        f"SELECT p.id, p.source, p.platform_worker_id, p.public_id FROM {t['p']} p "  # noqa: S608 - our names
        f"WHERE p.id IN (SELECT participant_id FROM {t['e']} WHERE study_id = %s "
        f"UNION SELECT participant_id FROM {t['a']} WHERE study_id = %s)"
    )
    rows = [
        (pk, names.get(pk, source, worker, public))
        for pk, source, worker, public in read_rows(known, [study.pk, study.pk])
    ]
    if connection.vendor == "postgresql":
        copy_from(cursor, dialect().pseudonyms, ["participant_id", "pseudonym"], rows)
    else:
        cursor.executemany(f"INSERT INTO {dialect().pseudonyms} VALUES (%s, %s)", rows)  # noqa: S608


class Dialect:
    """How each column is read and written for each target, on PostgreSQL.

    Targets: ``csv`` (text cells; text neutralised), ``json`` (typed values for
    ``row_to_json``), ``json_text`` (Python writes the JSON line: booleans and JSON as JSON
    text), ``sqlite`` (values for the SQLite dump: JSON as text, booleans as 1/0).
    """

    pseudonyms = "pg_temp.export_pseudonyms"
    create_pseudonyms = (
        "CREATE TEMPORARY TABLE export_pseudonyms (participant_id bigint PRIMARY KEY, pseudonym text) "
        "ON COMMIT DROP"
    )
    tab, cr = "E'\\t'", "E'\\r'"
    fence = "OFFSET 0"

    def raw(self, column: Column, target: str) -> tuple[str, list]:
        """The column's value as the target reads it. A field: typed JSON for ``json``,
        JSON text for ``json_text``, else a string as plain text and anything else as
        JSON text (JSON null and a missing key are NULL)."""
        if column.type != "field":
            return column.sql, list(column.params)
        key, path = (
            (("->", "->>"), column.path[0]) if len(column.path) == 1 else (("#>", "#>>"), list(column.path))
        )
        if target == "json":
            return f"({column.sql} {key[0]} %s)", [path]
        if target == "json_text":
            return f"NULLIF(({column.sql} {key[0]} %s)::text, 'null')", [path]
        return f"({column.sql} {key[1]} %s)", [path]

    def render(self, value: str, kind: str, target: str) -> str:
        """The SQL that writes ``value`` (a column of type ``kind`` as ``raw`` read it) for ``target``."""
        if kind == "text" and target == "csv":
            return self.neutral(value)
        if kind == "boolean" and target in ("csv", "json_text"):
            return f"(CASE WHEN {value} THEN 'true' WHEN NOT {value} THEN 'false' END)"
        if kind == "time":
            return self.timestamp(value)
        if kind == "json" and target != "json":
            return self.json_text(value)
        return value

    def starts_like_a_formula(self, value: str) -> str:
        starts = ", ".join(self.literal(char) for char in FORMULA_STARTS)
        return f"substr({value}, 1, 1) IN ({starts})"

    def neutral(self, value: str) -> str:
        """The SQL twin of ``neutralise``, built from the same FORMULA_STARTS."""
        quote = "''''"  # SQL for the text '
        return f"(CASE WHEN {self.starts_like_a_formula(value)} THEN {quote} || {value} ELSE {value} END)"

    def neutral_field(self, value: str, document: str, column: Column) -> tuple[str, list]:
        """``neutral`` for a field's CSV cell, only when the JSON value is a string: the
        text of a number (``-3``) is data."""
        quote = "''''"
        is_text, params = self.is_string(document, column)
        test = f"{self.starts_like_a_formula(value)} AND {is_text}"
        return f"(CASE WHEN {test} THEN {quote} || {value} ELSE {value} END)", params

    def literal(self, char: str) -> str:
        return {"\t": self.tab, "\r": self.cr}.get(char, f"'{char}'")

    def is_string(self, document: str, column: Column) -> tuple[str, list]:
        return f"jsonb_typeof({document} #> %s) = 'string'", [list(column.path)]

    def json_text(self, value: str) -> str:
        return f"{value}::text"

    def timestamp(self, value: str) -> str:
        return f"""to_char({value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""


class SQLiteDialect(Dialect):
    """The same on SQLite (JSON is stored as text; times as ``YYYY-MM-DD HH:MM:SS.ffffff``)."""

    pseudonyms = "temp.export_pseudonyms"
    create_pseudonyms = (
        "CREATE TEMPORARY TABLE export_pseudonyms (participant_id integer PRIMARY KEY, pseudonym text)"
    )
    tab, cr = "char(9)", "char(13)"
    fence = ""

    def raw(self, column: Column, target: str) -> tuple[str, list]:
        if column.type != "field":
            return super().raw(column, target)
        path = self.path(column)
        as_json = f"NULLIF(({column.sql} -> %s), 'null')"
        if target in ("json", "json_text"):
            return as_json, [path]
        return (
            f"(CASE json_type({column.sql}, %s) WHEN 'text' THEN ({column.sql} ->> %s) ELSE {as_json} END)",
            [path] * 3,
        )

    @staticmethod
    def path(column: Column) -> str:
        return "$" + "".join('."' + key.replace('"', '""') + '"' for key in column.path)

    def is_string(self, document: str, column: Column) -> tuple[str, list]:
        return f"json_type({document}, %s) = 'text'", [self.path(column)]

    def json_text(self, value: str) -> str:
        return value

    def timestamp(self, value: str) -> str:
        return f"(replace({value}, ' ', 'T') || 'Z')"


def dialect() -> Dialect:
    return Dialect() if connection.vendor == "postgresql" else SQLiteDialect()
