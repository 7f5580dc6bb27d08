"""The prepared statements of the hot path (``annotation.services.db.sql_rows``)."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction
from psycopg import sql

from annotation.models import Participant
from annotation.services.db import sql_rows

pytestmark = pytest.mark.django_db

INVERSE = sql_rows.Statement("roft_test_inverse", "SELECT 1 / %s")


def test_a_statement_whose_run_failed_runs_again():
    """The driver prepares statements itself: a failed run leaves nothing to keep track of."""
    with pytest.raises(DataError), transaction.atomic():
        sql_rows.execute(INVERSE, [0])  # division by zero
    assert sql_rows.execute(INVERSE, [1]) == [(1,)]
    assert sql_rows.execute(INVERSE, [1]) == [(1,)]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's prepared statements")
def test_the_driver_prepares_a_statement_it_runs_again():
    """psycopg 3 (server-side binding, ``DB_PREPARE_THRESHOLD``) prepares the hot path's
    statements on the connection by itself: after a run or two, the server has it."""
    statement = sql_rows.Statement("roft_test_twice", "SELECT %s::int + 1 AS twice")
    for number in range(3):
        assert sql_rows.execute(statement, [number]) == [(number + 1,)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%AS twice%"])
        assert cursor.fetchone() == (1,)


def test_rows_become_models_as_the_orm_builds_them(enrolled, make_claim_study):
    participant = enrolled(make_claim_study(items=1))
    names, columns = sql_rows.columns(Participant)
    query = sql.SQL("SELECT {columns} FROM {table} WHERE id = %s")
    statement = sql_rows.Statement(
        "roft_test_participant", query.format(columns=columns, table=sql_rows.table(Participant))
    )
    (built,) = sql_rows.models_from_rows(Participant, names, sql_rows.execute(statement, [participant.pk]))
    stored = Participant.objects.get(pk=participant.pk)
    assert [getattr(built, name) for name in names] == [getattr(stored, name) for name in names]
    assert not built._state.adding


def test_statements_sent_in_one_trip_answer_with_the_last_ones_rows():
    first = sql_rows.Statement("roft_test_first", "SELECT %s::int + 10")
    second = sql_rows.Statement("roft_test_second", "SELECT %s::int * 2, %s::text")
    third = sql_rows.Statement("roft_test_third", "SELECT %s::int")
    assert sql_rows.execute_in_one_trip([(first, [1]), (second, [3, "x"])]) == [(6, "x")]
    assert sql_rows.execute_in_one_trip([(third, [1]), (third, [4])]) == [(4,)]


def test_statements_sent_in_one_trip_each_answer_with_their_own_rows():
    first = sql_rows.Statement("roft_test_first", "SELECT %s::int + 10")
    second = sql_rows.Statement("roft_test_second", "SELECT %s::int * 2, %s::text")
    third = sql_rows.Statement("roft_test_third", "SELECT %s::int")
    steps = [(first, [1]), (second, [3, "x"]), (third, [7])]
    assert sql_rows.execute_each_in_one_trip(steps) == [[(11,)], [(6, "x")], [(7,)]]
    assert sql_rows.execute_each_in_one_trip([(third, [1]), (third, [4])]) == [[(1,)], [(4,)]]


def test_rows_are_told_from_no_rows_without_building_column_descriptions(monkeypatch):
    """A statement's rows (a ``SELECT``, a ``RETURNING``) or none (an ``UPDATE``, a ``SET``)
    are told apart from its result, not by ``cursor.description``, which builds a column
    object per column each time it is read (a few hundred per participant step)."""
    from psycopg import _column

    built = []
    init = _column.Column.__init__
    monkeypatch.setattr(_column.Column, "__init__", lambda self, *args: built.append(1) or init(self, *args))
    select = sql_rows.Statement("roft_test_select", "SELECT %s::int, 'x'")
    nothing = sql_rows.Statement("roft_test_nothing", "SELECT 1 WHERE %s::int < 0")
    update = sql_rows.Statement(
        "roft_test_update", "UPDATE annotation_participant SET blocked = blocked WHERE id = %s"
    )
    steps = [(select, [2]), (nothing, [1]), (update, [0]), (select, [3])]
    assert sql_rows.execute_each_in_one_trip(steps) == [[(2, "x")], [], [], [(3, "x")]]
    assert sql_rows.execute(update, [0]) == []
    if connection.vendor == "postgresql":
        assert built == []


def test_a_models_column_list_is_built_once_per_process():
    assert sql_rows.columns(Participant, "p") is sql_rows.columns(Participant, "p")
    names, _ = sql_rows.columns(Participant)
    assert names == tuple(field.attname for field in Participant._meta.concrete_fields)
