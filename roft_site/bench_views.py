"""Anchor views for ``bench/load.py``, served only when ``BENCH_ANCHORS`` is on.

They give the load benchmark two floors measured on the same server settings as the
participant pages: the least a Django request costs (``hello``) and the least a submit
can cost (``locked_write``: lock one row, update it, commit). They touch only the
``bench_anchor`` table that the benchmark creates; a normal deployment never routes to them.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse

ANCHOR_TABLE = "bench_anchor"  # created and dropped by bench/load.py


def hello(request: HttpRequest) -> HttpResponse:
    return HttpResponse("hello", content_type="text/plain")


def locked_write(request: HttpRequest, row: int) -> HttpResponse:
    """One ``SELECT … FOR UPDATE`` of one row, one ``UPDATE``, one commit."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT n FROM {ANCHOR_TABLE} WHERE id = %s FOR UPDATE", [row])  # noqa: S608 - fixed name
        cursor.execute(f"UPDATE {ANCHOR_TABLE} SET n = n + 1 WHERE id = %s", [row])  # noqa: S608 - fixed name
    return HttpResponse("ok", content_type="text/plain")
