"""Reading many rows out of the database, the two ways exports and reports do it.

``copy_to``: PostgreSQL's ``COPY (SELECT …) TO STDOUT``, whose output the driver writes into
a file (COPY takes no parameters: psycopg binds them on the client), and ``copy_from``,
rows into a table with ``COPY … FROM STDIN`` (psycopg 3's ``cursor.copy`` both), and
``insert_like``, new rows of a model by ``copy_from``.
``read_batches`` / ``read_rows``: a server-side cursor read a batch at a time (a plain cursor
on SQLite), for the paths that read rows in Python.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Iterable, Iterator, Sequence

from django.db import connection
from django.db.models import Model

BATCH_ROWS = 5000
# What COPY's output gathers in before it is handed to the file.
COPY_BUFFER_BYTES = 1 << 20


def read_batches(sql: str, params: Sequence, size: int = BATCH_ROWS) -> Iterator[list[tuple]]:
    """The rows of ``sql``, ``size`` at a time, straight from the driver."""
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(size):
            yield batch


def read_rows(sql: str, params: Sequence, size: int = BATCH_ROWS) -> Iterator[tuple]:
    """The rows of ``sql`` one by one, fetched ``size`` at a time."""
    for batch in read_batches(sql, params, size):
        yield from batch


def copy_to(cursor, sql: str, params: Sequence, options: str, out) -> int:
    """PostgreSQL only: ``COPY (sql) TO STDOUT WITH (options)`` on ``cursor`` (Django's),
    its output written to ``out`` (a binary file); returns the rows copied."""
    raw = cursor.cursor  # psycopg's own cursor: it binds COPY's parameters itself
    with raw.copy(f"COPY ({sql}) TO STDOUT WITH ({options})", params) as copy:
        for block in copy:
            out.write(block)
    return raw.rowcount


def copy_from(cursor, table: str, columns: Sequence[str], rows: Iterable[Sequence]) -> None:
    """PostgreSQL only: ``rows`` into ``table``'s ``columns`` with ``COPY … FROM STDIN`` on
    ``cursor`` (Django's), each value adapted by psycopg as a statement's parameter would be
    (None as NULL, JSON, times)."""
    with cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def insert_like(template: Model, varying: Sequence[str], rows: Iterable[Sequence]) -> None:
    """New rows of ``template``'s model, inserted as ``bulk_create`` inserts them but without
    reading their ids back: each row is the template's values with the fields named in
    ``varying`` set from one tuple of ``rows``. By COPY on PostgreSQL (``bulk_create``
    elsewhere). The template's values are prepared once, as ``save()`` prepares them
    (``auto_now_add`` too), and each varying value by its field: preparing every field of
    every row was a fifth of loading a million items. A column with only a database default
    (``db_default``) is left to the database."""
    model = type(template)
    if connection.vendor != "postgresql":
        instances = [_like(template, varying, values) for values in rows]
        model._default_manager.bulk_create(instances, batch_size=1000)
        return
    fields = [
        field
        for field in model._meta.concrete_fields
        if field is not model._meta.pk and not (field.has_db_default() and not field.has_default())
    ]
    base = [field.get_db_prep_save(field.pre_save(template, True), connection) for field in fields]
    position = {field.name: index for index, field in enumerate(fields)}
    set_here = [(position[name], fields[position[name]]) for name in varying]

    def filled(values: Sequence) -> list:
        row = list(base)
        for (index, field), value in zip(set_here, values, strict=True):
            row[index] = field.get_db_prep_save(value, connection)
        return row

    with connection.cursor() as cursor:
        copy_from(cursor, model._meta.db_table, [str(field.column) for field in fields], map(filled, rows))


def _like(template: Model, varying: Sequence[str], values: Sequence) -> Model:
    instance = copy.copy(template)
    for name, value in zip(varying, values, strict=True):
        setattr(instance, name, value)
    return instance


def buffered(out, size: int = COPY_BUFFER_BYTES) -> io.BufferedWriter:
    """``out`` behind a C buffer of ``size`` bytes: the driver hands COPY's output over one
    row per call, and the buffer takes them as a file would. Flush it before reading ``out``."""
    return io.BufferedWriter(_Sink(out), buffer_size=size)


class _Sink(io.RawIOBase):
    """The raw end of COPY's buffer: hands each block to a binary file."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.out.write(bytes(data))
        return len(data)
