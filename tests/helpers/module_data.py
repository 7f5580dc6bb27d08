"""Rows a whole test module reads, written once for the module instead of once per test.

A study with its answers and reports costs about half a CPU second to build through the
services; the pages and exports a module's tests read from it never change it for good.
Built in a transaction that stays open for the module, the rows are visible to each test,
whose own transaction (pytest-django's ``django_db``, a savepoint inside this one) rolls
back whatever the test changes; the module's transaction rolls back at its end, so no other
module sees the rows. It is what Django's ``TestCase.setUpTestData`` does per class. Only
for tests without ``transaction=True`` (those commit and flush).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import transaction


@contextmanager
def rows_for_the_module(django_db_blocker) -> Iterator[None]:
    """Open the module's transaction (database access allowed) and roll it back on exit."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            yield
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def fetched_by_key(model, pks: dict) -> dict:
    """The module's rows afresh for a test, in one query: ``pks`` maps a name (a role) to a
    primary key, and the answer maps it to that row."""
    rows = model.objects.in_bulk(pks.values())
    return {name: rows[pk] for name, pk in pks.items()}
