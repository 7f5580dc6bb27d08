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


def assert_flat(counts: dict[int, int], *, at_most: int) -> None:
    """Counts measured at several row numbers: the same for each, and under a fixed bound.

    ``counts`` maps the number of rows built to the queries counted. A query per row makes
    the larger numbers differ, which is what these tests exist to catch.
    """
    sizes = sorted(counts)
    assert len(set(counts.values())) == 1, f"queries grow with rows: {counts}"
    assert counts[sizes[0]] <= at_most, f"{counts[sizes[0]]} queries, more than {at_most}"
