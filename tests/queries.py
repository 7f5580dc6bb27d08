"""Counting the SQL queries a request makes, for the "no query per row" tests."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.http import HttpResponse
from django.test.utils import CaptureQueriesContext


def count_queries(request: Callable[[], HttpResponse], *, status: int = 200) -> tuple[int, HttpResponse]:
    """How many queries ``request()`` runs, and its answer, which must have ``status``.

    A failed page proves nothing about the queries of a working one, hence the status check.
    """
    with CaptureQueriesContext(connection) as captured:
        response = request()
    assert response.status_code == status, response.content.decode()[:500]
    return len(captured), response


def assert_flat(counts: dict[int, int], *, at_most: int, spread: int = 0) -> None:
    """Counts measured at several row numbers: the same for each, and under a fixed bound.

    ``counts`` maps the number of rows built to the queries counted. A query per row makes
    the larger numbers differ, which is what these tests exist to catch. ``spread`` allows
    a step with one optional query (the item pick's wrap-around) to differ by that much.
    """
    assert max(counts.values()) - min(counts.values()) <= spread, f"queries grow with rows: {counts}"
    assert max(counts.values()) <= at_most, f"{max(counts.values())} queries, more than {at_most}"


def count_queries_and_commits(
    request: Callable[[], HttpResponse], *, status: int = 200
) -> tuple[int, int, HttpResponse]:
    """The queries ``request()`` runs, the transactions it commits, and its answer.

    Inside a test's own transaction each outermost ``atomic`` block is a savepoint, and a
    write outside any block is an autocommit: each of them is a commit on a real server.
    """
    with CaptureQueriesContext(connection) as captured:
        response = request()
    assert response.status_code == status, response.content.decode()[:500]
    depth, commits = 0, 0
    for query in captured.captured_queries:
        sql = query["sql"].lstrip().upper()
        if sql.startswith("SAVEPOINT"):
            commits += depth == 0
            depth += 1
        elif sql.startswith("RELEASE SAVEPOINT"):
            depth -= 1
        elif depth == 0 and _writes(sql):
            commits += 1
    return len(captured), commits, response


WRITES = ("INSERT", "UPDATE", "DELETE", "WITH")


def _writes(sql: str) -> bool:
    """Whether a statement run outside a transaction (an autocommit) writes."""
    return sql.startswith(WRITES)


def rows_read(action: Callable[[], object]) -> int:
    """Rows and index entries PostgreSQL read for ``action()`` (index look-ups, scanned
    rows, foreign-key checks at commit, the planner's probes): ``seq_tup_read`` and
    ``idx_tup_read`` over the test database's own tables, as ``pg_stat_database``'s
    ``tup_returned`` counts them. Needs real commits (``django_db(transaction=True)``):
    a backend sends its counts when a transaction ends, and those of a test's one open
    transaction would miss the foreign-key checks deferred to commit."""
    before = _user_rows_read()
    action()
    return _user_rows_read() - before


def _user_rows_read() -> int:
    with connection.cursor() as cursor:
        # Sent when this backend is next idle, that is before the next statement is read.
        cursor.execute("SELECT pg_stat_force_next_flush()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables)"
            " + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes)"
        )
        return int(cursor.fetchone()[0])


def entries_read_per_index(action: Callable[[], object]) -> dict[tuple[str, str], int]:
    """The index entries ``action()`` read (``rows_read``'s, a key check's look-up in the
    referenced table's index included), per (table, index); those it read none of left out."""
    before = _entries_read_per_index()
    action()
    after = _entries_read_per_index()
    return {place: after[place] - before[place] for place in after if after[place] != before[place]}


def _entries_read_per_index() -> dict[tuple[str, str], int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT relname, indexrelname, idx_tup_read FROM pg_stat_user_indexes")
        return {(table, index): int(read) for table, index, read in cursor.fetchall()}
