"""The plan PostgreSQL chose for a participant's item pick, for the tests that hold the pick
to an index walk with no Sort over the items."""

from __future__ import annotations

from django.db import connection

from annotation.services.participation.assignment import assign_next_item


def plan_of_the_pick(participant, study, pick_sql: str) -> str:
    """Assign ``participant`` their next item in ``study``, capturing the statements sent;
    the one pick statement (``pick_sql``) must have run once: its plan, as EXPLAIN prints it
    for the parameters it ran with."""
    sent: list[tuple[str, object]] = []
    with connection.execute_wrapper(
        lambda run, sql, params, *rest: sent.append((sql, params)) or run(sql, params, *rest)
    ):
        assert assign_next_item(participant=participant, study=study) is not None
    picks = [params for sql, params in sent if sql == pick_sql]
    assert len(picks) == 1  # the pick: lock, wrap-around and slot in one statement
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {pick_sql}", picks[0])
        return "\n".join(row[0] for row in cursor.fetchall())
