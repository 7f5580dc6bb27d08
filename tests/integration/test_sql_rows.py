"""The prepared statements of the hot path (``annotation.services.sql_rows``)."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction

from annotation.models import Participant
from annotation.services import sql_rows

pytestmark = pytest.mark.django_db

INVERSE = sql_rows.Statement("roft_test_inverse", "SELECT 1 / %s")


def test_a_statement_whose_first_run_failed_runs_again():
    """The first run prepares and executes in one round trip; when the execution fails the
    statement is prepared all the same, and the next run must not prepare it again."""
    with pytest.raises(DataError), transaction.atomic():
        sql_rows.execute(INVERSE, [0])  # division by zero, after the PREPARE
    assert sql_rows.execute(INVERSE, [1]) == [(1,)]
    assert sql_rows.execute(INVERSE, [1]) == [(1,)]


def test_a_statement_is_prepared_once_per_connection():
    statement = sql_rows.Statement("roft_test_twice", "SELECT %s + 1")
    sent = []
    with connection.execute_wrapper(lambda run, sql, *rest: sent.append(sql) or run(sql, *rest)):
        assert sql_rows.execute(statement, [1]) == [(2,)]
        assert sql_rows.execute(statement, [2]) == [(3,)]
    assert [sql.split()[0] for sql in sent] == ["PREPARE", "EXECUTE"]


def test_rows_become_models_as_the_orm_builds_them(enrolled, make_claim_study):
    participant = enrolled(make_claim_study(items=1))
    names, columns = sql_rows.columns(Participant)
    sql = f"SELECT {columns} FROM annotation_participant WHERE id = %s"  # noqa: S608 - the model's columns
    statement = sql_rows.Statement("roft_test_participant", sql)
    (built,) = sql_rows.models_from_rows(Participant, names, sql_rows.execute(statement, [participant.pk]))
    stored = Participant.objects.get(pk=participant.pk)
    assert [getattr(built, name) for name in names] == [getattr(stored, name) for name in names]
    assert not built._state.adding


def test_statements_sent_in_one_trip_answer_with_the_last_ones_rows():
    first = sql_rows.Statement("roft_test_first", "SELECT %s + 10")
    second = sql_rows.Statement("roft_test_second", "SELECT %s * 2, %s")
    third = sql_rows.Statement("roft_test_third", "SELECT %s::int")
    sent = []
    with connection.execute_wrapper(lambda run, sql, *rest: sent.append(sql) or run(sql, *rest)):
        assert sql_rows.execute_in_one_trip([(first, [1]), (second, [3, "x"])]) == [(6, "x")]
        assert sql_rows.execute_in_one_trip([(third, [1]), (third, [4])]) == [(4,)]
    assert len(sent) == 2
    assert sent[1].count("PREPARE") == 1  # a statement sent twice in one trip is prepared once
