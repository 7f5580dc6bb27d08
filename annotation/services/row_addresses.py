"""Rows found again where the gate read them: a step's later statements on its own rows.

A participant's step reads its rows once, in the gate (enrollment, study, participant,
page, item: ``access.require_live_step``), and then comes back to some of them: the
fetch locks the enrollment, the answer claims the page, counts the answer on the
enrollment and reads the item's slots. Found again by key, each costs an index look-up
(issue 30 asked for at most 20 rows read per page fetched and answered). On PostgreSQL the
gate also reads where each row's version lies in its table (its ``ctid``), and a statement
that comes back to the row asks there first: a TID scan, no index entry read.

The address is a hint, never the rule. The statement keeps every key condition it has, so
an address now holding another row finds nothing; a row changed since the gate read it has
a new version elsewhere, so its old address finds nothing either (an update is visible to a
later statement's snapshot as the old version's end). Finding nothing at the address, the
statement runs again by key, as it always ran. SQLite (the embedded runtime) has no
addresses: there, and for rows read elsewhere than the gate, statements run by key.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Model

from . import sql_rows

# Where an addressed statement's WHERE clause takes the address condition.
ADDRESS_MARK = "/*address*/"
_ATTRIBUTE = "_row_address"


@dataclass(frozen=True)
class AddressedStatement:
    """A statement on one row named by its key, whose ``sql`` holds ``ADDRESS_MARK`` once,
    at the start of its WHERE clause (``... WHERE /*address*/id = %s``)."""

    name: str
    sql: str

    @functools.cached_property
    def by_key(self) -> sql_rows.Statement:
        return sql_rows.Statement(self.name, self.sql.replace(ADDRESS_MARK, ""))

    @functools.cached_property
    def by_address(self) -> sql_rows.Statement:
        return sql_rows.Statement(f"{self.name}_at", self.sql.replace(ADDRESS_MARK, "ctid = %s::tid AND "))

    @functools.cached_property
    def address_position(self) -> int:
        """How many of the statement's parameters come before the address."""
        return self.sql.split(ADDRESS_MARK, 1)[0].count("%s")


def address_columns(aliases: Iterable[str]) -> str:
    """Select-list entries with each table alias's row address (text on PostgreSQL, NULL
    on SQLite), to follow a join's columns and go to ``note_addresses``."""
    return ", ".join(f"/*pg:{alias}.ctid::text*//*lite:NULL*/" for alias in aliases)


def note_addresses(instances: Sequence[Model | None], addresses: Sequence[str | None]) -> None:
    """Remember each instance's row address (``address_columns``' values, in order)."""
    for instance, address in zip(instances, addresses, strict=True):
        if instance is not None:
            instance.__dict__[_ATTRIBUTE] = address


def model_with_address(model: type[sql_rows.M], names: Sequence[str], row: Sequence[Any]) -> sql_rows.M:
    """The instance of ``model`` in ``row``: its columns (``names``), then its address (one
    ``address_columns`` entry, last), which is noted on it."""
    instance = sql_rows.models_from_rows(model, names, [row[:-1]])[0]
    note_addresses([instance], row[-1:])
    return instance


def address_of(instance: Model | None) -> str | None:
    """The address the gate read ``instance``'s row at; None when it was read elsewhere."""
    return None if instance is None else instance.__dict__.get(_ATTRIBUTE)


def _step_at(
    statement: AddressedStatement, params: Sequence[Any], address: str | None
) -> tuple[sql_rows.Statement, list[Any]]:
    """``statement`` and its parameters: at ``address`` when there is one (on PostgreSQL),
    else by key."""
    if address is None or connection.vendor != "postgresql":
        return statement.by_key, list(params)
    at = statement.address_position
    return statement.by_address, [*params[:at], address, *params[at:]]


def execute_each_at(
    statement: AddressedStatement,
    params: Sequence[Any],
    address: str | None,
    then: Sequence[tuple[sql_rows.Statement, Sequence[Any]]] = (),
    before: Sequence[tuple[sql_rows.Statement, Sequence[Any]]] = (),
) -> list[list[tuple]]:
    """Run ``statement`` at ``address`` first, and the statements ``then`` after it in the
    same round trip (``sql_rows.execute_each_in_one_trip``: a lock and the read it
    serialises); ``statement`` by key and ``then`` again when the address finds no row (the
    row has moved). ``before``: statements sent ahead of ``statement`` in the first trip
    (an insert that must precede it), run once. The rows of each statement, in order."""
    chosen, values = _step_at(statement, params, address)
    results = sql_rows.execute_each_in_one_trip([*before, (chosen, values), *then])
    done = results[: len(before)]
    if results[len(before)] or chosen is statement.by_key:
        return results
    return done + sql_rows.execute_each_in_one_trip([(statement.by_key, list(params)), *then])


def insert_then_execute_at(
    instance: Model, name: str, statement: AddressedStatement, params: Sequence[Any], address: str | None
) -> list[tuple]:
    """Insert ``instance`` (``sql_rows.insert``, as the statement ``name``) and, in the same
    round trip, run ``statement`` at ``address`` (``execute_each_at``): a row written before
    the row it names changes, so that its key check finds that row's one version. The
    instance is saved; the rows of ``statement``."""
    inserted = sql_rows.insert_step(instance, name)
    written, rows = execute_each_at(statement, params, address, before=[inserted])
    sql_rows.note_inserted(instance, written)
    return rows


def execute_at(statement: AddressedStatement, params: Sequence[Any], address: str | None) -> list[tuple]:
    """``execute_each_at`` for one statement: its rows."""
    return execute_each_at(statement, params, address)[0]
