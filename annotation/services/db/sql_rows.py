"""Hand-written SQL for the participant's hot path.

Every participant step (the survey's and the game's alike) passes the gate, fetches or
answers a page: a handful of statements per request; built by the ORM, each costs more in
Python (compiling the query, building model instances through the queryset machinery) than
PostgreSQL takes to run it. Those statements (the gate, the page handed out, the answer,
the count on the enrollment) are written once as SQL by the services that own them, and
their rows become model instances with ``Model.from_db`` and the fields' own converters, as
the ORM would build them. Only those services import this module (the contract
``raw-sql-protected``); everything else uses the ORM.

On PostgreSQL the driver (psycopg 3 with server-side binding: ``roft_site/settings.py``)
prepares a statement once it has run it ``DB_PREPARE_THRESHOLD`` times on a connection, and
from then on only executes it: the server parses and plans it once per connection, not once
per request, and nothing here keeps count. Prepared statements live in the server's session,
so they need a direct connection or a pooler in session mode (never PgBouncer in transaction
mode; docs/deploy.md). Statements sent together go in one pipeline (one round trip). SQLite
runs the same statements plainly.

Statements are composed with ``psycopg.sql``: the names of tables and columns come from the
models' ``_meta`` as quoted identifiers (``table``, ``columns``), values only as ``%s``
parameters. A clause only PostgreSQL has (a row lock) is added by ``on_postgresql``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from django.db import connection
from django.db.models import Field, Model
from psycopg import sql

M = TypeVar("M", bound=Model)
_converters: dict[tuple[str, type[Model], tuple[str, ...]], list[tuple[Any, list[Callable]]]] = {}


@dataclass(frozen=True)
class Statement:
    """One SQL statement with ``%s`` placeholders, and a name that says what it is for;
    ``sql`` composed with ``psycopg.sql`` (kept as its text) or a plain string."""

    name: str
    sql: str | sql.Composable

    def __post_init__(self) -> None:
        if isinstance(self.sql, sql.Composable):
            object.__setattr__(self, "sql", self.sql.as_string(None))


def on_postgresql(clause: str) -> sql.SQL:
    """``clause`` (a row lock: ``FOR UPDATE``, ``SKIP LOCKED``; a planner fence) where the
    database is PostgreSQL; nothing on SQLite, which has no row locks and whose write
    transactions are serialised already (settings: IMMEDIATE). Statements are built once
    per process, whose database is one."""
    return sql.SQL(clause if connection.vendor == "postgresql" else "")


def table(model: type[Model]) -> sql.Identifier:
    """``model``'s table, quoted."""
    return sql.Identifier(model._meta.db_table)


def execute(statement: Statement, params: Sequence[Any]) -> list[tuple]:
    """Run ``statement`` with ``params`` on the default connection; its rows (none for a
    statement that returns none)."""
    return execute_in_one_trip([(statement, params)])


def execute_in_one_trip(steps: Sequence[tuple[Statement, Sequence[Any]]]) -> list[tuple]:
    """Run statements one after the other, sent to PostgreSQL in one round trip (a psycopg 3
    pipeline); the rows of the last one. Each statement still runs on its own, with its own
    snapshot (READ COMMITTED): a later one sees what was committed while an earlier one
    waited for a lock.
    """
    return execute_each_in_one_trip(steps)[-1]


def execute_each_in_one_trip(steps: Sequence[tuple[Statement, Sequence[Any]]]) -> list[list[tuple]]:
    """``execute_in_one_trip``, with the rows of every statement, in order: a lock that
    returns the row it locked, and a read after it, cost one round trip and one read of
    that row."""
    with contextlib.ExitStack() as cursors:
        opened = []
        with _one_trip(len(steps)):  # the pipeline sends its statements as it closes
            for statement, params in steps:
                cursor = cursors.enter_context(connection.cursor())
                cursor.execute(statement.sql, params)
                opened.append(cursor)
        return [cursor.fetchall() if _returns_rows(cursor) else [] for cursor in opened]


def _returns_rows(cursor: Any) -> bool:
    """Whether ``cursor``'s statement returned rows with columns (a ``SELECT``, a
    ``RETURNING``), as ``cursor.description`` tells, read from the result itself on psycopg 3:
    ``description`` builds a column object per column on every call (a few hundred a step)."""
    result = getattr(cursor.cursor, "pgresult", None)
    if result is None:
        return bool(cursor.description)  # SQLite, or no result
    return result.nfields > 0


def _one_trip(statements: int) -> contextlib.AbstractContextManager:
    """A psycopg 3 pipeline for several statements on PostgreSQL; nothing otherwise."""
    if statements > 1 and connection.vendor == "postgresql" and connection.connection is not None:
        return connection.connection.pipeline()
    return contextlib.nullcontext()


