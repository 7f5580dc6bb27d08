"""Transactional tests empty the tables with DELETE instead of TRUNCATE.

A ``django_db(transaction=True)`` test (threads that race, a live server, a Celery worker)
ends with Django's ``flush``, which on PostgreSQL is one ``TRUNCATE`` of every table. A
TRUNCATE swaps each table and each of its indexes for a new empty file and syncs them at
commit: about a second of disk waits on this machine, for tables that hold a few dozen
rows, after each of the suite's hundred-odd such tests (most of their teardown time, and
the browser tests' too). DELETE of the same rows takes a few milliseconds.

The tables end as empty either way, and neither resets the sequences (Django asks for that
with ``reset_sequences``; then, and for ``available_apps``' cascading flush, Django's own
TRUNCATE runs unchanged). The foreign keys Django creates are deferrable: deferred, the
DELETEs need no order, and the keys are still checked when the flush commits. The rows left
behind as dead versions are PostgreSQL's to vacuum; the rows-read test vacuums its tables
before it counts (``bench._database.settle_tables``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db.backends.postgresql.operations import DatabaseOperations


def _sql_flush_by_delete(original):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False) -> list[str]:
        if reset_sequences or allow_cascade or not tables:
            return original(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        delete = style.SQL_KEYWORD("DELETE FROM")
        deletes = [f"{delete} {style.SQL_FIELD(self.quote_name(table))};" for table in tables]
        return [f"{style.SQL_KEYWORD('SET CONSTRAINTS ALL DEFERRED')};", *deletes]

    return sql_flush


@pytest.fixture(autouse=True, scope="session")
def flush_by_delete() -> Iterator[None]:
    """For the whole session, PostgreSQL's flush deletes rows instead of truncating tables."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DatabaseOperations, "sql_flush", _sql_flush_by_delete(DatabaseOperations.sql_flush))
        yield
