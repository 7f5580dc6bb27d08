"""Transactional tests empty the tables with DELETE instead of TRUNCATE, and keep the rows
the schema alone decides.

A ``django_db(transaction=True)`` test (threads that race, a live server, a Celery worker)
ends with Django's ``flush``, which on PostgreSQL is one ``TRUNCATE`` of every table. A
TRUNCATE swaps each table and each of its indexes for a new empty file and syncs them at
commit: about a second of disk waits on this machine, for tables that hold a few dozen
rows, after each of the suite's hundred-odd such tests (most of their teardown time, and
the browser tests' too). DELETE of the same rows takes a few milliseconds.

The tables end as empty either way, and neither resets the sequences (Django asks for that
with ``reset_sequences``; then, and for ``available_apps``' cascading flush, Django's own
TRUNCATE runs, on the same tables). The foreign keys Django creates are deferrable: deferred, the
DELETEs need no order, and the keys are still checked when the flush commits. The rows left
behind as dead versions are PostgreSQL's to vacuum; the rows-read test vacuums its tables
before it counts (``bench._database.settle_tables``).

The content types and permissions are not emptied (``SCHEMA_TABLES``): migrating the test
database wrote them from the models, no test writes them, and the flush's ``post_migrate``
would only write the same rows again under new ids, which cost 55 ms of every transactional
test's 60 ms flush. So the flush leaves those two tables as they are and runs every other
``post_migrate`` handler (the researchers group, ``annotation/apps.py``) as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.contrib.auth.management import create_permissions
from django.contrib.contenttypes.management import create_contenttypes
from django.core.management.commands import flush
from django.db.backends.postgresql.operations import DatabaseOperations
from django.db.models.signals import post_migrate

SCHEMA_TABLES = frozenset({"django_content_type", "auth_permission"})
# The handlers that write those tables' rows, as their apps connect them (receiver, dispatch_uid).
SCHEMA_ROW_WRITERS = [
    (create_contenttypes, None),
    (create_permissions, "django.contrib.auth.management.create_permissions"),
]


def _sql_flush_by_delete(original):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False) -> list[str]:
        tables = [table for table in tables if table not in SCHEMA_TABLES]
        if reset_sequences or allow_cascade or not tables:
            return original(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        delete = style.SQL_KEYWORD("DELETE FROM")
        deletes = [f"{delete} {style.SQL_FIELD(self.quote_name(table))};" for table in tables]
        return [f"{style.SQL_KEYWORD('SET CONSTRAINTS ALL DEFERRED')};", *deletes]

    return sql_flush


@contextmanager
def _schema_row_writers_off() -> Iterator[None]:
    for receiver, uid in SCHEMA_ROW_WRITERS:
        post_migrate.disconnect(receiver, dispatch_uid=uid)
    try:
        yield
    finally:
        for receiver, uid in SCHEMA_ROW_WRITERS:
            post_migrate.connect(receiver, dispatch_uid=uid)


def _post_migrate_after_flush(original):
    def emit_post_migrate_signal(*args, **kwargs) -> None:
        with _schema_row_writers_off():
            original(*args, **kwargs)

    return emit_post_migrate_signal


@pytest.fixture(autouse=True, scope="session")
def flush_by_delete() -> Iterator[None]:
    """For the whole session, PostgreSQL's flush deletes rows instead of truncating tables,
    and keeps the content types and permissions (only the flush: migrating writes them)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DatabaseOperations, "sql_flush", _sql_flush_by_delete(DatabaseOperations.sql_flush))
        patch.setattr(
            flush, "emit_post_migrate_signal", _post_migrate_after_flush(flush.emit_post_migrate_signal)
        )
        yield