def models_from_rows(model: type[M], fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[M]:
    """Instances of ``model`` from raw rows of the columns ``fields`` (attribute names, in
    order), converted by the fields' own database converters as a queryset would."""
    converters = _field_converters(model, tuple(fields))
    built = []
    for row in rows:
        values = [
            _convert(value, column, functions)
            for value, (column, functions) in zip(row, converters, strict=True)
        ]
        built.append(model.from_db(connection.alias, list(fields), values))
    return built


def joined_columns(tables: Sequence[tuple[type[Model], str]]) -> sql.Composable:
    """The SQL select list of every concrete column of each ``(model, alias)``, in order:
    a join whose row ``models_from_joined_row`` splits back into instances."""
    return sql.SQL(", ").join(columns(model, alias)[1] for model, alias in tables)


def models_from_joined_row(tables: Sequence[tuple[type[Model], str]], row: Sequence[Any]) -> list[Any]:
    """One instance per ``(model, alias)`` from a row that starts with ``joined_columns(tables)``
    (None for a model whose primary key is NULL: the outer join found none)."""
    built: list[Any] = []
    start = 0
    for model, _ in tables:
        names, _ = columns(model)
        values = row[start : start + len(names)]
        start += len(names)
        built.append(models_from_rows(model, names, [values])[0] if values[0] is not None else None)
    return built


def _convert(value: Any, column: Any, functions: list[Callable]) -> Any:
    for function in functions:
        value = function(value, column, connection)
    return value


def _field_converters(model: type[Model], fields: tuple[str, ...]) -> list[tuple[Any, list[Callable]]]:
    key = (connection.vendor, model, fields)
    if key not in _converters:
        table = model._meta.db_table
        found = []
        for name in fields:
            field = next(f for f in model._meta.concrete_fields if f.attname == name)
            column = field.get_col(table)
            functions = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
            found.append((column, functions))
        _converters[key] = found
    return _converters[key]


@functools.cache
def columns(model: type[Model], alias: str = "") -> tuple[tuple[str, ...], sql.Composable]:
    """The attribute names of ``model``'s concrete fields, and the SQL list of their columns
    (under the table alias ``alias``, when given), for a statement that builds instances.
    Kept per process: a model's fields do not change while it runs, and a step builds its
    rows' instances with these names several times."""
    fields = list(model._meta.concrete_fields)
    names = [sql.Identifier(alias, column(f)) if alias else sql.Identifier(column(f)) for f in fields]
    return tuple(f.attname for f in fields), sql.SQL(", ").join(names)


def column(field: Field) -> str:
    """The database column of a concrete field (Django types it optional: a field without a
    column is never concrete)."""
    return cast(str, field.column)


def insert(instance: Model, name: str) -> None:
    """Insert ``instance`` (an unsaved model with an automatic primary key) as ``save()``
    would, its values prepared by its fields, and set its primary key; as the statement
    ``name``, without the ORM's query compiler."""
    note_inserted(instance, execute(*insert_step(instance, name)))


def insert_step(instance: Model, name: str) -> tuple[Statement, list[Any]]:
    """``insert``'s statement and parameters, to send with others (``execute_each_in_one_trip``);
    its rows then go to ``note_inserted``."""
    model = type(instance)
    fields = [f for f in model._meta.concrete_fields if f is not model._meta.pk]
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    return _insert_statement(model, name), values


def insert_then(instance: Model, name: str, statement: Statement, params: Sequence[Any]) -> list[tuple]:
    """Insert ``instance`` (as ``insert``, the statement ``name``) and run ``statement`` after
    it in the same round trip: a row written before the row it refers to changes (the page
    before its item's slot is taken, the answer before its page is marked answered), so that
    its key check, made at once (``keys_checked_at_each_statement``), finds that row's one
    version. The instance is saved; the rows of ``statement``."""
    written, rows = execute_each_in_one_trip([insert_step(instance, name), (statement, params)])
    note_inserted(instance, written)
    return rows


def note_inserted(instance: Model, rows: Sequence[Sequence[Any]]) -> None:
    """Set the primary key of ``instance`` from the rows of its ``insert_step``: saved."""
    instance.pk = rows[0][0]
    instance._state.adding, instance._state.db = False, connection.alias


# See ``keys_checked_at_each_statement``.
_KEYS_CHECKED_NOW = Statement("roft_keys_checked_now", "SET CONSTRAINTS ALL IMMEDIATE")


def keys_checked_at_each_statement() -> list[tuple[Statement, list[Any]]]:
    """The statement (none on SQLite) that makes the current transaction check its foreign
    keys at the end of each statement rather than at commit, to send before its writes.

    A key check looks its row up in the referenced table's index, and counts every entry it
    passes: a row the transaction changed in an indexed column (an item's ``slots_taken``, a
    page's ``status``) has two entries until the transaction ends, its old version's and its
    new one's. A step that writes the row that refers (the page handed out, the answer) before
    it changes the row referred to (the item's slot, the page marked answered), with its key
    checked at once, reads one entry where the check at commit read two; the check holds the
    same. Only in transactions that write in that order, and only where the caller's
    ``atomic`` block is the transaction itself (the outermost: a request's step), so that the
    setting ends with the step's commit; nested in a larger transaction (a test's, a batch's)
    keys stay deferred to that one's commit, as Django's are everywhere else (a merge moves a
    guest's pages and answers in either order)."""
    if connection.vendor != "postgresql" or len(connection.atomic_blocks) != 1:
        return []
    return [(_KEYS_CHECKED_NOW, [])]


@functools.cache
def _insert_statement(model: type[Model], name: str) -> Statement:
    fields = [f for f in model._meta.concrete_fields if f is not model._meta.pk]
    query = sql.SQL("INSERT INTO {table} ({names}) VALUES ({values}) RETURNING {key}").format(
        table=table(model),
        names=sql.SQL(", ").join([sql.Identifier(column(f)) for f in fields]),
        values=sql.SQL(", ").join(sql.Placeholder() * len(fields)),
        key=sql.Identifier(column(model._meta.pk)),
    )
    return Statement(name, query)
