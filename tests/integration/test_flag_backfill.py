"""Migration 0012 turns the old site-wide participant flag into flags per study: where the
attention checks flagged responses, only those studies; a flag with no flagged response
(set by hand on a page that named no study) goes to every study of the participant."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotation", "0011_simulatability_records")]
AFTER = [("annotation", "0012_enrollment_flag")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_old_flags_are_copied_to_the_studies_they_came_from():
    apps = _migrate(BEFORE)
    try:
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
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
