"""``bench/load.py`` counts the rows PostgreSQL read in a phase, and none that its own
reading of the counters read (``RowCounters``)."""

from __future__ import annotations

import pytest
from django.db import connection
from psycopg.conninfo import make_conninfo

from bench.load import RowCounters
from tests.queries import rows_read

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's own counters"),
]


@pytest.fixture
def counters():
    settings = connection.settings_dict
    reader = RowCounters(
        make_conninfo(
            host=settings["HOST"] or None,
            port=settings["PORT"] or None,
            user=settings["USER"],
            dbname=settings["NAME"],
        )
    )
    yield reader
    reader.close()


def test_a_reading_leaves_its_own_catalog_reads_out_of_the_next_window(counters):
    """Listing the tables' and indexes' counters reads the catalogs (some thousands of rows
    that ``tup_returned`` counts as well); a phase with nothing in it between two readings
    counts none of them. Before, the figure of each survey phase included the reading
    before it, 2,700 rows spread over its loops."""
    rows_read(lambda: None)  # this test's own connection: its counts sent
    _, settled = counters.read(0)
    first, last = counters.read(0)
    assert last["tup_returned"] > first["tup_returned"]  # the reading read the catalogs
    assert first["tup_returned"] == settled["tup_returned"]
