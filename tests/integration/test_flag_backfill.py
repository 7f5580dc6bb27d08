"""Migration 0012 turns the old site-wide participant flag into flags per study: where the
attention checks flagged responses, only those studies; a flag with no flagged response
(set by hand on a page that named no study) goes to every study of the participant.

The test runs on a copy of the test database (``CREATE DATABASE … TEMPLATE``), migrated back
to 0011 (every later migration undone, as a rollback would) and forward to 0012, then
dropped: the test database itself stays at the latest migration, and the twenty-odd
migrations after 0012 (with the other apps' that depend on them) are not applied again
after the test (8.4 CPU-s to 3.6 here)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0011_simulatability_records")]
AFTER = [("annotation", "0012_enrollment_flag")]


def _migrate(targets):
    executor = MigrationExecutor(connection)  # its loader reads the graph and what is applied
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@contextmanager
def copy_of_the_test_database() -> Iterator[None]:
    """Django's connection on a copy of the test database for the block, dropped after it."""
    original = connection.settings_dict["NAME"]
    copy = f"{original}_flags"
    quote = connection.ops.quote_name
    connection.close()  # a template database must have no other session: nor any an
    with connection._nodb_cursor() as cursor:  # earlier test's thread or worker left open
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [original]
        )
        cursor.execute(f"DROP DATABASE IF EXISTS {quote(copy)}")  # a crashed run's
        cursor.execute(f"CREATE DATABASE {quote(copy)} TEMPLATE {quote(original)}")
    connection.settings_dict["NAME"] = copy
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original
        with connection._nodb_cursor() as cursor:
            cursor.execute(f"DROP DATABASE {quote(copy)}")


def test_old_flags_are_copied_to_the_studies_they_came_from():
    with copy_of_the_test_database():
        apps = _migrate(BEFORE)
        Study = apps.get_model("annotation", "Study")
        Item = apps.get_model("annotation", "Item")
        Participant = apps.get_model("annotation", "Participant")
        Enrollment = apps.get_model("annotation", "Enrollment")
        Assignment = apps.get_model("annotation", "Assignment")
        Response = apps.get_model("annotation", "Response")
        now = timezone.now()
        studies = [Study.objects.create(slug=f"s{n}", title="t", kind="claim") for n in range(2)]
        items = [Item.objects.create(study=s, external_id="i", payload={}) for s in studies]
        checked = Participant.objects.create(public_id="checked", flagged=True, flag_reason="failed checks")
        by_hand = Participant.objects.create(public_id="byhand", flagged=True, flag_reason="rude")
        for participant in (checked, by_hand):
            for study, item in zip(studies, items, strict=True):
                Enrollment.objects.create(participant=participant, study=study)
                assignment = Assignment.objects.create(
                    study=study,
                    item=item,
                    participant=participant,
                    position=1,
                    assigned_at=now,
                    expires_at=now,
                    status="answered",
                )
                flagged = participant == checked and study == studies[0]
                Response.objects.create(
                    assignment=assignment,
                    study=study,
                    item=item,
                    participant=participant,
                    answer={},
                    answered_at=now,
                    flagged=flagged,
                )
        apps = _migrate(AFTER)
        Enrollment = apps.get_model("annotation", "Enrollment")
        Response = apps.get_model("annotation", "Response")
        marks = {
            (e.participant.public_id, e.study.slug): (e.flagged, e.flag_reason)
            for e in Enrollment.objects.select_related("participant", "study")
        }
        assert marks == {
            ("checked", "s0"): (True, "failed checks"),
            ("checked", "s1"): (False, ""),
            ("byhand", "s0"): (True, "rude"),
            ("byhand", "s1"): (True, "rude"),
        }
        # The per-response copy agrees with the enrollment's flag.
        copies = {(r.participant.public_id, r.study.slug): r.flagged for r in Response.objects.all()}
        assert copies == {key: flagged for key, (flagged, _) in marks.items()}
