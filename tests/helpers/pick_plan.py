"""The plan PostgreSQL chose for a participant's item pick, for the tests that hold the pick
to an index walk with no Sort over the items."""

from __future__ import annotations

from django.db import connection

from annotation.services.participation.assignment import assign_next_item


def plan_of_the_pick(participant, study) -> str:
    """Assign ``participant`` their next item in ``study``, capturing the statements sent;
    the pick (the one statement that locks an item, skipping those others hold) must have run
    once: its plan, as EXPLAIN prints it for the parameters it ran with."""
    sent: list[tuple[str, object]] = []
    with connection.execute_wrapper(
        lambda run, sql, params, *rest: sent.append((sql, params)) or run(sql, params, *rest)
    ):
        assert assign_next_item(participant=participant, study=study) is not None
    picks = [(sql, params) for sql, params in sent if "SKIP LOCKED" in sql and "annotation_item" in sql]
    assert len(picks) == 1, [sql for sql, _ in sent]  # the pick: lock, wrap-around and slot in one statement
    pick_sql, params = picks[0]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {pick_sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())
