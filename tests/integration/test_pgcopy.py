"""``annotation.services.db.pgcopy``: the one COPY helper and the one batched reader that the
exports and the reports' data both use."""

import io

import pytest
from django.db import connection

from annotation.services.db.pgcopy import buffered, copy_to, read_batches, read_rows

pytestmark = pytest.mark.django_db

NUMBERS = "SELECT n, %s FROM generate_series(1, 7) AS n ORDER BY n"


def test_read_batches_hands_the_rows_over_a_batch_at_a_time():
    batches = list(read_batches(NUMBERS, ["x"], size=3))
    assert [len(batch) for batch in batches] == [3, 3, 1]
    assert list(read_rows(NUMBERS, ["x"], size=3)) == [(n, "x") for n in range(1, 8)]


def test_copy_to_binds_the_parameters_and_counts_the_rows():
    out = io.BytesIO()
    sink = buffered(out)
    with connection.cursor() as cursor:
        copied = copy_to(cursor, NUMBERS, ["it's"], "FORMAT csv", sink)
    sink.flush()
    assert copied == 7
    assert out.getvalue().decode().splitlines() == [f"{n},it's" for n in range(1, 8)]
